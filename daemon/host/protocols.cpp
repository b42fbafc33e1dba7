// daemon/host/protocols.cpp — the connection of each protocol (see protocols.h).
#include "host/protocols.h"

#include <memory>

#include "openai/http_connection.h"
#include "rpc/rpc_connection.h"

namespace strata::daemon {

void hand_over(Server& server, Arrival a, const std::string& refused) {
    const ApiError busy(ErrorKind::Busy, "too many connections are open (" + refused + "); retry later");
    if (a.protocol == Protocol::Http) {
        auto http = std::make_shared<HttpConnection>(server, std::move(a.socket), a.peer, std::move(a.slot),
                                                     std::move(a.received));
        refused.empty() ? http->start(a.ended) : http->refuse(busy);
        return;
    }
    auto rpc = std::make_shared<RpcConnection>(server, std::move(a.socket), a.peer, std::move(a.slot),
                                               std::move(a.received));
    if (refused.empty() && a.peer.tcp && !server.settings().server.tcp_jsonrpc) {
        rpc->refuse(ApiError(ErrorKind::Forbidden,
                             "the native protocol is not served over TCP (server.tcp_jsonrpc); speak HTTP"));
        return;
    }
    refused.empty() ? rpc->start(a.ended) : rpc->refuse(busy);
}

}  // namespace strata::daemon
