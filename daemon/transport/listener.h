// daemon/transport/listener.h — a listening socket and its accept loop: the Unix socket
// (the one systemd passed, sd_listen_fds, or one created at server.socket with mode 0660;
// a stale socket file left by a dead daemon is removed, a live one is an error), or the
// TCP listener of server.listen (accepted sockets get TCP_NODELAY: streamed text goes out
// at once). Owns: the socket file's life, binding. Must not touch: what connections speak
// (the caller's on_accept).
#pragma once

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <string>

#include "host/settings.h"
#include "transport/asio.h"

namespace strata::daemon {

class Listener {
public:
    explicit Listener(asio::io_context& io);
    ~Listener();

    // Throw std::runtime_error naming the path or address and the reason.
    void open(const std::string& path);
    void open_tcp(const ListenAddress& address);
    bool is_open() const { return acceptor_.is_open(); }
    // Hands every accepted socket to `on_accept` (on the io_context thread).
    void start(std::function<void(Socket)> on_accept);
    void stop();  // stops accepting; removes the socket file if this process created it
    const std::string& where() const { return where_; }  // for logs: the path, or "TCP 127.0.0.1:8080"

private:
    void accept();

    asio::io_context& io_;
    asio::basic_socket_acceptor<asio::generic::stream_protocol> acceptor_;
    asio::steady_timer retry_;
    std::function<void(Socket)> on_accept_;
    std::string created_path_;
    std::string where_;
    bool tcp_ = false;
};

}  // namespace strata::daemon
