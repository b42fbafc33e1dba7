// daemon/openai/http_connection.cpp — one HTTP/1.1 connection (see http_connection.h).
// GCC 12 reports a false -Wmaybe-uninitialized for boost::optional inside Beast's parser
// (basic_parser::content_length, inlined here at -O2 with sanitizers); the parser's
// code is Boost's, so the warning is silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "openai/http_connection.h"

#include <algorithm>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "host/log.h"

namespace strata::daemon {
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace {

constexpr uint32_t kHeaderLimit = 16 * 1024;
constexpr size_t kWatchChunk = 4096;
constexpr const char* kServerName = "stratad/" STRATA_VERSION;

std::string_view view(beast::string_view text) { return {text.data(), text.size()}; }

// One chunk of a chunked body.
std::string chunk(const std::string& payload) {
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", payload.size());
    return size + payload + "\r\n";
}

}  // namespace

HttpConnection::HttpConnection(Server& server, Socket socket, Peer peer, Server::Slot slot, std::string received)
    : ClientConnection(server, std::move(socket), peer, std::move(slot), "HTTP") {
    const auto space = buffer_.prepare(received.size());
    std::memcpy(space.data(), received.data(), received.size());
    buffer_.commit(received.size());
}

void HttpConnection::start(bool input_ended) {
    join_registry();
    input_ended_ = input_ended;
    next_request();
}

void HttpConnection::refuse(const ApiError& error) {
    keep_alive_ = false;
    reply(error_reply(error));
    close_after_output();
}

void HttpConnection::next_request() {
    if (closed_ || closing_) {
        close_after_output();
        return;
    }
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(server_.settings().server.max_request_bytes);
    expect_request(true);
    reading_ = true;
    http::async_read_header(socket_, buffer_, *parser_, [self = self(this)](boost::system::error_code ec, size_t) {
        self->on_read(ec, true);
    });
}

// After the header (`header_only`), then after the whole request.
void HttpConnection::on_read(boost::system::error_code ec, bool header_only) {
    reading_ = false;
    if (closed_)
        return;
    if (ec) {
        read_failed(ec);
        return;
    }
    if (!header_only) {
        expect_request(false);
        handle(parser_->get());
        return;
    }
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue"))
        send("HTTP/1.1 100 Continue\r\n\r\n", false);
    reading_ = true;
    http::async_read(socket_, buffer_, *parser_, [self = self(this)](boost::system::error_code read_ec, size_t) {
        self->on_read(read_ec, false);
    });
}

void HttpConnection::read_failed(boost::system::error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::operation_aborted) {
        close_after_output();
        return;
    }
    keep_alive_ = false;
    if (ec == http::error::body_limit) {
        ++server_.counters().http_requests_total;
        reply({413, "application/json",
               json::serialize(error_json(ApiError(ErrorKind::InvalidRequest,
                                                   "the request body is larger than server.max_request_bytes (" +
                                                       std::to_string(server_.settings().server.max_request_bytes) +
                                                       " bytes)"))) + "\n",
               {}});
    } else if (ec == http::error::header_limit) {
        ++server_.counters().http_requests_total;
        reply({431, "application/json",
               json::serialize(error_json(ApiError(ErrorKind::InvalidRequest, "the request header is larger than " +
                                                                                  std::to_string(kHeaderLimit) +
                                                                                  " bytes"))) + "\n",
               {}});
    } else if (ec.category() == http::make_error_code(http::error::bad_method).category()) {
        ++server_.counters().http_requests_total;
        reply(error_reply(ApiError(ErrorKind::InvalidRequest, "malformed HTTP request: " + ec.message())));
    } else {
        client_gone("reading failed: " + ec.message());
        return;
    }
    refuse_after_output();
}

void HttpConnection::request_overdue() {
    keep_alive_ = false;
    if (parser_ && (parser_->got_some() || buffer_.size() > 0)) {
        ++server_.counters().http_requests_total;
        reply({408, "application/json",
               json::serialize(error_json(ApiError(ErrorKind::InvalidRequest,
                                                   "the request was not complete within server.idle_timeout"))) + "\n",
               {}});
    }
    cancel_requests();
    forget_requests();
    close_after_output();
}

