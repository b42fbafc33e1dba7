// daemon/host/daemon.h — stratad's life: open the socket (and the TCP listener of
// server.listen, with the API keys of server.api_keys_file), load the model, serve until a
// signal; SIGHUP reloads the configuration (live keys applied, others logged as needing a
// restart) and re-reads the API keys file (a bad one keeps the keys in use); SIGTERM/SIGINT
// stop accepting on both listeners (a load balancer's health checks and new connections go
// elsewhere; /health answers 503 on connections still open), give in-flight requests
// server.shutdown_grace to finish (a second signal cancels them at once), save sessions
// and exit 0. While it serves, the memory watch (host/pressure.h) lowers and raises the
// engine's memory budget as others need the memory (memory.follow_pressure), and a reload
// applies memory.budget the same way. Reports
// READY/STATUS/RELOADING/STOPPING/WATCHDOG to systemd (WATCHDOG only while the engine is
// idle or making progress). Owns: that sequence and its timers.
// Must not touch: protocols (connections), the key table (settings.h).
#pragma once

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "host/options.h"
#include "host/pressure.h"
#include "host/settings.h"
#include "transport/server.h"
#include "transport/api_keys.h"
#include "transport/asio.h"
#include "transport/listener.h"

namespace strata::daemon {

class Daemon {
public:
    Daemon(Options options, Settings settings);
    ~Daemon();

    int run();  // the exit status

private:
    bool load();
    bool open_listeners();
    void reload_api_keys();
    void wait_for_signal();
    void on_signal(int signal);
    void reload();
    void follow_memory(const Settings& settings);
    void begin_shutdown(int signal);
    void engine_stopped(const std::string& error);
    void wait_for_connections(std::chrono::steady_clock::time_point deadline);
    void report_status();
    void feed_watchdog(std::chrono::microseconds interval);

    Options options_;
    Settings settings_;
    // Declared before io_ so that they outlive it: destroying io_ destroys the handlers
    // that still hold connections, whose destructors reach the server.
    std::unique_ptr<engine::Engine> engine_;
    std::unique_ptr<PressureWatch> pressure_;  // stops before the engine does
    std::unique_ptr<Server> server_;
    asio::io_context io_{1};
    asio::signal_set signals_;
    asio::steady_timer status_timer_;
    asio::steady_timer watchdog_timer_;
    asio::steady_timer drain_timer_;
    Listener listener_;
    Listener tcp_listener_;
    ApiKeys api_keys_;  // until the server takes them
    std::thread stopper_;
    std::string last_status_;
    int exit_status_ = 0;
    bool watchdog_withheld_ = false;  // the engine stalled: WATCHDOG=1 not sent
};

}  // namespace strata::daemon
