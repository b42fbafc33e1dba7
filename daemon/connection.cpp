// daemon/connection.cpp — protocol recognition of new connections (see connection.h).
#include "connection.h"

#include <array>
#include <memory>

#include "host/log.h"
#include "openai/http_connection.h"
#include "rpc/rpc_connection.h"
#include "transport/sniff.h"

namespace strata::daemon {
namespace {

class Greeting : public std::enable_shared_from_this<Greeting> {
public:
    Greeting(Server& server, Socket socket, Peer peer)
        : server_(server), socket_(std::move(socket)), peer_(peer), slot_(server) {}

    void read() {
        socket_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](boost::system::error_code ec,
                                                                                  size_t count) {
            self->on_read(ec, count);
        });
    }

private:
    void on_read(boost::system::error_code ec, size_t count) {
        if (ec && ec != asio::error::eof) {
            log::debug("connection of ", peer_.describe(), " failed before its first request: ", ec.message());
            return;
        }
        received_.append(chunk_.data(), count);
        const bool ended = ec == asio::error::eof;
        Protocol protocol = sniff(received_);
        if (protocol == Protocol::NeedMore && !ended) {
            read();
            return;
        }
        if (ended && received_.empty())
            return;  // connected and left without a word
        hand_over(protocol == Protocol::Http ? Protocol::Http : Protocol::Native, ended);
    }

    void hand_over(Protocol protocol, bool ended) {
        const bool refused = server_.full();
        if (refused) {
            ++server_.counters().connections_refused;
            log::warning("refusing a connection of ", peer_.describe(), ": server.max_connections (",
                         server_.settings().server.max_connections, ") are open");
        }
        const ApiError busy(ErrorKind::Busy, "too many connections are open; retry later");
        if (protocol == Protocol::Http) {
            auto http = std::make_shared<HttpConnection>(server_, std::move(socket_), peer_, std::move(slot_),
                                                         std::move(received_));
            refused ? http->refuse(busy) : http->start(ended);
            return;
        }
        auto rpc = std::make_shared<RpcConnection>(server_, std::move(socket_), peer_, std::move(slot_),
                                                   std::move(received_));
        refused ? rpc->refuse(busy) : rpc->start(ended);
    }

    Server& server_;
    Socket socket_;
    Peer peer_;
    Server::Slot slot_;
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
    std::make_shared<Greeting>(server, std::move(socket), peer)->read();
}

}  // namespace strata::daemon
