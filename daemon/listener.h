// daemon/listener.h — the listening Unix socket: the one systemd passed (socket
// activation, sd_listen_fds) or one created at server.socket (mode 0660; a stale socket
// file left by a dead daemon is removed, a live one is an error), and the accept loop.
// Owns: the socket file's life. Must not touch: what connections speak (connection.h).
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <string>

#include "asio.h"

namespace strata::daemon {

class Server;

class Listener {
public:
    explicit Listener(asio::io_context& io);
    ~Listener();

    // Throws std::runtime_error naming the path and the reason.
    void open(const std::string& path);
    void start(Server& server);
    void stop();  // stops accepting; removes the socket file if this process created it
    const std::string& where() const { return where_; }

private:
    void accept();

    asio::io_context& io_;
    asio::local::stream_protocol::acceptor acceptor_;
    asio::steady_timer retry_;
    Server* server_ = nullptr;
    std::string created_path_;
    std::string where_;
};

}  // namespace strata::daemon
