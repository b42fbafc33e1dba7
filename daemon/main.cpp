// daemon/main.cpp — stratad's entry point: the command line, the configuration, then the
// daemon's life (daemon.h). Exit status: 0 stopped cleanly, 1 could not start or stop
// cleanly (configuration, socket, model, saving sessions), 2 usage error.
#include <csignal>
#include <cstdlib>
#include <cstdio>

#include "host/daemon.h"
#include "host/ini.h"
#include "host/log.h"
#include "host/options.h"
#include "host/settings.h"

namespace daemon_ns = strata::daemon;

int main(int argc, char** argv) {
    daemon_ns::Options options;
    try {
        options = daemon_ns::parse_options(argc, argv);
    } catch (const daemon_ns::UsageError& error) {
        std::fprintf(stderr, "stratad: %s\n", error.what());
        return 2;
    }
    if (options.help) {
        std::fputs(daemon_ns::usage_text().c_str(), stdout);
        return 0;
    }
    if (options.version) {
        std::puts("stratad " STRATA_VERSION);
        return 0;
    }
    daemon_ns::Settings settings;
    try {
        settings = daemon_ns::load_settings(options.config_path, options.config_required, options.overrides);
    } catch (const daemon_ns::ConfigError& error) {
        daemon_ns::log::error("configuration error: ", error.what());
        return 1;
    }
    daemon_ns::log::set_level(settings.log_level);
    // Test hook: the next N reads of streamed weights after loading fail with EIO, one read
    // in flight at a time so that they hit the same read (beyond its retries).
    if (const char* faults = std::getenv("STRATA_TEST_READ_FAULTS")) {
        settings.engine.memory.stream.fault_count = std::atoi(faults);
        settings.engine.memory.stream.queue_depth = 1;
    }
    // Test hook: the first 8 reads of streamed weights after the resident layers are in take
    // this many ms each (a hung disk: the engine makes no progress meanwhile).
    if (const char* stall = std::getenv("STRATA_TEST_READ_STALL_MS")) {
        settings.engine.memory.stream.fault_count = 8;
        settings.engine.memory.stream.fault_stall_ms = std::atoi(stall);
    }
    if (options.check_config) {
        for (const std::string& line : daemon_ns::describe(settings))
            std::puts(line.c_str());
        return 0;
    }
    std::signal(SIGPIPE, SIG_IGN);
    return daemon_ns::Daemon(std::move(options), std::move(settings)).run();
}
