// daemon/openai/http_connection.h — one HTTP/1.1 connection (Boost.Beast) on the daemon's
// socket: keep-alive, one request at a time, request bodies up to server.max_request_bytes
// (413 beyond), Expect: 100-continue, plain JSON replies, and OpenAI generations answered
// as one JSON object or streamed as server-sent events (chunked for HTTP/1.1; for HTTP/1.0
// until the connection closes).
// While a generation runs the connection keeps reading (raw bytes, kept for the next
// request) so that a client that leaves is noticed and its generation cancelled.
// A request (header and body) must arrive within server.idle_timeout of the previous
// answer (or of connecting): 408 when one was begun, else the connection just closes.
// On TCP each request acts for the user of its API key (401 without a valid one; /health
// needs none). While the daemon stops, answers say Connection: close and an idle
// connection closes at once (a load balancer then sends no more requests on it).
// Anthropic's /v1/messages runs the same way, its reply and events shaped by
// anthropic/messages_stream.h, its errors in Anthropic's shape; on TCP its x-api-key header
// is an API key as Authorization: Bearer is. OpenAI's /v1/responses runs the same way, its
// events shaped by responses/responses_stream.h; a finished response with store: true goes
// to the server's store.
// An OpenAI request with n > 1 runs as n engine requests (the first, then the others once
// its prompt is in the KV cache), answered together or streamed with their indexes.
// Owns: HTTP framing and the connection's one active generation.
// Must not touch: routing (http_routes.h), OpenAI shapes (openai.h).
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <memory>
#include <optional>
#include <string>

#include "anthropic/messages_stream.h"
#include "responses/responses_stream.h"
#include "openai/http_routes.h"
#include "openai/openai.h"
#include "transport/client_connection.h"

namespace strata::daemon {

class HttpConnection final : public ClientConnection {
public:
    // `received`: the bytes already read while the protocol was being recognised.
    HttpConnection(Server& server, Socket socket, Peer peer, Server::Slot slot, std::string received);

    // `input_ended`: the client already shut its writing side.
    void start(bool input_ended);
    void refuse(const ApiError& error);  // answers with this error and closes

    void cancel_requests() override;
    void close_when_idle() override;

    void on_text(uint64_t key, std::string text) override;
    void on_logprobs(uint64_t key, engine::TokenLogprobs logprobs) override;
    void on_done(uint64_t key, engine::Result result) override;
    void on_error(uint64_t key, ApiError error) override;

private:
    // One choice of the active request (OpenAI's n; an embedding request has one).
    struct Choice {
        uint64_t key = 0;
        uint64_t handle = 0;
        std::optional<engine::Result> result;         // once it ended
        std::vector<engine::TokenLogprobs> logprobs;  // streaming: those of tokens whose text is not sent yet
        std::optional<ReplyStream> reply;             // streaming a chat reply: its thinking, answer and calls
    };
    struct Active {
        std::vector<Choice> choices;
        int32_t n = 1;
        Endpoint endpoint = Endpoint::Completions;
        bool stream = false;
        bool streaming = false;  // the event stream's header is sent
        bool include_usage = false;
        OpenAiReply reply;
        std::optional<bool> embed_base64;  // /v1/embeddings: its encoding (absent: a generation)
        std::optional<MessagesStream> messages;  // /v1/messages: its reply (absent: OpenAI's)
        bool count_tokens = false;               // /v1/messages/count_tokens
        std::optional<InfillCall> infill;        // /infill: its fields (its request submitted)
        std::optional<RerankCall> rerank;        // /v1/rerank: its fields (its request submitted)
        std::optional<ResponsesStream> responses;  // /v1/responses: its reply
        uint32_t uid = 0;                          // /v1/responses: whose stored response it becomes
        // n > 1: the request of the other choices, submitted once the first choice has its
        // prompt in the KV cache (they then reuse it from the prefix cache).
        std::optional<engine::GenerateRequest> rest;
    };

    void next_request();
    void on_read(boost::system::error_code ec, bool header_only);
    void read_failed(boost::system::error_code ec);
    void request_overdue() override;  // 408 for a request begun, then closes
    void handle(const boost::beast::http::request<boost::beast::http::string_body>& request);
    Caller caller_of(const boost::beast::http::request<boost::beast::http::string_body>& request) const;
    void begin_generation(OpenAiCall call);
    void begin_embedding(EmbedCall call);
    void begin_messages(MessagesCall call);
    void begin_infill(InfillCall call);
    void begin_rerank(RerankCall call);
    void begin_responses(ResponsesCall call);
    void store_response(const boost::json::object& response);
    void submit_choice(Active& active, engine::GenerateRequest request);
    void cancel_choices(std::optional<uint64_t> ended);
    void submit_rest();
    int choice_of(uint64_t key) const;  // its index in active_->choices, or -1
    void answer_choices();              // every choice has ended
    void stream_text(int index, const std::string& text);
    void stream_end(int index, const engine::Result& result);
    void stream_parts(int index, const ChatReply& parts);  // a chat choice's thinking and answer text
    void end_generation();
    void start_stream();
    void end_stream();
    void watch_while_active();
    void on_watch_read(boost::system::error_code ec, size_t count);

    void reply(const HttpReply& reply, bool head = false);
    void send_event(const std::string& data);  // a streamed event: engine output
    void send_stream(const std::string& events);  // events as they go on the wire ("": none)
    HttpReply error_for(const ApiError& error) const;  // in the shape of the request's API
    void after_response();
    void request_failed(const ApiError& error);

    size_t requests_in_flight() const override { return active_ ? 1 : 0; }
    void forget_requests() override { active_.reset(); }

    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    std::optional<Active> active_;
    uint64_t next_key_ = 1;
    bool keep_alive_ = true;
    unsigned version_ = 11;     // of the request being answered: 10 or 11
    bool reading_ = false;      // a read of the socket is pending
    bool input_ended_ = false;
    bool closing_ = false;
    bool messages_errors_ = false;  // the request being answered is Anthropic's
};

}  // namespace strata::daemon
