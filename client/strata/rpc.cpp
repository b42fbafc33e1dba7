// client/strata/rpc.cpp — the JSON-RPC connection to stratad.
#include "rpc.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>

namespace strata::client {

namespace json = boost::json;

namespace {

constexpr int kCancelGraceMs = 3000;  // how long a cancelled generate may take to end

// A connected socket, or -1 with `error` set.
int connect_unix(const std::string& path, int& error) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) {
        error = ENAMETOOLONG;
        return -1;
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = errno;
        return -1;
    }
    while (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno == EINTR) continue;
        error = errno;
        ::close(fd);
        return -1;
    }
    return fd;
}

bool has_id(const json::object& message, int64_t id) {
    const json::value* v = message.if_contains("id");
    if (v == nullptr || !v->is_number()) return false;
    std::error_code ec;
    const auto got = v->to_number<int64_t>(ec);
    return !ec && got == id;
}

bool has_null_id(const json::object& message) {
    const json::value* v = message.if_contains("id");
    return v != nullptr && v->is_null();
}

std::string_view string_at(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

DaemonError daemon_error(const json::object& message) {
    const json::value* e = message.if_contains("error");
    if (e == nullptr || !e->is_object()) return DaemonError("stratad sent an error without details", "");
    const json::object& error = e->get_object();
    std::string text(string_at(error, "message"));
    if (text.empty()) text = "stratad reported an error";
    std::string type;
    if (const json::value* d = error.if_contains("data"); d != nullptr && d->is_object()) {
        type = string_at(d->get_object(), "type");
        if (auto field = string_at(d->get_object(), "field"); !field.empty() && text.find(field) == std::string::npos)
            text += " (parameter '" + std::string(field) + "')";
    }
    return DaemonError(text, type);
}

// The result of a response that answers `id`, or DaemonError.
json::object result_of(const json::object& message) {
    if (message.contains("error")) throw daemon_error(message);
    const json::value* r = message.if_contains("result");
    if (r == nullptr) throw BrokenConnection("stratad sent a response with neither result nor error");
    return r->is_object() ? r->get_object() : json::object{{"value", *r}};
}

}  // namespace

RpcClient RpcClient::connect(const std::vector<SocketCandidate>& candidates,
                             const std::vector<SocketCandidate>& elsewhere) {
    std::vector<ConnectAttempt> attempts;
    for (const SocketCandidate& c : candidates) {
        int error = 0;
        const int fd = connect_unix(c.path, error);
        if (fd >= 0) return RpcClient(fd);
        attempts.push_back({c, error});
    }
    std::vector<SocketCandidate> listening;
    for (const SocketCandidate& c : elsewhere) {
        int error = 0;
        if (const int fd = connect_unix(c.path, error); fd >= 0) {
            ::close(fd);
            listening.push_back(c);
        }
    }
    throw ConnectError(no_daemon_message(attempts, listening));
}

RpcClient::RpcClient(RpcClient&& other) noexcept
    : fd_(other.fd_), reader_(std::move(other.reader_)), next_id_(other.next_id_), echo_(other.echo_) {
    other.fd_ = -1;
}

RpcClient::~RpcClient() {
    if (fd_ >= 0) ::close(fd_);
}

int64_t RpcClient::send(std::string_view method, json::object params) {
    const int64_t id = next_id_++;
    json::object request{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
    const int err = write_all(fd_, json::serialize(request) + "\n");
    if (err != 0) throw BrokenConnection(std::string("sending the request to stratad failed: ") + std::strerror(err));
    return id;
}

LineReader::Got RpcClient::receive(json::object& message, int timeout_ms) {
    std::string line;
    LineReader::Got got;
    try {
        got = reader_.next(line, timeout_ms);
    } catch (const std::exception& e) {
        throw BrokenConnection(std::string("reading from stratad failed: ") + e.what());
    }
    if (got == LineReader::Got::Eof) throw BrokenConnection("stratad closed the connection before answering");
    if (got != LineReader::Got::Line) return got;
    if (echo_) write_stdout(line + "\n");
    std::error_code ec;
    json::value v = json::parse(line, ec);
    if (ec || !v.is_object())
        throw BrokenConnection("stratad sent a line that is not a JSON-RPC message: " + line.substr(0, 200));
    message = std::move(v.get_object());
    return got;
}

json::object RpcClient::call(std::string_view method, json::object params) {
    const int64_t id = send(method, std::move(params));
    for (;;) {
        json::object message;
        if (receive(message, -1) == LineReader::Got::Signal) {
            if (int sig = signals::take(); sig != 0) throw Interrupted{sig};
            continue;
        }
        if (has_id(message, id) || (has_null_id(message) && message.contains("error"))) return result_of(message);
    }
}

RpcClient::Outcome RpcClient::generate(json::object params, const std::function<void(std::string_view)>& on_text,
                                       const std::function<void(std::string_view)>& on_reasoning) {
    const int64_t id = send("generate", std::move(params));
    int stopped_by = 0;  // the signal that cancelled the request
    for (;;) {
        json::object message;
        const LineReader::Got got = receive(message, stopped_by != 0 ? kCancelGraceMs : -1);
        if (got == LineReader::Got::Timeout) throw Interrupted{stopped_by};
        if (got == LineReader::Got::Signal) {
            const int sig = signals::take();
            if (sig == 0) continue;
            if (stopped_by != 0) throw Interrupted{sig};
            stopped_by = sig;
            send("cancel", {{"id", id}});
            continue;
        }
        if (string_at(message, "method") == "token") {
            const json::value* p = message.if_contains("params");
            if (p != nullptr && p->is_object() && has_id(p->get_object(), id) && !echo_) {
                on_reasoning(string_at(p->get_object(), "reasoning"));
                on_text(string_at(p->get_object(), "text"));
            }
        } else if (has_id(message, id) || (has_null_id(message) && message.contains("error"))) {
            if (stopped_by == 0) {
                json::object result = result_of(message);
                const std::string_view reason = string_at(result, "finish_reason");
                return {std::move(result), false, reason == "cancelled", reason == "timeout"};
            }
            if (stopped_by != SIGINT) throw Interrupted{stopped_by};
            return {message.contains("error") ? json::object() : result_of(message), true, false};
        }
    }
}

}  // namespace strata::client
