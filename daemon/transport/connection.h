// daemon/transport/connection.h — a freshly accepted connection: reads its first bytes until the
// protocol is known (sniff.h; closed when that takes longer than server.idle_timeout),
// then hands the socket and those bytes to an RpcConnection or an HttpConnection. A
// connection over server.max_connections or server.max_connections_per_user is answered
// "busy" at once (in the protocol of what it already sent; native when nothing) and
// closed, never held. Owns: that hand-over.
// Must not touch: either protocol.
#pragma once

#include "transport/server.h"
#include "transport/asio.h"
#include "transport/peer.h"

namespace strata::daemon {

// Takes over an accepted socket; keeps itself alive until the protocol is known.
void greet(Server& server, Socket socket);

}  // namespace strata::daemon
