// daemon/transport/connection.cpp — protocol recognition of new connections (see connection.h).
#include "transport/connection.h"

#include <array>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

#include "host/log.h"
#include "openai/http_connection.h"
#include "rpc/rpc_connection.h"
#include "transport/sniff.h"

namespace strata::daemon {
namespace {

// Hands a socket to the connection of its protocol; `refused` (non-empty: why) gets a
// "busy" answer and is closed.
void hand_over(Server& server, Socket socket, Peer peer, Server::Slot slot, std::string received, bool ended,
               const std::string& refused) {
    const ApiError busy(ErrorKind::Busy, "too many connections are open (" + refused + "); retry later");
    if (sniff(received) == Protocol::Http) {
        auto http = std::make_shared<HttpConnection>(server, std::move(socket), peer, std::move(slot),
                                                     std::move(received));
        refused.empty() ? http->start(ended) : http->refuse(busy);
        return;
    }
    auto rpc = std::make_shared<RpcConnection>(server, std::move(socket), peer, std::move(slot),
                                               std::move(received));
    if (refused.empty() && peer.tcp && !server.settings().server.tcp_jsonrpc) {
        rpc->refuse(ApiError(ErrorKind::Forbidden,
                             "the native protocol is not served over TCP (server.tcp_jsonrpc); speak HTTP"));
        return;
    }
    refused.empty() ? rpc->start(ended) : rpc->refuse(busy);
}

// A connection over a limit is answered at once, in the protocol of whatever it already
// sent (native when nothing), and closed: it never holds a descriptor waiting for input.
void refuse_now(Server& server, Socket socket, Peer peer, const std::string& why) {
    ++server.counters().connections_refused;
    log::warning("refusing a connection of ", peer.describe(), ": ", why);
    std::array<char, 4096> chunk{};
    boost::system::error_code ec;
    socket.non_blocking(true, ec);
    const size_t count = ec ? 0 : socket.read_some(asio::buffer(chunk), ec);
    Server::Slot slot(server, peer.uid);
    hand_over(server, std::move(socket), peer, std::move(slot), std::string(chunk.data(), count), false, why);
}

// Reads the first bytes until the protocol is known, for at most server.idle_timeout.
class Greeting : public std::enable_shared_from_this<Greeting> {
public:
    Greeting(Server& server, Socket socket, Peer peer)
        : server_(server), socket_(std::move(socket)), peer_(peer), slot_(server, peer.uid), deadline_(server.io()) {}

    void start() {
        deadline_.expires_after(std::chrono::milliseconds(server_.settings().server.idle_timeout_ms));
        deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec || !self->socket_.is_open())
                return;
            log::info("closing the connection of ", self->peer_.describe(), ": no request within server.idle_timeout");
            boost::system::error_code ignored;
            self->socket_.close(ignored);
        });
        read();
    }

private:
    void read() {
        socket_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](boost::system::error_code ec,
                                                                                  size_t count) {
            self->on_read(ec, count);
        });
    }

    void on_read(boost::system::error_code ec, size_t count) {
        if (ec && ec != asio::error::eof) {
            log::debug("connection of ", peer_.describe(), " failed before its first request: ", ec.message());
            deadline_.cancel();
            return;
        }
        received_.append(chunk_.data(), count);
        const bool ended = ec == asio::error::eof;
        if (sniff(received_) == Protocol::NeedMore && !ended) {
            read();
            return;
        }
        deadline_.cancel();
        if (ended && received_.empty())
            return;  // connected and left without a word
        hand_over(server_, std::move(socket_), peer_, std::move(slot_), std::move(received_), ended, {});
    }

    Server& server_;
    Socket socket_;
    Peer peer_;
    Server::Slot slot_;
    asio::steady_timer deadline_;
    std::string received_;
    std::array<char, 4096> chunk_{};
};

}  // namespace

void greet(Server& server, Socket socket) {
    Peer peer;
    try {
        peer = peer_of(socket);
    } catch (const std::exception& error) {
        log::warning("dropping a connection whose peer is unknown: ", error.what());
        return;
    }
    if (const std::string why = server.refusal(peer); !why.empty()) {
        refuse_now(server, std::move(socket), peer, why);
        return;
    }
    std::make_shared<Greeting>(server, std::move(socket), peer)->start();
}

}  // namespace strata::daemon
