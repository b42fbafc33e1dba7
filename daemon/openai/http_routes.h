// daemon/openai/http_routes.h — what each HTTP path does: GET /health (the one path open
// without an API key on TCP: for load balancers), GET /metrics,
// GET /v1/models, POST /v1/completions and /v1/chat/completions (which become
// generations the connection runs), POST /v1/messages and /v1/messages/count_tokens
// (Anthropic's, anthropic/messages.h), POST /v1/responses (OpenAI's Responses,
// responses/responses.h) with GET and DELETE /v1/responses/{id} (the caller's stored
// responses, responses/response_store.h), POST /v1/embeddings (embeddings it runs),
// POST /infill (llama.cpp's fill-in-the-middle, llamacpp/infill.h) and POST /v1/rerank,
// /rerank, /v1/reranking (llamacpp/rerank.h). Owns: the routing table, methods allowed per path,
// request body parsing, and plain (non-streamed) reply bodies.
// Must not touch: sockets and HTTP framing (http_connection.h).
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "anthropic/messages.h"
#include "llamacpp/infill.h"
#include "llamacpp/rerank.h"
#include "openai/openai.h"
#include "protocol/embeddings.h"
#include "protocol/errors.h"
#include "responses/responses.h"
#include "transport/server.h"

namespace strata::daemon {

struct HttpReply {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::string allow;  // the Allow header of a 405
    unsigned retry_after = 0;  // seconds, the Retry-After header of a 429 or 503 (0: none)
};

HttpReply error_reply(const ApiError& error);
HttpReply messages_error_reply(const ApiError& error);  // in Anthropic's shape and statuses
bool is_messages_path(std::string_view target);          // errors there are Anthropic's

// Who asks (the uid a request runs as: the peer's on the Unix socket, its API key's user on
// TCP), and the session its X-Strata-Session header names ("" = none; the same as the
// body's "session", which it must not contradict).
struct Caller {
    uint32_t uid = 0;
    std::string session;
};

inline constexpr const char* kSessionHeader = "X-Strata-Session";

// A reply at once, or a generation or embeddings request to run.
using Routed = std::variant<HttpReply, OpenAiCall, MessagesCall, ResponsesCall, EmbedCall, InfillCall, RerankCall>;
Routed route(Server& server, std::string_view method, std::string_view target, const std::string& body,
             const Caller& caller);

}  // namespace strata::daemon
