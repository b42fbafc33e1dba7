// daemon/transport/client_connection.h — what a native and an HTTP connection share once the
// protocol is known: the socket and its peer, the place in the server's count and
// registry, the bounded output queue (answers are always queued; output the engine
// produces overflows the buffer of a client that does not read, which drops the
// connection and cancels its requests), the end of a client that left, and closing.
// Owns: that common life. Must not touch: either protocol (rpc_connection.h, http_connection.h).
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>

#include "transport/server.h"
#include "transport/asio.h"
#include "transport/output_queue.h"
#include "transport/peer.h"
#include "transport/sink.h"

namespace strata::daemon {

class ClientConnection : public Connection,
                         public RequestListener,
                         public std::enable_shared_from_this<ClientConnection> {
public:
    ~ClientConnection() override;

protected:
    // `protocol` names the connection in logs ("native", "HTTP").
    ClientConnection(Server& server, Socket socket, Peer peer, Server::Slot slot, const char* protocol);

    void join_registry();  // once owned by a shared_ptr
    void send(std::string bytes, bool from_engine);
    void client_gone(const std::string& why);  // cancels what is in flight and closes
    void close_after_output();
    // The same for a refused request whose body may still be arriving: once the answer is
    // out, what the client still sends is read and dropped (for at most kLingerMs) before
    // closing, so that it reads the answer instead of failing with a broken pipe.
    void refuse_after_output();
    void close();

    // The request deadline: while `waiting` (no request yet, or one begun but incomplete),
    // the connection has server.idle_timeout for a complete request, then
    // request_overdue() is called (later, while output is still being written).
    void expect_request(bool waiting);
    virtual void request_overdue() = 0;  // answers if it can, then closes

    // The derived connection's requests in flight, for logs, and dropping them from its books.
    virtual size_t requests_in_flight() const = 0;
    virtual void forget_requests() = 0;

    template <typename Derived>
    std::shared_ptr<Derived> self(Derived* derived) {
        return std::static_pointer_cast<Derived>(derived->shared_from_this());
    }

    Server& server_;
    Socket socket_;
    Peer peer_;
    OutputQueue output_;
    bool closed_ = false;

private:
    void drop_slow_reader();
    void arm_deadline();
    void drain_input();

    Server::Slot slot_;
    const char* protocol_;
    uint64_t registration_ = 0;
    asio::steady_timer deadline_;
    bool deadline_armed_ = false;
};

}  // namespace strata::daemon
