// client/strata/main.cpp — strata, the command-line client of stratad: parses the command
// line, runs the command, and maps failures to the exit codes of strata(1).
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.h"
#include "io.h"
#include "options.h"
#include "rpc.h"

namespace {

using namespace strata::client;

int run(const Options& options) {
    switch (options.command) {
    case Command::Help: std::fputs(usage_text(), stdout); return 0;
    case Command::Version: std::puts("strata " STRATA_VERSION); return 0;
    case Command::Generate: return run_generate(options);
    case Command::Chat: return run_chat(options);
    default: return run_query(options);
    }
}

int fail(const char* message, int exit_code, const char* hint = "") {
    std::fprintf(stderr, "strata: %s%s\n", message, hint);
    return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse_options(std::vector<std::string>(argv + 1, argv + argc)));
    } catch (const UsageError& e) {
        return fail(e.what(), 2, "\nTry 'strata --help'.");
    } catch (const ConnectError& e) {
        return fail(e.what(), 3);
    } catch (const DaemonError& e) {
        return fail(e.what(), 1);
    } catch (const BrokenConnection& e) {
        return fail(e.what(), 4);
    } catch (const Interrupted& e) {
        return 128 + e.signal;
    } catch (const StdoutClosed&) {
        std::signal(SIGPIPE, SIG_DFL);  // end as a writer into a closed pipe ends: by SIGPIPE
        std::raise(SIGPIPE);
        return 128 + SIGPIPE;
    } catch (const std::exception& e) {
        return fail(e.what(), 1);
    }
}
