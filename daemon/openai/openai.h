// daemon/openai/openai.h — the OpenAI-compatible HTTP API mapped onto the engine: request bodies
// of /v1/completions and /v1/chat/completions → engine::GenerateRequest (OpenAI field
// names plus strata's extensions: session, top_k, min_p, ...), and results → OpenAI
// response objects, streamed chunks, model lists and error bodies.
// Owns: OpenAI shapes. Must not touch: HTTP framing (http_connection.h), routing (http_routes.h).
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/engine.h"
#include "protocol/reply_stream.h"
#include "protocol/tool_calls.h"
#include "protocol/errors.h"
#include "protocol/generate_params.h"

namespace strata::daemon {

enum class OpenAiKind { Completion, Chat };

// The most choices one request may ask for (OpenAI's n).
inline constexpr int32_t kMaxChoices = 8;

struct OpenAiCall {
    OpenAiKind kind = OpenAiKind::Completion;
    std::shared_ptr<const ToolUse> tools;  // null: tools absent or tool_choice none
    chat::ReasoningSyntax reasoning;       // chat: how the reply separates thinking (set by the router)
    engine::GenerateRequest request;
    int32_t n = 1;               // choices: the request again with the seed + i (no session)
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage: a last chunk with usage
};

// Throws ApiError (invalid_params naming the field, also for unsupported features such as
// best_of > 1). `format`: the model's tool-call format (tool_format of its template).
OpenAiCall parse_openai(OpenAiKind kind, const boost::json::object& body, const RequestContext& context,
                        ToolFormat format = ToolFormat::Json);

// Names shared by every object of one response.
struct OpenAiReply {
    OpenAiKind kind = OpenAiKind::Completion;
    std::string id;       // "cmpl-..." or "chatcmpl-..."
    int64_t created = 0;  // unix seconds
    std::string model;
    std::shared_ptr<const ToolUse> tools;  // outputs are parsed for calls
    chat::ReasoningSyntax reasoning;       // chat: thinking goes to reasoning_content
};
OpenAiReply new_reply(OpenAiKind kind, const std::string& model);

// The choices' results in order; usage counts the prompt once (the first choice's: the
// others reuse its KV) and every choice's generated tokens.
boost::json::object response_json(const OpenAiReply& reply, std::span<const engine::Result> results);
engine::Usage choices_usage(std::span<const engine::Result> results);
boost::json::object role_chunk_json(const OpenAiReply& reply, int32_t index);  // a chat choice's stream starts with the role
// A chunk's logprobs are those of the tokens whose text it carries (the final chunk: any left).
boost::json::object text_chunk_json(const OpenAiReply& reply, int32_t index, const std::string& text,
                                    std::span<const engine::TokenLogprobs> logprobs);
// A chat choice's thinking: a delta with reasoning_content.
boost::json::object reasoning_chunk_json(const OpenAiReply& reply, int32_t index, const std::string& text);
boost::json::object final_chunk_json(const OpenAiReply& reply, int32_t index, const std::string& finish_reason,
                                     std::span<const engine::TokenLogprobs> logprobs);
boost::json::object usage_chunk_json(const OpenAiReply& reply, const engine::Usage& usage);
// A streamed choice's calls: one chunk, each call whole (id, name, arguments) at its index.
boost::json::object tool_calls_chunk_json(const OpenAiReply& reply, int32_t index, const std::vector<ToolCall>& calls);
// "tool_calls" when the reply's calls were parsed, else the engine's finish reason.
std::string finish_reason_of(const ParsedReply& parsed, const std::string& finish_reason);

boost::json::object error_json(const ApiError& error);  // {"error":{"message","type","code","param"}}
boost::json::object model_json(const std::string& model, int64_t created);   // one /v1/models entry
boost::json::object models_json(const std::string& model, int64_t created);  // the /v1/models list

}  // namespace strata::daemon