void HttpConnection::handle(const http::request<http::string_body>& request) {
    ++server_.counters().http_requests_total;
    keep_alive_ = request.keep_alive() && !closing_;
    version_ = request.version();
    messages_errors_ = is_messages_path(view(request.target()));
    const bool head = request.method() == http::verb::head;
    try {
        Routed routed = route(server_, view(request.method_string()), view(request.target()), request.body(),
                              caller_of(request));
        if (const auto* plain = std::get_if<HttpReply>(&routed)) {
            reply(*plain, head);
            after_response();
            return;
        }
        if (auto* embed = std::get_if<EmbedCall>(&routed)) {
            begin_embedding(std::move(*embed));
            return;
        }
        if (auto* messages = std::get_if<MessagesCall>(&routed)) {
            begin_messages(std::move(*messages));
            return;
        }
        if (auto* rerank = std::get_if<RerankCall>(&routed)) {
            begin_rerank(std::move(*rerank));
            return;
        }
        if (auto* infill = std::get_if<InfillCall>(&routed)) {
            begin_infill(std::move(*infill));
            return;
        }
        if (auto* responses = std::get_if<ResponsesCall>(&routed)) {
            begin_responses(std::move(*responses));
            return;
        }
        begin_generation(std::move(std::get<OpenAiCall>(routed)));
    } catch (const ApiError& error) {
        request_failed(error);
    } catch (const engine::EngineError& error) {
        request_failed(from_engine(error));
    } catch (const std::exception& error) {
        log::error("internal error in HTTP ", view(request.target()), " for ", peer_.describe(), ": ", error.what());
        request_failed(ApiError(ErrorKind::Internal, std::string("internal error: ") + error.what()));
    }
}

// On TCP every path but /health needs an API key (Authorization: Bearer KEY, or Anthropic's
// x-api-key: KEY).
Caller HttpConnection::caller_of(const http::request<http::string_body>& request) const {
    Caller caller{peer_.uid, std::string(view(request[kSessionHeader]))};
    const std::string_view target = view(request.target());
    const std::string_view api_key = view(request["x-api-key"]);
    if (peer_.tcp && target.substr(0, target.find('?')) != "/health")
        caller.uid = server_.tcp_uid(request.count(http::field::authorization) != 0 || api_key.empty()
                                         ? std::string(view(request[http::field::authorization]))
                                         : "Bearer " + std::string(api_key));
    return caller;
}

HttpReply HttpConnection::error_for(const ApiError& error) const {
    return messages_errors_ ? messages_error_reply(error) : error_reply(error);
}

void HttpConnection::request_failed(const ApiError& error) {
    reply(error_for(error));
    after_response();
}

void HttpConnection::begin_generation(OpenAiCall call) {
    Active active;
    active.n = call.n;
    active.endpoint = call.kind == OpenAiKind::Chat ? Endpoint::ChatCompletions : Endpoint::Completions;
    active.stream = call.stream;
    active.include_usage = call.include_usage;
    active.reply = new_reply(call.kind, server_.model_id());
    active.reply.tools = call.tools;
    active.reply.reasoning = call.reasoning;
    if (call.n > 1)
        active.rest = call.request;
    submit_choice(active, std::move(call.request));
    active_ = std::move(active);
    watch_while_active();
}

void HttpConnection::begin_embedding(EmbedCall call) {
    Active active;
    active.endpoint = Endpoint::Embeddings;
    active.embed_base64 = call.base64;
    submit_choice(active, std::move(call.request));
    active_ = std::move(active);
    watch_while_active();
}

void HttpConnection::begin_messages(MessagesCall call) {
    Active active;
    active.endpoint = Endpoint::ChatCompletions;
    active.stream = call.stream;
    active.count_tokens = call.kind == MessagesKind::CountTokens;
    active.messages.emplace(new_messages_reply(call));
    submit_choice(active, std::move(call.request));
    active_ = std::move(active);
    watch_while_active();
}

void HttpConnection::begin_infill(InfillCall call) {
    Active active;
    active.stream = call.stream;
    submit_choice(active, std::move(call.request));
    active.infill = std::move(call);
    active_ = std::move(active);
    watch_while_active();
}

void HttpConnection::begin_responses(ResponsesCall call) {
    Active active;
    active.endpoint = Endpoint::ChatCompletions;
    active.stream = call.stream;
    active.uid = call.request.uid;
    call.reply.reasoning = call.reasoning;
    active.responses.emplace(std::move(call.reply));
    submit_choice(active, std::move(call.request));
    active_ = std::move(active);
    watch_while_active();
}

