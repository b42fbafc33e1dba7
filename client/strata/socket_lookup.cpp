// client/strata/socket_lookup.cpp — socket candidates and the no-daemon message.
#include "socket_lookup.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace strata::client {

namespace {

std::optional<std::string> env_value(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
}

}  // namespace

SocketEnvironment socket_environment() {
    return {env_value("STRATA_SOCKET"), env_value("XDG_RUNTIME_DIR")};
}

std::vector<SocketCandidate> socket_candidates(const std::optional<std::string>& flag, const SocketEnvironment& env,
                                               const std::function<bool(const std::string&)>& exists) {
    if (flag) return {{*flag, "--socket"}};
    if (env.strata_socket) return {{*env.strata_socket, "$STRATA_SOCKET"}};
    std::vector<SocketCandidate> out;
    if (env.xdg_runtime_dir) {
        std::string user_socket = *env.xdg_runtime_dir + "/strata.sock";
        if (exists(user_socket)) out.push_back({std::move(user_socket), "$XDG_RUNTIME_DIR"});
    }
    out.push_back({kSystemSocket, "system socket"});
    return out;
}

std::string no_daemon_message(const std::vector<ConnectAttempt>& attempts,
                              const std::vector<SocketCandidate>& listening) {
    std::string msg = "no stratad answers at ";
    msg += attempts.size() == 1 ? "this socket:\n" : "any of these sockets:\n";
    size_t denied = 0;
    for (const ConnectAttempt& a : attempts) {
        msg += "  " + a.candidate.path + " (" + a.candidate.origin + "): " + std::strerror(a.error) + "\n";
        denied += a.error == EACCES ? 1 : 0;
    }
    if (denied > 0)
        msg += "Permission denied: the system socket is for members of the 'strata' group\n"
               "(as root: usermod -aG strata $USER, then log in again).";
    if (!listening.empty()) {
        const SocketCandidate& there = listening.front();
        return msg + "A daemon listens at " + there.path + " (" + there.origin + "): use --socket " + there.path +
               ", or leave out --socket and $STRATA_SOCKET.";
    }
    if (denied == attempts.size()) return msg;  // a daemon is there; starting one would not help
    if (denied > 0) msg += "\n";
    msg += "Start the system service with: systemctl start stratad.socket\n"
           "or run your own daemon: stratad --socket \"$XDG_RUNTIME_DIR/strata.sock\" --model FILE.gguf\n"
           "or point strata at another socket with --socket PATH or $STRATA_SOCKET.";
    return msg;
}

}  // namespace strata::client
