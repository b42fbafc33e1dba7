// client/strata/cmd_generate.cpp — `strata [PROMPT...]`: one completion, streamed.
#include <unistd.h>

#include <boost/json/value.hpp>
#include <cerrno>
#include <cstdio>
#include <system_error>

#include "commands.h"
#include "io.h"
#include "prompt.h"
#include "render.h"

namespace strata::client {

namespace {

std::string read_all(int fd) {
    std::string out;
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::system_error(errno, std::generic_category(), "reading standard input");
        if (n == 0) return out;
        out.append(chunk, static_cast<size_t>(n));
    }
}

}  // namespace

RpcClient connect_for(const Options& options) {
    auto exists = [](const std::string& path) { return ::access(path.c_str(), F_OK) == 0; };
    const SocketEnvironment env = socket_environment();
    const bool pointed = options.socket || env.strata_socket;  // else the usual places are the candidates
    return RpcClient::connect(socket_candidates(options.socket, env, exists),
                              pointed ? socket_candidates(std::nullopt, {std::nullopt, env.xdg_runtime_dir}, exists)
                                      : std::vector<SocketCandidate>{});
}

int run_generate(const Options& given) {
    const Options options = with_text(given);
    std::optional<std::string> piped;
    if (!::isatty(STDIN_FILENO)) piped = as_text(read_all(STDIN_FILENO), options.encoding, "standard input");
    const std::string prompt = assemble_prompt(options.words, piped);

    signals::install();
    RpcClient client = connect_for(options);
    std::string chat_template;
    if (!options.raw) {
        const boost::json::object info = client.call("model.info");
        if (const auto* t = info.if_contains("chat_template"); t != nullptr && t->is_string())
            chat_template = t->get_string();
    }
    client.echo_lines(options.json);
    char last = '\n';
    const auto outcome = client.generate(generate_params(options, prompt, use_chat(options, chat_template), true),
                                         [&](std::string_view text) {
                                             write_stdout(text);
                                             if (!text.empty()) last = text.back();
                                         },
                                         reasoning_writer(options.show_reasoning));
    if (last != '\n') write_stdout("\n");
    if (options.verbose && !outcome.result.empty()) std::fputs(render_speed(outcome.result).c_str(), stderr);
    if (outcome.cut_off) {
        std::fputs("strata: the daemon cut the reply off (it was cancelled: the daemon is stopping or a limit was reached)\n",
                   stderr);
        return kExitCutOff;
    }
    if (outcome.timed_out) {
        std::fputs(kTimeoutNote, stderr);
        return kExitTimeout;
    }
    return outcome.cancelled ? 130 : 0;
}

}  // namespace strata::client
