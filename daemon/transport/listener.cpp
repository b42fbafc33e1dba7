// daemon/transport/listener.cpp — the listening socket and the accept loop (see listener.h).
#include "transport/listener.h"

#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <boost/asio/ip/tcp.hpp>

#include "host/log.h"
#include "host/sd_glue.h"

namespace strata::daemon {
namespace {

using Local = asio::local::stream_protocol;
using Generic = asio::generic::stream_protocol;

// Removes a socket file that nobody listens on; refuses to touch anything else.
void clear_stale_socket(asio::io_context& io, const std::string& path) {
    struct stat info {};
    if (lstat(path.c_str(), &info) != 0) {
        if (errno == ENOENT)
            return;
        throw std::runtime_error("cannot use " + path + ": " + std::strerror(errno));
    }
    if (!S_ISSOCK(info.st_mode))
        throw std::runtime_error(path + " exists and is not a socket; not replacing it");
    Local::socket probe(io);
    boost::system::error_code ec;
    probe.connect(Local::endpoint(path), ec);
    if (!ec)
        throw std::runtime_error("another daemon is already listening on " + path);
    if (unlink(path.c_str()) != 0)
        throw std::runtime_error("cannot remove the stale socket " + path + ": " + std::strerror(errno));
    log::notice("removed the stale socket ", path);
}

}  // namespace

Listener::Listener(asio::io_context& io) : io_(io), acceptor_(io), retry_(io) {}

Listener::~Listener() { stop(); }

void Listener::open(const std::string& path) {
    if (const auto fd = sd::listen_fd()) {
        acceptor_.assign(Generic(AF_UNIX, 0), *fd);
        where_ = "the socket passed by systemd (fd " + std::to_string(*fd) + ")";
        return;
    }
    if (path.size() >= sizeof(sockaddr_un::sun_path))
        throw std::runtime_error("socket path " + path + " is too long (at most " +
                                 std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes)");
    clear_stale_socket(io_, path);
    try {
        acceptor_.open(Generic(AF_UNIX, 0));
        const mode_t old_mask = umask(0117);  // the socket file is created as 0660
        boost::system::error_code ec;
        acceptor_.bind(Generic::endpoint(Local::endpoint(path)), ec);
        umask(old_mask);
        if (ec)
            throw boost::system::system_error(ec);
        created_path_ = path;
        acceptor_.listen(asio::socket_base::max_listen_connections);
    } catch (const boost::system::system_error& error) {
        throw std::runtime_error("cannot listen on " + path + ": " + error.code().message());
    }
    where_ = path;
}

void Listener::open_tcp(const ListenAddress& address) {
    try {
        const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(address.host), address.port);
        acceptor_.open(Generic(endpoint.protocol().family(), IPPROTO_TCP));
        acceptor_.set_option(asio::socket_base::reuse_address(true));
        acceptor_.bind(Generic::endpoint(endpoint));
        acceptor_.listen(asio::socket_base::max_listen_connections);
        asio::ip::tcp::endpoint bound;  // the port chosen when 0 was asked for
        std::memcpy(bound.data(), acceptor_.local_endpoint().data(), acceptor_.local_endpoint().size());
        where_ = "TCP " + ListenAddress{address.host, bound.port()}.show();
    } catch (const boost::system::system_error& error) {
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        throw std::runtime_error("cannot listen on " + address.show() + " (server.listen): " + error.code().message());
    }
    tcp_ = true;
}

void Listener::start(std::function<void(Socket)> on_accept) {
    on_accept_ = std::move(on_accept);
    accept();
}

void Listener::accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, Socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open())
            return;
        if (ec) {
            // Out of file descriptors or memory: wait a little instead of spinning.
            log::warning("accepting a connection failed: ", ec.message());
            retry_.expires_after(std::chrono::milliseconds(100));
            retry_.async_wait([this](boost::system::error_code wait_ec) {
                if (!wait_ec)
                    accept();
            });
            return;
        }
        if (tcp_) {
            boost::system::error_code ignored;
            socket.set_option(asio::ip::tcp::no_delay(true), ignored);
        }
        on_accept_(std::move(socket));
        accept();
    });
}

void Listener::stop() {
    boost::system::error_code ignored;
    retry_.cancel();
    acceptor_.close(ignored);
    if (!created_path_.empty()) {
        unlink(created_path_.c_str());
        created_path_.clear();
    }
}

}  // namespace strata::daemon
