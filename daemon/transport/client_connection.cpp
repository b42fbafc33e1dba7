// daemon/transport/client_connection.cpp — the life both protocols' connections share (see
// client_connection.h).
#include "transport/client_connection.h"

#include <array>
#include <chrono>

#include "host/log.h"

namespace strata::daemon {
namespace {

constexpr int kLingerMs = 2000;  // how long a refused client may go on sending before the close

}  // namespace

ClientConnection::ClientConnection(Server& server, Socket socket, Peer peer, Server::Slot slot, const char* protocol)
    : server_(server),
      socket_(std::move(socket)),
      peer_(peer),
      output_(
          socket_, [this] { return shared_from_this(); },
          [this](boost::system::error_code ec) { client_gone("writing failed: " + ec.message()); }),
      slot_(std::move(slot)),
      protocol_(protocol),
      deadline_(server.io()) {}

ClientConnection::~ClientConnection() { server_.remove(registration_); }

void ClientConnection::join_registry() {
    registration_ = server_.add(weak_from_this());
    log::debug(protocol_, " connection from ", peer_.describe());
}

void ClientConnection::send(std::string bytes, bool from_engine) {
    if (closed_)
        return;
    if (!output_.push(std::move(bytes), from_engine ? server_.settings().server.max_output_buffer : UINT64_MAX))
        drop_slow_reader();
}

void ClientConnection::drop_slow_reader() {
    ++server_.counters().slow_readers_dropped;
    log::warning("dropping the ", protocol_, " connection of ", peer_.describe(), ": it does not read its output (",
                 output_.unsent(), " bytes unsent, server.max_output_buffer ",
                 server_.settings().server.max_output_buffer, "); cancelling its ", requests_in_flight(),
                 " request(s)");
    cancel_requests();
    forget_requests();
    close();
}

void ClientConnection::client_gone(const std::string& why) {
    if (closed_)
        return;
    if (const size_t count = requests_in_flight(); count > 0) {
        log::info(protocol_, " client ", peer_.describe(), " went away (", why, "); cancelling its ", count,
                  " request(s)");
        server_.counters().disconnect_cancels += count;
        cancel_requests();
        forget_requests();
    }
    close();
}

void ClientConnection::close_after_output() {
    if (!closed_)
        output_.when_idle([self = shared_from_this()] { self->close(); });
}

void ClientConnection::refuse_after_output() {
    if (closed_)
        return;
    output_.when_idle([self = shared_from_this()] {
        if (self->closed_)
            return;
        self->deadline_armed_ = false;
        self->deadline_.expires_after(std::chrono::milliseconds(kLingerMs));
        self->deadline_.async_wait([self](boost::system::error_code ec) {
            if (!ec)
                self->close();
        });
        boost::system::error_code ignored;
        self->socket_.shutdown(Socket::shutdown_send, ignored);
        self->drain_input();
    });
}

void ClientConnection::drain_input() {
    auto scratch = std::make_shared<std::array<char, 16384>>();
    socket_.async_read_some(asio::buffer(*scratch), [self = shared_from_this(), scratch](boost::system::error_code ec, size_t) {
        if (self->closed_)
            return;
        if (ec)
            self->close();
        else
            self->drain_input();
    });
}

void ClientConnection::expect_request(bool waiting) {
    if (waiting == deadline_armed_ || closed_)
        return;
    deadline_armed_ = waiting;
    if (waiting)
        arm_deadline();
    else
        deadline_.cancel();
}

void ClientConnection::arm_deadline() {
    deadline_.expires_after(std::chrono::milliseconds(server_.settings().server.idle_timeout_ms));
    deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec || self->closed_ || !self->deadline_armed_)
            return;
        if (!self->output_.idle()) {  // a slow reader of a long answer is not an idle client
            self->arm_deadline();
            return;
        }
        self->deadline_armed_ = false;
        log::info("closing the ", self->protocol_, " connection of ", self->peer_.describe(),
                  ": no complete request within server.idle_timeout (",
                  self->server_.settings().server.idle_timeout_ms, " ms)");
        self->request_overdue();
    });
}

void ClientConnection::close() {
    if (closed_)
        return;
    closed_ = true;
    deadline_armed_ = false;
    deadline_.cancel();
    boost::system::error_code ignored;
    socket_.shutdown(Socket::shutdown_both, ignored);
    socket_.close(ignored);
}

}  // namespace strata::daemon