void HttpConnection::begin_rerank(RerankCall call) {
    Active active;
    active.endpoint = Endpoint::Embeddings;
    submit_choice(active, std::move(call.request));
    active.rerank = std::move(call);
    active_ = std::move(active);
    watch_while_active();
}

void HttpConnection::store_response(const json::object& response) {
    const ResponsesReply& reply = active_->responses->reply();
    if (reply.store)
        server_.responses().put(active_->uid, response, reply.context);
}

// Submits a request as the next choice of `active` (before it is active_, so that a
// request the engine refuses leaves no active generation behind).
void HttpConnection::submit_choice(Active& active, engine::GenerateRequest request) {
    const uint64_t key = next_key_++;
    const uint64_t handle = server_.submit(std::move(request), weak_from_this(), key, active.endpoint);
    active.choices.push_back({key, handle, std::nullopt, {}});
}

// Choices 1..n-1: the same request, seeds seed + i.
void HttpConnection::submit_rest() {
    if (!active_ || !active_->rest)
        return;
    const engine::GenerateRequest base = std::move(*active_->rest);
    active_->rest.reset();
    try {
        for (int32_t i = 1; i < active_->n; ++i) {
            engine::GenerateRequest request = base;
            request.sampling.seed = base.sampling.seed + static_cast<uint64_t>(i);
            submit_choice(*active_, std::move(request));
        }
    } catch (const ApiError& error) {  // e.g. the queue is full: the whole request fails
        on_error(active_->choices.front().key, error);
    } catch (const engine::EngineError& error) {
        on_error(active_->choices.front().key, from_engine(error));
    }
}

int HttpConnection::choice_of(uint64_t key) const {
    if (!active_)
        return -1;
    for (size_t i = 0; i < active_->choices.size(); ++i)
        if (active_->choices[i].key == key)
            return static_cast<int>(i);
    return -1;
}

// The event stream's header goes out with its first event, so that a request the engine
// rejects before generating anything still gets its proper status.
void HttpConnection::start_stream() {
    if (active_->streaming)
        return;
    active_->streaming = true;
    http::response<http::empty_body> header{http::status::ok, version_};
    header.set(http::field::server, kServerName);
    header.set(http::field::content_type, "text/event-stream");
    header.set(http::field::cache_control, "no-cache");
    if (version_ < 11)
        keep_alive_ = false;  // HTTP/1.0: no chunks; the end of the connection ends the stream
    header.keep_alive(keep_alive_);
    header.chunked(version_ >= 11);
    std::ostringstream text;
    text << header.base();
    send(text.str(), false);
    if (active_->messages)
        send_stream(active_->messages->start());
    else if (active_->responses)
        send_stream(active_->responses->start());
    else if (active_->reply.kind == OpenAiKind::Chat)
        for (int32_t i = 0; i < active_->n; ++i)
            send_event(json::serialize(role_chunk_json(active_->reply, i)));
}

void HttpConnection::end_stream() {
    if (!active_->messages && !active_->infill && !active_->responses)
        send_event("[DONE]");
    if (version_ >= 11)
        send("0\r\n\r\n", true);
}

void HttpConnection::watch_while_active() {
    if (reading_ || input_ended_ || closed_ || !active_)
        return;
    if (buffer_.size() > server_.settings().server.max_request_bytes + kHeaderLimit)
        return;  // enough of the next request is buffered; read the rest after this answer
    reading_ = true;
    socket_.async_read_some(buffer_.prepare(kWatchChunk), [self = self(this)](boost::system::error_code ec,
                                                                              size_t count) {
        self->on_watch_read(ec, count);
    });
}

void HttpConnection::on_watch_read(boost::system::error_code ec, size_t count) {
    reading_ = false;
    if (closed_)
        return;
    if (ec == asio::error::eof) {
        input_ended_ = true;
        if (peer_gone(socket_)) {
            client_gone("the client closed the connection");
            return;
        }
        if (active_) {
            watch_for_hangup(socket_, self(this), [this] { client_gone("the client hung up"); });
            return;
        }
    } else if (ec) {
        client_gone("reading failed: " + ec.message());
        return;
    } else {
        buffer_.commit(count);
    }
    if (active_)
        watch_while_active();
    else
        after_response();
}

