// client/strata/prompt.h — what strata asks the daemon for: the prompt assembled from the
// arguments and standard input, and the params object of a `generate` request (a chat
// message or a raw prompt, the session, the sampling settings). Pure functions: no I/O.
#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <vector>

#include "options.h"

namespace strata::client {

// The arguments joined by spaces and/or the piped text (trailing newlines removed); when both
// are there: the arguments, a blank line, then the piped text. Throws UsageError when both
// are empty.
std::string assemble_prompt(const std::vector<std::string>& words, const std::optional<std::string>& piped);

// `bytes` read from `where` ("standard input", "argument 2", ...) as UTF-8 text, by
// options.encoding. Throws std::runtime_error naming where, the offset and the bad byte
// (and --encoding) when the bytes are not UTF-8 and the encoding is utf-8.
std::string as_text(std::string bytes, Encoding encoding, const std::string& where);

// The options with the prompt words and --system as text (as_text); throws like it.
Options with_text(Options options);

// One turn's `generate` params. `chat`: the text goes as a user message (after the
// --system message when `with_system`); otherwise as a raw prompt, after the --system text
// and a blank line when `with_system`.
boost::json::object generate_params(const Options& options, const std::string& text, bool chat, bool with_system);

// Whether a model with this `model.info` chat_template gets chat messages (not with --raw).
bool use_chat(const Options& options, const std::string& chat_template);

}  // namespace strata::client
