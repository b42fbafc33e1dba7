// daemon/host/daemon.cpp — start-up, signals, reload and shutdown of stratad (see daemon.h).
#include "host/daemon.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>

#include "engine/state_dir.h"
#include "host/log.h"
#include "host/protocols.h"
#include "host/sd_glue.h"

namespace strata::daemon {
namespace {

constexpr auto kStatusInterval = std::chrono::seconds(2);
constexpr auto kFinalFlush = std::chrono::seconds(2);  // after the engine stopped: answers still being written

std::string status_line(const figures::Snapshot& s) {
    char counts[160];
    std::snprintf(counts, sizeof counts, "%.0f connection(s), %.0f running, %.0f queued, %.0f session(s), %.1f tok/s",
                  s.number("connections"), s.number("requests_running"), s.number("requests_queued"),
                  s.number("sessions"), s.number("generate_tps_recent"));
    return "Serving " + s.text("model") + " (" + s.text("weights_mode") + "): " + counts;
}

const char* signal_name(int signal) {
    switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
    }
}

}  // namespace

Daemon::Daemon(Options options, Settings settings)
    : options_(std::move(options)),
      settings_(std::move(settings)),
      signals_(io_, SIGTERM, SIGINT, SIGHUP),
      status_timer_(io_),
      watchdog_timer_(io_),
      drain_timer_(io_),
      listener_(io_),
      tcp_listener_(io_) {}

Daemon::~Daemon() {
    if (stopper_.joinable())
        stopper_.join();
}

int Daemon::run() {
    if (!load())
        return 1;
    server_ = std::make_unique<Server>(io_, *engine_, settings_, std::move(api_keys_));
    listener_.start([this](Socket socket) { greet(*server_, std::move(socket), hand_over); });
    std::string where = listener_.where();
    if (tcp_listener_.is_open()) {
        tcp_listener_.start([this](Socket socket) { greet(*server_, std::move(socket), hand_over); });
        where += " and " + tcp_listener_.where();
    }
    const figures::Snapshot status = server_->status();
    log::notice("stratad ", STRATA_VERSION, " serving ", server_->model_id(), " (", server_->model().arch, ", ",
                server_->model().n_params, " parameters, context ", server_->model().context, ", ",
                status.text("weights_mode"), ", ", status.number("threads"), " threads) on ", where);
    if (!status.text("memory_plan").empty())
        log::info("memory plan: ", status.text("memory_plan"));
    last_status_ = "STATUS=" + status_line(status);
    follow_memory(settings_);
    sd::notify("READY=1\n" + last_status_);
    wait_for_signal();
    status_timer_.expires_after(kStatusInterval);
    status_timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec)
            report_status();
    });
    if (const auto interval = sd::watchdog_interval())
        feed_watchdog(*interval);
    io_.run();
    if (stopper_.joinable())
        stopper_.join();
    log::notice("stratad stopped");
    return exit_status_;
}

// The Unix socket, and the TCP listener with its API keys when server.listen is set.
bool Daemon::open_listeners() {
    try {
        const ServerSettings& server = settings_.server;
        if (!server.api_keys_file.empty())
            api_keys_ = ApiKeys::load(server.api_keys_file, geteuid());
        listener_.open(server.socket);
        if (!server.listen.host.empty()) {
            tcp_listener_.open_tcp(server.listen);
            if (server.api_keys_file.empty())
                log::warning("serving TCP on ", server.listen.show(),
                             " without API keys (server.tcp_without_api_keys): anyone who reaches it may use the daemon");
        }
    } catch (const std::exception& error) {
        log::error("cannot start: ", error.what());
        listener_.stop();
        return false;
    }
    return true;
}

bool Daemon::load() {
    if (!open_listeners())
        return false;
    log::info("loading ", settings_.engine.model_path);
    settings_.engine.log = [](int priority, const std::string& message) {
        const auto level = static_cast<log::Level>(std::clamp(priority, 3, 7));
        if (log::enabled(level))
            log::write(level, message);
    };
    sd::notify("STATUS=Loading " + settings_.engine.model_path);
    try {
        engine_ = std::make_unique<engine::Engine>(settings_.engine);
    } catch (const engine::StateDirError& error) {
        log::error("cannot start: ", error.what());
        sd::notify(std::string("STATUS=Cannot start: ") + error.what());
        listener_.stop();
        tcp_listener_.stop();
        return false;
    } catch (const std::exception& error) {
        log::error("cannot load the model ", settings_.engine.model_path, ": ", error.what());
        sd::notify(std::string("STATUS=Cannot load the model: ") + error.what());
        listener_.stop();
        tcp_listener_.stop();
        return false;
    }
    return true;
}

void Daemon::wait_for_signal() {
    signals_.async_wait([this](boost::system::error_code ec, int signal) {
        if (ec)
            return;
        on_signal(signal);
        wait_for_signal();
    });
}

void Daemon::on_signal(int signal) {
    if (signal == SIGHUP) {
        reload();
        return;
    }
    if (!server_->stopping()) {
        begin_shutdown(signal);
        return;
    }
    log::notice(signal_name(signal), " again: cancelling the requests still running");
    server_->for_each_connection([](Connection& c) { c.cancel_requests(); });
}