void HttpConnection::on_text(uint64_t key, std::string text) {
    const int i = choice_of(key);
    if (i < 0)
        return;
    if (i == 0)
        submit_rest();
    if (!active_ || !active_->stream)
        return;
    start_stream();
    if (active_)
        stream_text(i, text);
}

// Text goes out as it comes; a chat reply's thinking as reasoning_content, and of its answer
// only what cannot be the start of a call.
void HttpConnection::stream_text(int index, const std::string& text) {
    if (active_->messages) {
        send_stream(active_->messages->text(text));
        return;
    }
    if (active_->infill) {
        if (!active_->infill->warm_only)
            send_event(json::serialize(infill_chunk_json(text)));
        return;
    }
    if (active_->responses) {
        send_stream(active_->responses->text(text));
        return;
    }
    Choice& choice = active_->choices[static_cast<size_t>(index)];
    if (active_->reply.kind != OpenAiKind::Chat) {
        send_event(json::serialize(text_chunk_json(active_->reply, index, text, choice.logprobs)));
        choice.logprobs.clear();
        return;
    }
    if (!choice.reply)
        choice.reply.emplace(active_->reply.reasoning, active_->reply.tools);
    stream_parts(index, choice.reply->feed(text));
}

void HttpConnection::stream_parts(int index, const ChatReply& parts) {
    Choice& choice = active_->choices[static_cast<size_t>(index)];
    if (!parts.reasoning.empty())
        send_event(json::serialize(reasoning_chunk_json(active_->reply, index, parts.reasoning)));
    if (parts.answer.content.empty() && choice.logprobs.empty())
        return;
    send_event(json::serialize(text_chunk_json(active_->reply, index, parts.answer.content, choice.logprobs)));
    choice.logprobs.clear();
}

// A choice's last chunks: a chat reply's held text and its calls; then its finish reason.
void HttpConnection::stream_end(int index, const engine::Result& result) {
    if (active_->messages) {
        send_stream(active_->messages->end(result));
        return;
    }
    if (active_->infill) {
        send_event(json::serialize(infill_json(*active_->infill, result, server_.model_id())));
        return;
    }
    if (active_->responses) {
        send_stream(active_->responses->end(result));
        return;
    }
    Choice& choice = active_->choices[static_cast<size_t>(index)];
    std::string finish_reason = result.finish_reason;
    if (active_->reply.kind == OpenAiKind::Chat) {
        if (!choice.reply)
            choice.reply.emplace(active_->reply.reasoning, active_->reply.tools);
        const ChatReply rest = choice.reply->finish();
        if (!rest.reasoning.empty())
            send_event(json::serialize(reasoning_chunk_json(active_->reply, index, rest.reasoning)));
        if (!rest.answer.content.empty())
            send_event(json::serialize(text_chunk_json(active_->reply, index, rest.answer.content, {})));
        if (!rest.answer.calls.empty())
            send_event(json::serialize(tool_calls_chunk_json(active_->reply, index, rest.answer.calls)));
        finish_reason = finish_reason_of(rest.answer, finish_reason);
    }
    send_event(json::serialize(final_chunk_json(active_->reply, index, finish_reason, choice.logprobs)));
    choice.logprobs.clear();
}

void HttpConnection::on_logprobs(uint64_t key, engine::TokenLogprobs logprobs) {
    if (const int i = choice_of(key); i >= 0 && active_->stream)
        active_->choices[static_cast<size_t>(i)].logprobs.push_back(std::move(logprobs));
}

void HttpConnection::on_done(uint64_t key, engine::Result result) {
    const int i = choice_of(key);
    if (i < 0)
        return;
    if (active_->rerank || active_->embed_base64) {
        if (result.finish_reason != "stop")
            reply(error_reply(embed_ended(result.finish_reason)));
        else if (active_->rerank)
            reply({200, "application/json", json::serialize(rerank_json(*active_->rerank, result, server_.model_id())) + "\n", {}});
        else
            reply({200, "application/json", json::serialize(embeddings_json(result, *active_->embed_base64, server_.model_id())) + "\n", {}});
        end_generation();
        return;
    }
    if (i == 0)
        submit_rest();
    if (!active_)
        return;
    if (active_->stream) {
        start_stream();
        if (!active_)
            return;
        stream_end(i, result);
    }
    active_->choices[static_cast<size_t>(i)].result = std::move(result);
    const auto& choices = active_->choices;
    if (static_cast<int32_t>(choices.size()) == active_->n &&
        std::all_of(choices.begin(), choices.end(), [](const Choice& c) { return c.result.has_value(); }))
        answer_choices();
}

