// daemon/rpc/rpc_connection.cpp — a native-protocol connection (see rpc_connection.h).
#include "rpc/rpc_connection.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cstdio>

#include "host/log.h"
#include "protocol/embeddings.h"
#include "protocol/fields.h"
#include "protocol/generate_params.h"
#include "protocol/views.h"
#include "rpc/methods.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

bool blank(std::string_view line) {
    return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace

RpcConnection::RpcConnection(Server& server, Socket socket, Peer peer, Server::Slot slot, std::string received)
    : ClientConnection(server, std::move(socket), peer, std::move(slot), "native"), pending_(std::move(received)) {
    if (!peer_.tcp) {
        uid_ = peer_.uid;
        return;
    }
    try {
        uid_ = server_.tcp_uid("");  // "anonymous" on a listener without keys
    } catch (const ApiError&) {
        // a key is needed: `authenticate` first
    }
}

void RpcConnection::start(bool input_ended) {
    join_registry();
    input_ended_ = input_ended;
    feed(std::exchange(pending_, {}));
}

void RpcConnection::refuse(const ApiError& error) {
    send(error_line(nullptr, error), false);
    closing_ = true;
    close_if_done();
}

bool RpcConnection::output_backed_up() const {
    return output_.unsent() > server_.settings().server.max_output_buffer / 2;
}

// A client that sends requests faster than it reads the answers waits for them: input is
// taken again once the output has drained.
void RpcConnection::feed(std::string_view bytes) {
    const bool consumed = consume(bytes);
    expect_request(!input_ended_ && (!had_request_ || !line_.empty() || skipping_line_));
    if (!consumed || (!closed_ && !input_ended_ && output_backed_up())) {
        output_.when_idle([self = self(this)] {
            if (!self->closed_)
                self->feed(std::exchange(self->held_, {}));
        });
        return;
    }
    if (closed_)
        return;
    if (input_ended_)
        end_of_input();
    else
        read();
}

void RpcConnection::read() {
    socket_.async_read_some(asio::buffer(read_buffer_), [self = self(this)](boost::system::error_code ec, size_t count) {
        self->on_read(ec, count);
    });
}

void RpcConnection::on_read(boost::system::error_code ec, size_t count) {
    if (closed_)
        return;
    if (ec == asio::error::eof) {
        end_of_input();
        return;
    }
    if (ec) {
        client_gone("reading failed: " + ec.message());
        return;
    }
    feed({read_buffer_.data(), count});
}

bool RpcConnection::consume(std::string_view bytes) {
    const uint64_t limit = server_.settings().server.max_request_bytes;
    while (!bytes.empty() && !closed_) {
        if (output_backed_up()) {
            held_.assign(bytes);
            return false;
        }
        const size_t newline = bytes.find('\n');
        const std::string_view part = bytes.substr(0, newline);
        bytes = newline == std::string_view::npos ? std::string_view{} : bytes.substr(newline + 1);
        if (skipping_line_) {
            skipping_line_ = newline == std::string_view::npos;
            continue;
        }
        if (line_.size() + part.size() > limit) {
            had_request_ = true;
            ++server_.counters().rpc_requests_total;
            send(error_line(nullptr, ApiError(ErrorKind::InvalidRequest, "the request line is longer than " +
                                                                             std::to_string(limit) + " bytes")),
                 false);
            line_.clear();
            skipping_line_ = newline == std::string_view::npos;
            continue;
        }
        line_.append(part);
        if (newline == std::string_view::npos)
            break;
        handle_line(std::exchange(line_, {}));
    }
    return true;
}

void RpcConnection::handle_line(std::string_view line) {
    if (blank(line))
        return;
    had_request_ = true;
    ++server_.counters().rpc_requests_total;
    try {
        RpcRequest request = parse_request(line, server_.settings().server.max_json_depth);
        dispatch(request);
    } catch (const BadRequest& bad) {
        send(error_line(bad.id(), bad), false);
    }
}

void RpcConnection::dispatch(RpcRequest& request) {
    const json::value id = request.id.value_or(nullptr);
    auto answer_error = [&](const ApiError& error) {
        if (request.id)
            send(error_line(id, error), false);
    };
    try {
        if (request.method == "authenticate") {
            json::value result = authenticate(request);
            if (request.id)
                send(result_line(id, std::move(result)), false);
            return;
        }
        if (!uid_)
            throw ApiError(ErrorKind::Unauthorized, "authenticate first: "
                                                    R"({"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"api_key":KEY}})");
        if (request.method == "generate")
            start_generate(request);
        else if (request.method == "embed")
            start_embed(request);
        else if (request.method == "cancel")
            cancel(request);
        else if (json::value result = call_method(server_, request.method, request.params, *uid_); request.id)
            send(result_line(id, std::move(result)), false);
    } catch (const ApiError& error) {
        answer_error(error);
    } catch (const engine::EngineError& error) {
        answer_error(from_engine(error));
    } catch (const std::exception& error) {
        log::error("internal error in ", request.method, " for ", peer_.describe(), ": ", error.what());
        answer_error(ApiError(ErrorKind::Internal, std::string("internal error: ") + error.what()));
    }
}

