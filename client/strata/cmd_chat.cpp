// client/strata/cmd_chat.cpp — `strata chat`: reads turns from standard input one line at a
// time and streams each reply. Without -s the conversation lives in a temporary session
// that is deleted at the end. Ctrl-C stops the current reply (or drops the line being
// typed); Ctrl-D ends the chat.
#include <unistd.h>

#include <boost/json/value.hpp>
#include <csignal>
#include <cstdio>
#include <random>

#include "commands.h"
#include "io.h"
#include "prompt.h"
#include "render.h"

namespace strata::client {

namespace {

std::string temporary_session_name() {
    std::random_device rd;
    char buf[48];
    std::snprintf(buf, sizeof buf, "chat-%d-%08x", static_cast<int>(::getpid()), static_cast<unsigned>(rd()));
    return buf;
}

// Deletes the temporary session however the chat ends.
class TemporarySession {
public:
    TemporarySession(RpcClient& client, std::string name) : client_(client), name_(std::move(name)) {}
    TemporarySession(const TemporarySession&) = delete;
    TemporarySession& operator=(const TemporarySession&) = delete;
    ~TemporarySession() {
        try {
            client_.echo_lines(false);
            client_.call("session.delete", {{"session", name_}});
        } catch (...) {  // the session may never have been created; the daemon may be gone
        }
    }

private:
    RpcClient& client_;
    std::string name_;
};

struct ChatState {
    bool chat = false;           // chat template (messages) or raw text
    bool first_turn = true;
    bool failed = false;         // some turn got an error from the daemon
    bool cut_off = false;        // some reply was cancelled by the daemon
    bool timed_out = false;      // some reply reached its deadline
    bool interactive = false;    // standard input is a terminal: show the prompt
};

// Sends one turn and streams its reply.
void run_turn(RpcClient& client, const Options& options, ChatState& state, const std::string& line) {
    const std::string text = state.chat || state.first_turn ? line : "\n" + line;
    char last = '\n';
    try {
        const auto outcome = client.generate(generate_params(options, text, state.chat, state.first_turn),
                                             [&](std::string_view piece) {
                                                 write_stdout(piece);
                                                 if (!piece.empty()) last = piece.back();
                                             },
                                             reasoning_writer(options.show_reasoning));
        if (last != '\n') write_stdout("\n");
        if (outcome.cancelled && state.interactive) std::fputs("[reply stopped]\n", stderr);
        if (outcome.cut_off) {
            std::fputs("strata: the daemon cut the reply off (the daemon is stopping or a limit was reached)\n", stderr);
            state.cut_off = true;
        }
        if (outcome.timed_out) {
            std::fputs(kTimeoutNote, stderr);
            state.timed_out = true;
        }
        if (options.verbose && !outcome.result.empty()) std::fputs(render_speed(outcome.result).c_str(), stderr);
    } catch (const DaemonError& e) {
        if (last != '\n') write_stdout("\n");
        std::fprintf(stderr, "strata: %s\n", e.what());
        state.failed = true;
    }
    state.first_turn = false;
}

std::string banner(const boost::json::object& info, bool chat) {
    const auto* name = info.if_contains("name");
    std::string model = name != nullptr && name->is_string() ? std::string(name->get_string()) : "the model";
    std::string mode = chat ? "chat template " + std::string(info.at("chat_template").get_string()) : "raw text";
    return "strata chat with " + model + " (" + mode + "). Ctrl-D ends, Ctrl-C stops a reply.\n";
}

}  // namespace

int run_chat(const Options& given) {
    const Options options = with_text(given);
    signals::install();
    RpcClient client = connect_for(options);
    const boost::json::object info = client.call("model.info");
    const auto* tmpl = info.if_contains("chat_template");
    ChatState state;
    state.chat = use_chat(options, tmpl != nullptr && tmpl->is_string() ? std::string(tmpl->get_string()) : "");
    state.interactive = ::isatty(STDIN_FILENO) != 0;

    Options turn_options = options;
    std::optional<TemporarySession> temporary;
    if (!options.session) {
        turn_options.session = temporary_session_name();
        temporary.emplace(client, *turn_options.session);
    }
    client.echo_lines(options.json);
    if (state.interactive) std::fputs(banner(info, state.chat).c_str(), stderr);

    LineReader input(STDIN_FILENO);
    for (size_t line_number = 1;; ++line_number) {
        if (state.interactive) std::fputs("> ", stderr);
        std::string line;
        const LineReader::Got got = input.next(line);
        if (got == LineReader::Got::Eof) break;
        if (got == LineReader::Got::Signal) {
            const int sig = signals::take();
            if (sig != 0 && sig != SIGINT) throw Interrupted{sig};
            if (state.interactive) std::fputs("\n", stderr);
            continue;
        }
        if (line.empty()) continue;
        run_turn(client, turn_options, state,
                 as_text(std::move(line), options.encoding, "line " + std::to_string(line_number) + " of standard input"));
    }
    if (state.interactive) std::fputs("\n", stderr);
    return state.failed ? 1 : state.cut_off ? kExitCutOff : state.timed_out ? kExitTimeout : 0;
}

}  // namespace strata::client
