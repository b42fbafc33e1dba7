// daemon/transport/peer.h — facts about the other end of a connection: on the Unix socket
// the process's credentials (SO_PEERCRED), on TCP its address (who it acts for comes with
// each request: an API key); and whether it has gone (hung up completely, as opposed to
// only shutting down its writing side, which `echo req | socat` does while it still reads).
// Owns: those system calls and the asynchronous hang-up watch. Must not touch: protocols.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "transport/asio.h"

namespace strata::daemon {

inline constexpr uid_t kNoUid = static_cast<uid_t>(-1);

struct Peer {
    uid_t uid = 0;         // kNoUid on TCP: no request is run as a uid without an API key
    pid_t pid = 0;
    bool tcp = false;
    std::string address;   // TCP: "192.0.2.7:50412", "[2001:db8::7]:50412"
    std::string describe() const;  // "uid 1000 pid 4242" or "TCP 192.0.2.7:50412", for logs
};

Peer peer_of(Socket& socket);  // throws boost::system::system_error

// True when the peer closed its end entirely (or the socket is in error): nothing we send
// can be read any more.
bool peer_gone(Socket& socket);

// Calls `on_gone` once the peer is gone (peer_gone), unless the socket is closed first.
// `owner` is kept alive while the watch is pending. Use it only when no read will be
// started any more (after end of input): while an error wait is pending, Asio does not try
// reads speculatively and a read of data that already arrived could wait forever.
void watch_for_hangup(Socket& socket, std::shared_ptr<void> owner, std::function<void()> on_gone);

}  // namespace strata::daemon
