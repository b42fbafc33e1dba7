// daemon/host/protocols.h — which protocol serves a connection once its first bytes are
// read (transport/connection.h): HTTP (openai/http_connection.h) or the native JSON-RPC
// (rpc/rpc_connection.h), which is refused over TCP unless server.tcp_jsonrpc. It sits
// above both protocols so that transport/ does not reach up to them.
// Owns: that choice. Must not touch: reading the first bytes (transport/), either protocol's inside.
#pragma once

#include <string>

#include "transport/connection.h"

namespace strata::daemon {

// The HandOver that daemon.cpp gives greet().
void hand_over(Server& server, Arrival arrival, const std::string& refused);

}  // namespace strata::daemon
