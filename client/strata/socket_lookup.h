// client/strata/socket_lookup.h — where strata looks for stratad's socket, in order, and
// the message it prints when no daemon answers at any of them. Pure functions: the
// environment and the file system are passed in.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace strata::client {

inline constexpr const char* kSystemSocket = "/run/strata/strata.sock";

struct SocketCandidate {
    std::string path;
    std::string origin;  // where the path came from, for messages: "--socket", "$STRATA_SOCKET", ...
};

struct SocketEnvironment {
    std::optional<std::string> strata_socket;    // $STRATA_SOCKET
    std::optional<std::string> xdg_runtime_dir;  // $XDG_RUNTIME_DIR
};

SocketEnvironment socket_environment();  // read from this process's environment (empty = unset)

// --socket alone if given, else $STRATA_SOCKET alone if set, else
// $XDG_RUNTIME_DIR/strata.sock (when `exists` says it does) followed by the system socket.
std::vector<SocketCandidate> socket_candidates(const std::optional<std::string>& flag, const SocketEnvironment& env,
                                               const std::function<bool(const std::string&)>& exists);

struct ConnectAttempt {
    SocketCandidate candidate;
    int error;  // errno of the failed connect
};

// What strata says when every candidate failed: the paths tried and why, and how to start
// or reach a daemon; or, when a daemon does answer at one of `listening` (the usual
// places, tried when --socket or $STRATA_SOCKET pointed elsewhere), where it is.
std::string no_daemon_message(const std::vector<ConnectAttempt>& attempts,
                              const std::vector<SocketCandidate>& listening = {});

}  // namespace strata::client
