// daemon/transport/connection.h — a freshly accepted connection: reads its first bytes until the
// protocol is known (sniff.h; closed when that takes longer than server.idle_timeout),
// then hands the socket and those bytes to the HandOver the layer above gives (the one
// that knows the protocols: host/protocols.h). A connection over
// server.max_connections or server.max_connections_per_user is handed over at once with
// what it already sent and a reason to refuse it, never held. Owns: reading until the
// protocol is known. Must not touch: either protocol (rpc/, openai/).
#pragma once

#include <string>

#include "transport/asio.h"
#include "transport/peer.h"
#include "transport/server.h"
#include "transport/sniff.h"

namespace strata::daemon {

// A connection whose protocol is known.
struct Arrival {
    Protocol protocol;  // Http, or Native (also when the bytes so far cannot tell: nothing came)
    Socket socket;
    Peer peer;
    Server::Slot slot;
    std::string received;  // the bytes read while the protocol was being recognised
    bool ended;            // the client already shut its writing side
};

// Starts the connection of an arrival's protocol; `refused` (non-empty: why) makes it answer
// "busy" in that protocol and close.
using HandOver = void (*)(Server& server, Arrival arrival, const std::string& refused);

// Takes over an accepted socket; keeps itself alive until the protocol is known.
void greet(Server& server, Socket socket, HandOver hand_over);

}  // namespace strata::daemon
