// daemon/host/settings.h — everything stratad is configured with: strata.conf, then the
// command-line overrides on top. Owns: the table of keys (name, default, range, whether
// SIGHUP applies it live), value syntax (sizes "6G", durations "10s", booleans, TCP
// addresses), the
// default socket path, and the comparison that tells SIGHUP which changes need a restart.
// Must not touch: INI syntax (ini.h), the engine's use of its Config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.h"
#include "host/log.h"

namespace strata::daemon {

// server.listen: "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:8080" (port 0: any free one).
struct ListenAddress {
    std::string host;  // an IPv4 or IPv6 address, without brackets; "" = no TCP listener
    uint16_t port = 0;
    std::string show() const;  // as written: "[::1]:8080"; "" when off
};
// Throws std::invalid_argument saying what is wrong.
ListenAddress parse_listen_address(std::string_view text);

struct ServerSettings {
    std::string socket;                        // "" until resolved: see default_socket_path()
    ListenAddress listen;                      // the TCP listener serving HTTP; off by default
    std::string api_keys_file;                 // "KEY NAME" lines: who may use the TCP listener
    bool tcp_without_api_keys = false;         // insecure: TCP without keys, everyone is user "anonymous"
    bool tcp_jsonrpc = false;                  // the native protocol is served over TCP too
    uint32_t max_connections = 256;
    uint32_t max_connections_per_user = 64;    // open connections of one uid (refused at once beyond)
    uint32_t idle_timeout_ms = 30000;          // to send the first request, and to finish any request begun
    uint64_t max_request_bytes = 1 << 20;      // a native request line, or an HTTP body
    uint32_t max_json_depth = 64;
    uint32_t max_requests_per_connection = 16; // generate requests in flight on one connection
    uint64_t max_output_buffer = 4 << 20;      // unsent bytes per connection before it is dropped
    uint32_t shutdown_grace_ms = 10000;        // SIGTERM: in-flight requests may finish this long
};

// Following memory pressure while serving (host/pressure.h).
struct MemoryWatchSettings {
    bool follow_pressure = true;      // lower the budget under pressure, raise it when it is gone
    uint32_t regrow_after_ms = 30000; // without a lowering, before the budget rises again
};

struct Settings {
    engine::Config engine;
    ServerSettings server;
    MemoryWatchSettings memory_watch;
    log::Level log_level = log::Level::Info;
};

// "section.key=value" given on the command line; `origin` names the option for errors.
struct Override {
    std::string key;
    std::string value;
    std::string origin;
};

inline constexpr const char* kDefaultConfigPath = "/etc/strata/strata.conf";

// Reads `path` (a missing file is an error only when `required`), applies `overrides`,
// resolves the default socket and checks cross-key rules. Throws ConfigError.
Settings load_settings(const std::string& path, bool required, const std::vector<Override>& overrides);

// /run/strata/strata.sock for root or without $XDG_RUNTIME_DIR, else $XDG_RUNTIME_DIR/strata.sock.
std::string default_socket_path();

struct SettingsChange {
    std::vector<std::string> live;     // "limits.max_tokens: 4096 -> 1024", applied at once
    std::vector<std::string> restart;  // changed keys that need a restart to take effect
};
SettingsChange compare(const Settings& before, const Settings& after);

// `running` with the live keys taken from `fresh` (what SIGHUP applies).
Settings merge_live(const Settings& running, const Settings& fresh);

// Every key with its current value, one "section.key = value" per entry (for --check-config).
std::vector<std::string> describe(const Settings& settings);

}  // namespace strata::daemon
