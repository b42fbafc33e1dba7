// client/strata/options.h — the strata command line: which command runs, with which
// prompt words, session, socket and sampling settings. Parsing only: nothing here touches
// the terminal, the environment or the socket (see strata(1) for the user's view).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::client {

// A command line strata cannot act on; main() prints it with a usage hint and exits 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Command {
    Generate,       // strata [PROMPT...]: one completion
    Chat,           // strata chat: interactive turns
    Status,         // strata status
    Model,          // strata model
    SessionsList,   // strata sessions [list]
    SessionsShow,   // strata sessions show NAME
    SessionsRemove, // strata sessions rm NAME
    SessionsReset,  // strata sessions reset NAME
    Help,
    Version,
};

// Sampling settings the user gave; absent ones are left to the daemon's defaults.
struct Sampling {
    std::optional<double> temperature, top_p, min_p, repeat_penalty;
    std::optional<int64_t> top_k, max_tokens;
    std::optional<uint64_t> seed;
    std::vector<std::string> stop;
    std::optional<std::string> speculative;  // --speculative off|ngram|draft|auto

    bool any() const;
};

// How input bytes become the UTF-8 text the daemon needs (--encoding).
enum class Encoding {
    Utf8,     // utf-8: invalid bytes are an error naming their offset
    Latin1,   // latin1: ISO-8859-1, every byte converted
    Replace,  // replace: UTF-8, each invalid sequence becomes U+FFFD
};

struct Options {
    Command command = Command::Generate;
    std::vector<std::string> words;       // Generate: the prompt words
    std::string target;                   // sessions show/rm/reset: the session name
    std::optional<std::string> session;   // -s NAME
    std::optional<std::string> socket;    // --socket PATH
    std::optional<std::string> system;    // --system TEXT
    bool raw = false;                     // --raw: never use the chat template
    bool show_reasoning = false;          // --show-reasoning: a reasoning model's thinking on stderr
    bool json = false;                    // --json: print the protocol lines as received
    bool verbose = false;                 // -v: token rates on stderr
    Encoding encoding = Encoding::Utf8;   // --encoding: of the prompt, standard input and --system
    std::optional<double> timeout;        // --timeout SECONDS: each reply's deadline
    Sampling sampling;
};

// Parses argv[1..]; throws UsageError naming the offending argument.
Options parse_options(const std::vector<std::string>& args);

// The --help text.
const char* usage_text();

}  // namespace strata::client
