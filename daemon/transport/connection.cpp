// daemon/transport/connection.cpp — protocol recognition of new connections (see connection.h).
#include "transport/connection.h"

#include <array>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

#include "host/log.h"

namespace strata::daemon {
namespace {

// What the first bytes say; native when they are not HTTP (or not enough to tell).
Protocol protocol_of(std::string_view received) {
    return sniff(received) == Protocol::Http ? Protocol::Http : Protocol::Native;
}

// A connection over a limit is answered at once, in the protocol of whatever it already
// sent (native when nothing), and closed: it never holds a descriptor waiting for input.
void refuse_now(Server& server, Socket socket, Peer peer, const std::string& why, HandOver hand_over) {
    ++server.counters().connections_refused;
    log::warning("refusing a connection of ", peer.describe(), ": ", why);
    std::array<char, 4096> chunk{};
    boost::system::error_code ec;
    socket.non_blocking(true, ec);
    const size_t count = ec ? 0 : socket.read_some(asio::buffer(chunk), ec);
    std::string received(chunk.data(), count);
    const Protocol protocol = protocol_of(received);
    hand_over(server, {protocol, std::move(socket), peer, Server::Slot(server, peer.uid), std::move(received), false}, why);
}

// Reads the first bytes until the protocol is known, for at most server.idle_timeout.
class Greeting : public std::enable_shared_from_this<Greeting> {
public:
    Greeting(Server& server, Socket socket, Peer peer, HandOver hand_over)
        : server_(server),
          socket_(std::move(socket)),
          peer_(peer),
          slot_(server, peer.uid),
          deadline_(server.io()),
          hand_over_(hand_over) {}

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
        const Protocol protocol = protocol_of(received_);
        hand_over_(server_, {protocol, std::move(socket_), peer_, std::move(slot_), std::move(received_), ended}, {});
    }

    Server& server_;
    Socket socket_;
    Peer peer_;
    Server::Slot slot_;
    asio::steady_timer deadline_;
    HandOver hand_over_;
    std::string received_;
    std::array<char, 4096> chunk_{};
};

}  // namespace

void greet(Server& server, Socket socket, HandOver hand_over) {
    Peer peer;
    try {
        peer = peer_of(socket);
    } catch (const std::exception& error) {
        log::warning("dropping a connection whose peer is unknown: ", error.what());
        return;
    }
    if (const std::string why = server.refusal(peer); !why.empty()) {
        refuse_now(server, std::move(socket), peer, why, hand_over);
        return;
    }
    std::make_shared<Greeting>(server, std::move(socket), peer, hand_over)->start();
}

}  // namespace strata::daemon
