// daemon/host/options.cpp — the command line of stratad (see options.h).
#include "host/options.h"

#include <array>
#include <string_view>

namespace strata::daemon {
namespace {

// Options that set one configuration key.
struct KeyOption {
    std::string_view long_name;
    char short_name;  // 0 = none
    std::string_view key;
};

constexpr std::array<KeyOption, 9> kKeyOptions{{
    {"--model", 'm', "model.path"},
    {"--socket", 's', "server.socket"},
    {"--threads", 't', "engine.threads"},
    {"--context", 0, "engine.context"},
    {"--chat-template", 0, "engine.chat_template"},
    {"--state-dir", 0, "sessions.state_dir"},
    {"--memory-budget", 0, "memory.budget"},
    {"--memory-mode", 0, "memory.mode"},
    {"--log-level", 0, "log.level"},
}};

bool matches(std::string_view arg, std::string_view long_name, char short_name) {
    return arg == long_name || (short_name != 0 && arg.size() == 2 && arg[0] == '-' && arg[1] == short_name);
}

// The value of an option given as "--name VALUE", "--name=VALUE" or "-x VALUE".
class Args {
public:
    Args(int argc, char** argv) : argv_(argv + 1, argv + argc) {}
    bool done() const { return next_ >= argv_.size(); }
    std::string_view take() {
        std::string_view arg = argv_[next_++];
        inline_value_.reset();
        if (arg.starts_with("--") && arg.find('=') != std::string_view::npos) {
            inline_value_ = std::string(arg.substr(arg.find('=') + 1));
            arg = arg.substr(0, arg.find('='));
        }
        return arg;
    }
    std::string value(std::string_view option) {
        if (inline_value_)
            return *inline_value_;
        if (done())
            throw UsageError(std::string(option) + " needs a value");
        return argv_[next_++];
    }
    bool had_inline_value() const { return inline_value_.has_value(); }

private:
    std::vector<std::string> argv_;
    size_t next_ = 0;
    std::optional<std::string> inline_value_;
};

void flag(Args& args, std::string_view option, bool& target) {
    if (args.had_inline_value())
        throw UsageError(std::string(option) + " takes no value");
    target = true;
}

}  // namespace

Options parse_options(int argc, char** argv) {
    Options options;
    Args args(argc, argv);
    while (!args.done()) {
        const std::string_view arg = args.take();
        if (matches(arg, "--config", 'c')) {
            options.config_path = args.value(arg);
            options.config_required = true;
        } else if (arg == "--set") {
            const std::string assignment = args.value(arg);
            const size_t eq = assignment.find('=');
            if (eq == std::string::npos)
                throw UsageError("--set expects section.key=value, got '" + assignment + "'");
            options.overrides.push_back({assignment.substr(0, eq), assignment.substr(eq + 1), "--set " + assignment});
        } else if (arg == "--check-config") {
            flag(args, arg, options.check_config);
        } else if (matches(arg, "--help", 'h')) {
            flag(args, arg, options.help);
        } else if (arg == "--version") {
            flag(args, arg, options.version);
        } else {
            bool known = false;
            for (const KeyOption& o : kKeyOptions) {
                if (!matches(arg, o.long_name, o.short_name))
                    continue;
                options.overrides.push_back({std::string(o.key), args.value(arg), std::string(o.long_name)});
                known = true;
            }
            if (!known)
                throw UsageError("unknown option '" + std::string(arg) + "' (see stratad --help)");
        }
    }
    return options;
}

std::string usage_text() {
    return "Usage: stratad [OPTIONS]\n"
           "Serve a GGUF language model to many users over a Unix socket.\n"
           "\n"
           "  -c, --config PATH         configuration file (default " +
           std::string(kDefaultConfigPath) +
           ")\n"
           "  -m, --model FILE          the model to load               (model.path)\n"
           "  -s, --socket PATH         the socket to listen on         (server.socket)\n"
           "  -t, --threads N           compute threads, 0 = cores      (engine.threads)\n"
           "      --context N           tokens of context per session   (engine.context)\n"
           "      --chat-template NAME  chat template family            (engine.chat_template)\n"
           "      --state-dir DIR       where sessions are saved        (sessions.state_dir)\n"
           "      --memory-budget SIZE  memory budget, e.g. 6G or auto  (memory.budget)\n"
           "      --memory-mode MODE    auto, resident or streamed      (memory.mode)\n"
           "      --log-level LEVEL     err, warning, notice, info, debug (log.level)\n"
           "      --set KEY=VALUE       set any key of strata.conf(5), e.g. --set limits.max_tokens=512\n"
           "      --check-config        check the configuration, print it and exit\n"
           "  -h, --help                this text\n"
           "      --version             the version\n"
           "\n"
           "Signals: SIGHUP reloads the configuration, SIGTERM/SIGINT stop gracefully.\n"
           "See stratad(8), strata.conf(5) and strata-protocol(7).\n";
}

}  // namespace strata::daemon