void RpcConnection::check_room(const RpcRequest& request) const {
    const uint32_t max_in_flight = server_.settings().server.max_requests_per_connection;
    if (server_.stopping())
        throw ApiError(ErrorKind::ShuttingDown, "the daemon is shutting down");
    if (in_flight_.size() >= max_in_flight)
        throw ApiError(ErrorKind::Busy, "too many requests in flight on this connection (at most " +
                                            std::to_string(max_in_flight) + "); retry when one has finished");
    if (request.id)
        for (const auto& [key, other] : in_flight_)
            if (other.id && *other.id == *request.id)
                throw ApiError(ErrorKind::InvalidRequest,
                               "id " + json::serialize(*request.id) + " is already used by a request in flight");
}

void RpcConnection::start_generate(RpcRequest& request) {
    check_room(request);
    GenerateCall call = parse_generate(request.params, server_.request_context(*uid_));
    const uint64_t key = next_key_++;
    InFlight entry{request.id, call.stream, 0, call.request.session, call.request.sampling.seed, std::nullopt, {}, std::nullopt};
    if (!call.request.messages.empty())
        entry.reasoning = server_.engine().reasoning_syntax(call.request);
    if (entry.reasoning.format != chat::ReasoningFormat::None)
        entry.reply.emplace(entry.reasoning, nullptr);
    entry.handle = server_.submit(std::move(call.request), weak_from_this(), key, Endpoint::Generate);
    in_flight_.emplace(key, std::move(entry));
}

void RpcConnection::start_embed(RpcRequest& request) {
    check_room(request);
    EmbedCall call = parse_embed(request.params, server_.request_context(*uid_), server_.model().n_embd, server_.model().n_vocab);
    const uint64_t key = next_key_++;
    InFlight entry{request.id, false, 0, {}, 0, call.base64, {}, std::nullopt};
    entry.handle = server_.submit(std::move(call.request), weak_from_this(), key, Endpoint::Embeddings);
    in_flight_.emplace(key, std::move(entry));
}

// TCP: the connection acts for the user of `api_key` from now on.
json::value RpcConnection::authenticate(const RpcRequest& request) {
    if (!peer_.tcp)
        throw ApiError(ErrorKind::InvalidRequest, "authenticate is for TCP connections; on the Unix socket you are your uid");
    const Fields fields(request.params);
    fields.allow_only({"api_key"});
    const std::string_view key = string_value(fields.required("api_key"), "api_key", 1024);
    uid_ = server_.tcp_uid("Bearer " + std::string(key));
    return json::object{{"user", server_.user_name(*uid_)}};
}

