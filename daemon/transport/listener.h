// daemon/transport/listener.h — the listening Unix socket: the one systemd passed (socket
// activation, sd_listen_fds) or one created at server.socket (mode 0660; a stale socket
// file left by a dead daemon is removed, a live one is an error), and the accept loop.
// Owns: the socket file's life. Must not touch: what connections speak (the caller's on_accept).
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <string>

#include "transport/asio.h"

namespace strata::daemon {

class Listener {
public:
    explicit Listener(asio::io_context& io);
    ~Listener();

    // Throws std::runtime_error naming the path and the reason.
    void open(const std::string& path);
    // Hands every accepted socket to `on_accept` (on the io_context thread).
    void start(std::function<void(Socket)> on_accept);
    void stop();  // stops accepting; removes the socket file if this process created it
    const std::string& where() const { return where_; }

private:
    void accept();

    asio::io_context& io_;
    asio::local::stream_protocol::acceptor acceptor_;
    asio::steady_timer retry_;
    std::function<void(Socket)> on_accept_;
    std::string created_path_;
    std::string where_;
};

}  // namespace strata::daemon
