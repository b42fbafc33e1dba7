// daemon/transport/peer.cpp — peer credentials and hang-up detection (see peer.h).
#include "transport/peer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <boost/system/system_error.hpp>
#include <cerrno>

namespace strata::daemon {

std::string Peer::describe() const {
    return tcp ? "TCP " + address : "uid " + std::to_string(uid) + " pid " + std::to_string(pid);
}

Peer peer_of(Socket& socket) {
    sockaddr_storage name{};
    socklen_t length = sizeof name;
    if (getpeername(socket.native_handle(), reinterpret_cast<sockaddr*>(&name), &length) != 0)
        throw boost::system::system_error(errno, boost::system::system_category(), "getpeername");
    if (name.ss_family == AF_INET || name.ss_family == AF_INET6) {
        char host[INET6_ADDRSTRLEN] = "";
        const bool v6 = name.ss_family == AF_INET6;
        const auto* v4_address = reinterpret_cast<const sockaddr_in*>(&name);
        const auto* v6_address = reinterpret_cast<const sockaddr_in6*>(&name);
        inet_ntop(name.ss_family, v6 ? static_cast<const void*>(&v6_address->sin6_addr) : &v4_address->sin_addr, host,
                  sizeof host);
        const uint16_t port = ntohs(v6 ? v6_address->sin6_port : v4_address->sin_port);
        return {kNoUid, 0, true, (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port)};
    }
    ucred credentials{};
    socklen_t size = sizeof credentials;
    if (getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0)
        throw boost::system::system_error(errno, boost::system::system_category(), "SO_PEERCRED");
    return {credentials.uid, credentials.pid, false, {}};
}

bool peer_gone(Socket& socket) {
    if (!socket.is_open())
        return true;
    pollfd entry{socket.native_handle(), POLLOUT, 0};
    if (poll(&entry, 1, 0) < 0)
        return false;
    return (entry.revents & (POLLHUP | POLLERR)) != 0;
}

void watch_for_hangup(Socket& socket, std::shared_ptr<void> owner, std::function<void()> on_gone) {
    // A wait for the error condition completes on EPOLLHUP/EPOLLERR (and on EPOLLPRI, which
    // Unix sockets never raise); poll() confirms before reporting.
    socket.async_wait(Socket::wait_error, [&socket, owner, on_gone = std::move(on_gone)](boost::system::error_code ec) {
        if (ec || !socket.is_open())
            return;
        if (peer_gone(socket))
            on_gone();
        else
            watch_for_hangup(socket, owner, on_gone);
    });
}

}  // namespace strata::daemon