void RpcConnection::cancel(const RpcRequest& request) {
    const Fields fields(request.params);
    fields.allow_only({"id"});
    const json::value* target = request.params.if_contains("id");
    if (target == nullptr)
        throw invalid_params("id", "id (of the request to cancel) is missing");
    bool found = false;
    for (const auto& [key, entry] : in_flight_) {
        if (entry.id && *entry.id == *target) {
            server_.engine().cancel(entry.handle);
            found = true;
        }
    }
    if (request.id)
        send(result_line(*request.id, json::object{{"cancelled", found}}), false);
}

void RpcConnection::on_text(uint64_t key, std::string text) {
    const auto it = in_flight_.find(key);
    if (it == in_flight_.end() || !it->second.stream || !it->second.id)
        return;
    if (it->second.reply)
        send_parts(it->second, it->second.reply->feed(text));
    else
        send(notification_line("token", json::object{{"id", *it->second.id}, {"text", std::move(text)}}), true);
}

void RpcConnection::send_parts(const InFlight& entry, const ChatReply& parts) {
    if (parts.reasoning.empty() && parts.answer.content.empty())
        return;
    json::object token{{"id", *entry.id}, {"text", parts.answer.content}};
    if (!parts.reasoning.empty())
        token["reasoning"] = parts.reasoning;
    send(notification_line("token", std::move(token)), true);
}

void RpcConnection::on_done(uint64_t key, engine::Result result) {
    finish(key, [&](const json::value& id) {
        InFlight& entry = in_flight_.at(key);
        if (entry.reply) {
            if (entry.stream)
                send_parts(entry, entry.reply->finish());
            const ChatReply whole = parse_chat_reply(result.text, entry.reasoning, nullptr);
            json::object out = result_json(result, entry.session, entry.seed);
            out["text"] = whole.answer.content;
            out["reasoning"] = whole.reasoning;
            return result_line(id, std::move(out));
        }
        if (!entry.embed_base64)
            return result_line(id, result_json(result, entry.session, entry.seed));
        if (result.finish_reason != "stop")
            return error_line(id, embed_ended(result.finish_reason));
        return result_line(id, embeddings_json(result, *entry.embed_base64, server_.model_id()));
    });
}

void RpcConnection::on_error(uint64_t key, ApiError error) {
    finish(key, [&](const json::value& id) { return error_line(id, error); });
}

void RpcConnection::finish(uint64_t key, const std::function<std::string(const json::value&)>& answer) {
    const auto it = in_flight_.find(key);
    if (it == in_flight_.end())
        return;
    if (it->second.id)
        send(answer(*it->second.id), true);
    in_flight_.erase(key);
    close_if_done();
}

void RpcConnection::request_overdue() {
    const double seconds = server_.settings().server.idle_timeout_ms / 1000.0;
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", seconds);
    send(error_line(nullptr, ApiError(ErrorKind::InvalidRequest, std::string("no complete request line within ") +
                                                                     shown + " s (server.idle_timeout); closing")),
         false);
    cancel_requests();
    forget_requests();
    close_after_output();
}

void RpcConnection::end_of_input() {
    input_ended_ = true;
    expect_request(false);
    if (peer_gone(socket_)) {
        client_gone("the client closed the connection");
        return;
    }
    // Only the client's writing side is shut (`echo request | socat ...`): answer what was
    // asked, then close. A last line without '\n' still counts.
    if (!skipping_line_ && !line_.empty())
        handle_line(std::exchange(line_, {}));
    closing_ = true;
    if (!in_flight_.empty())
        watch_for_hangup(socket_, self(this), [this] { client_gone("the client hung up"); });
    close_if_done();
}

void RpcConnection::cancel_requests() {
    for (const auto& [key, entry] : in_flight_)
        server_.engine().cancel(entry.handle);
}

void RpcConnection::close_when_idle() {
    closing_ = true;
    close_if_done();
}

void RpcConnection::close_if_done() {
    if (closing_ && in_flight_.empty())
        close_after_output();
}

}  // namespace strata::daemon
