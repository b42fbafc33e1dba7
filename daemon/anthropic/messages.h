// daemon/anthropic/messages.h — Anthropic's Messages API mapped onto the engine: bodies of
// POST /v1/messages and /v1/messages/count_tokens → engine::GenerateRequest (system, messages
// with text / tool_use / tool_result blocks, tools and tool_choice, max_tokens,
// stop_sequences, sampling), and results → Anthropic message objects, count_tokens answers
// and error bodies ({"type":"error","error":{"type","message"}}) with Anthropic's statuses.
// The model's thinking (protocol/reply_stream.h) comes back as a `thinking` block before the
// answer (its signature empty); `thinking` is accepted (disabled: the template's
// enable_thinking is false; display omitted: no thinking blocks); thinking blocks sent back in
// assistant turns are left out (as the templates of thinking models leave earlier thinking out).
// Owns: Anthropic shapes. Must not touch: HTTP framing and routing (openai/http_*.h), event
// streams (anthropic/messages_stream.h), the OpenAI shapes (openai/openai.h).
#pragma once

#include <boost/json/object.hpp>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "protocol/errors.h"
#include "protocol/generate_params.h"
#include "protocol/reply_stream.h"
#include "protocol/tool_calls.h"

namespace strata::daemon {

enum class MessagesKind { Create, CountTokens };

struct MessagesCall {
    MessagesKind kind = MessagesKind::Create;
    engine::GenerateRequest request;
    std::shared_ptr<const ToolUse> tools;  // null: no tools, or tool_choice none
    std::vector<std::string> stop_sequences;
    bool stream = false;
    std::string model;  // as the request names it (echoed back)
    chat::ReasoningSyntax reasoning;  // how the reply separates thinking (set by the router)
    bool show_thinking = true;        // thinking blocks in the reply
};

// Throws ApiError (invalid_params naming the field, also for what strata does not support:
// image and document blocks, server tools). max_tokens above limits.max_tokens is lowered to
// it (Anthropic's max_tokens is a ceiling; agents send 32000). count_tokens runs the prompt
// with max_tokens 1: its usage counts the prompt exactly as /v1/messages would.
MessagesCall parse_messages(MessagesKind kind, const boost::json::object& body, const RequestContext& context,
                            ToolFormat format);

// Names shared by every object of one response.
struct MessagesReply {
    std::string id;  // "msg_..."
    std::string model;
    std::shared_ptr<const ToolUse> tools;
    std::vector<std::string> stop_sequences;
    chat::ReasoningSyntax reasoning;
    bool show_thinking = true;
};
MessagesReply new_messages_reply(const MessagesCall& call);

// The stop reason and the stop sequence (or null) of a result whose calls are `parsed`.
struct StopReason {
    std::string reason;  // end_turn, max_tokens, stop_sequence, tool_use
    boost::json::value sequence;
};
StopReason stop_reason(const MessagesReply& reply, const engine::Result& result, const ParsedReply& parsed);
boost::json::object thinking_block(const std::string& thinking);  // "" when streamed

boost::json::object tool_use_block(const ToolCall& call, bool with_input);  // input {} when streamed
boost::json::object messages_usage(const engine::Usage& usage);
boost::json::object message_json(const MessagesReply& reply, const engine::Result& result);
boost::json::object count_tokens_json(const engine::Result& result);  // {"input_tokens": N}

unsigned messages_status(ErrorKind kind);  // Anthropic's: 400, 401, 403, 404, 429, 500, 529
boost::json::object messages_error_json(const ApiError& error);

}  // namespace strata::daemon
