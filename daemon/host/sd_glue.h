// daemon/host/sd_glue.h — stratad's use of systemd's sd-daemon interface: the socket passed by
// socket activation (sd_listen_fds), state notifications (READY=1, STATUS=, STOPPING=1,
// RELOADING=1, WATCHDOG=1) and the watchdog interval. Everything is a no-op when the
// daemon does not run under systemd. Owns: those calls. Must not touch: timing of them
// (daemon.cpp decides when).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace strata::daemon::sd {

// The Unix stream socket systemd passed, if any. Throws std::runtime_error when sockets
// were passed but none of them is a listening Unix stream socket.
std::optional<int> listen_fd();

void notify(const std::string& state);  // e.g. "READY=1\nSTATUS=serving"

// How often WATCHDOG=1 is due (half of WatchdogSec=), when the watchdog is on.
std::optional<std::chrono::microseconds> watchdog_interval();

}  // namespace strata::daemon::sd