void HttpConnection::answer_choices() {
    std::vector<engine::Result> results;
    for (Choice& choice : active_->choices)
        results.push_back(std::move(*choice.result));
    if (active_->infill && !active_->stream) {
        reply({200, "application/json", json::serialize(infill_json(*active_->infill, results.front(), server_.model_id())) + "\n", {}});
    } else if (active_->responses && !active_->stream) {
        const ResponsesReply& shape = active_->responses->reply();
        const json::object body = response_json(shape, results.front(), parse_output(shape, results.front().text));
        store_response(body);
        reply({200, "application/json", json::serialize(body) + "\n", {}});
    } else if (active_->responses) {
        store_response(active_->responses->finished());
        end_stream();
    } else if (active_->messages && !active_->stream) {
        const json::object body = active_->count_tokens ? count_tokens_json(results.front())
                                                        : message_json(active_->messages->reply(), results.front());
        reply({200, "application/json", json::serialize(body) + "\n", {}});
    } else if (!active_->stream) {
        reply({200, "application/json", json::serialize(response_json(active_->reply, results)) + "\n", {}});
    } else {
        if (active_->include_usage)
            send_event(json::serialize(usage_chunk_json(active_->reply, choices_usage(results))));
        end_stream();
    }
    end_generation();
}

// One choice failed: the others are cancelled and the request fails.
void HttpConnection::on_error(uint64_t key, ApiError error) {
    if (choice_of(key) < 0)
        return;
    cancel_choices(key);
    if (!active_->streaming) {
        reply(error_for(error));
    } else if (active_->messages) {
        send_stream(MessagesStream::error(error));
        end_stream();
    } else if (active_->responses) {
        send_stream(active_->responses->error(error));
        end_stream();
    } else {
        send_event(json::serialize(error_json(error)));
        end_stream();
    }
    end_generation();
}

void HttpConnection::end_generation() {
    if (!active_)
        return;  // dropped while answering
    active_.reset();
    after_response();
}

void HttpConnection::after_response() {
    if (closed_)
        return;
    if (!keep_alive_ || closing_) {
        close_after_output();
        return;
    }
    if (!reading_)  // else the pending read goes on with the next request
        next_request();
}

void HttpConnection::reply(const HttpReply& reply, bool head) {
    http::response<http::string_body> response{static_cast<http::status>(reply.status), version_};
    response.set(http::field::server, kServerName);
    response.set(http::field::content_type, reply.content_type);
    if (!reply.allow.empty())
        response.set(http::field::allow, reply.allow);
    if (reply.retry_after != 0)
        response.set(http::field::retry_after, std::to_string(reply.retry_after));
    if (reply.status == 401)
        response.set(http::field::www_authenticate, "Bearer");
    response.keep_alive(keep_alive_);
    response.body() = reply.body;
    response.prepare_payload();
    std::ostringstream text;
    if (head)
        text << response.base();
    else
        text << response;
    send(text.str(), false);
}

void HttpConnection::send_event(const std::string& data) { send_stream("data: " + data + "\n\n"); }

void HttpConnection::send_stream(const std::string& events) {
    if (!events.empty())
        send(version_ >= 11 ? chunk(events) : events, true);
}

void HttpConnection::cancel_requests() {
    if (active_)
        cancel_choices(std::nullopt);
}

// The choices still running, but the one `ended` (it reported its end already), and those
// not yet submitted.
void HttpConnection::cancel_choices(std::optional<uint64_t> ended) {
    active_->rest.reset();
    for (const Choice& choice : active_->choices)
        if (choice.key != ended && !choice.result)
            server_.engine().cancel(choice.handle);
}

void HttpConnection::close_when_idle() {
    closing_ = true;
    keep_alive_ = false;  // an answer still to come says Connection: close
    if (!active_)
        close_after_output();
}

}  // namespace strata::daemon