void Daemon::reload() {
    sd::notify("RELOADING=1");
    try {
        const Settings fresh = load_settings(options_.config_path, options_.config_required, options_.overrides);
        const SettingsChange change = compare(server_->settings(), fresh);
        for (const std::string& line : change.live)
            log::notice("reload: ", line);
        for (const std::string& line : change.restart)
            log::warning("reload: ", line, " needs a restart; the running value stays");
        if (change.live.empty() && change.restart.empty())
            log::notice("reload: nothing changed");
        const Settings merged = merge_live(server_->settings(), fresh);
        engine_->update_limits(merged.engine.limits);
        if (!pressure_ && merged.engine.memory.budget != server_->settings().engine.memory.budget)
            engine_->set_memory_budget(weights::resolve_budget(merged.engine.memory.budget));
        follow_memory(merged);
        log::set_level(merged.log_level);
        server_->replace_settings(merged);
    } catch (const std::exception& error) {
        log::error("reload failed, the running configuration stays: ", error.what());
    }
    reload_api_keys();
    sd::notify("READY=1\n" + last_status_);
}

// Starts, reconfigures or stops the memory watch: its cap is memory.budget as configured
// (none for auto: the limit it reads), and it starts from the budget the engine runs with.
void Daemon::follow_memory(const Settings& settings) {
    if (!settings.memory_watch.follow_pressure) {
        if (pressure_) log::notice("memory: no longer following memory pressure (memory.follow_pressure)");
        pressure_.reset();
        return;
    }
    const std::string& configured = settings.engine.memory.budget;
    const uint64_t cap = configured.empty() ? BudgetPolicy::kNoCap : weights::resolve_budget(configured).bytes;
    const std::chrono::milliseconds regrow(settings.memory_watch.regrow_after_ms);
    if (pressure_) {
        pressure_->reconfigure(cap, regrow);
        return;
    }
    const auto start = static_cast<uint64_t>(engine_->status().number("memory_budget_bytes"));
    pressure_ = std::make_unique<PressureWatch>(cap, start, regrow, [this](const weights::Budget& b) { engine_->set_memory_budget(b); });
    log::info("memory: following memory pressure through ", pressure_->source());
}

void Daemon::reload_api_keys() {
    const std::string& path = server_->settings().server.api_keys_file;
    if (path.empty())
        return;
    try {
        ApiKeys keys = ApiKeys::load(path, geteuid());
        log::notice("reload: ", keys.size(), " API key(s) from ", path);
        server_->replace_api_keys(std::move(keys));
    } catch (const ApiKeysError& error) {
        log::error("reload: the API keys in use stay: ", error.what());
    }
}

void Daemon::begin_shutdown(int signal) {
    const uint32_t grace_ms = server_->settings().server.shutdown_grace_ms;
    server_->begin_stopping();
    listener_.stop();
    tcp_listener_.stop();
    // Said once the listeners are closed, so that whoever reads "stopping" (the log, systemd)
    // finds new connections refused; daemon_tcp_test once connected in between.
    log::notice(signal_name(signal), ": stopping; running requests have ", grace_ms, " ms to finish");
    sd::notify("STOPPING=1\nSTATUS=Stopping");
    stopper_ = std::thread([this, grace_ms] {
        std::string error;
        try {
            engine_->shutdown(static_cast<int>(grace_ms));
        } catch (const std::exception& e) {
            error = e.what();
        }
        asio::post(io_, [this, error] { engine_stopped(error); });
    });
}

void Daemon::engine_stopped(const std::string& error) {
    if (!error.empty()) {
        log::error("stopping the engine failed: ", error);
        exit_status_ = 1;
    }
    server_->for_each_connection([](Connection& c) { c.close_when_idle(); });
    wait_for_connections(std::chrono::steady_clock::now() + kFinalFlush);
}

void Daemon::wait_for_connections(std::chrono::steady_clock::time_point deadline) {
    if (server_->open_connections() == 0 || std::chrono::steady_clock::now() >= deadline) {
        io_.stop();
        return;
    }
    drain_timer_.expires_after(std::chrono::milliseconds(20));
    drain_timer_.async_wait([this, deadline](boost::system::error_code ec) {
        if (!ec)
            wait_for_connections(deadline);
    });
}

void Daemon::report_status() {
    const std::string line = "STATUS=" + status_line(server_->status());
    if (line != last_status_) {
        sd::notify(line);
        last_status_ = line;
    }
    status_timer_.expires_after(kStatusInterval);
    status_timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec)
            report_status();
    });
}

// WATCHDOG=1 says the engine works: it is sent only while the engine waits for work or
// makes progress. An engine stuck longer than WatchdogSec (twice the interval) is not
// vouched for, and systemd restarts the daemon.
void Daemon::feed_watchdog(std::chrono::microseconds interval) {
    const auto stalled = engine_->stalled_for();
    if (stalled < 2 * interval) {
        if (watchdog_withheld_)
            log::notice("the engine makes progress again; feeding the watchdog");
        watchdog_withheld_ = false;
        sd::notify("WATCHDOG=1");
    } else if (!watchdog_withheld_) {
        watchdog_withheld_ = true;
        log::error("the engine has made no progress for ",
                   std::chrono::duration_cast<std::chrono::milliseconds>(stalled).count(),
                   " ms; not feeding the systemd watchdog");
    }
    watchdog_timer_.expires_after(interval);
    watchdog_timer_.async_wait([this, interval](boost::system::error_code ec) {
        if (!ec)
            feed_watchdog(interval);
    });
}

}  // namespace strata::daemon
