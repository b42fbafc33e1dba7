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
    return RpcClient::connect(socket_candidates(options.socket, socket_environment(), exists));
}

int run_generate(const Options& options) {
    std::optional<std::string> piped;
    if (!::isatty(STDIN_FILENO)) piped = read_all(STDIN_FILENO);
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
                                         });
    if (last != '\n') write_stdout("\n");
    if (options.verbose && !outcome.result.empty()) std::fputs(render_speed(outcome.result).c_str(), stderr);
    return outcome.cancelled ? 130 : 0;
}

}  // namespace strata::client
