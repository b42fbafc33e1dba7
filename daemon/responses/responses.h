// daemon/responses/responses.h — OpenAI's Responses API mapped onto the engine: the body of
// POST /v1/responses → engine::GenerateRequest (`input` as a string or a list of items:
// messages with string or content-part content, function_call, function_call_output;
// `instructions`, `max_output_tokens` (absent: limits.max_tokens, as OpenAI sets no cap),
// sampling, function `tools` and `tool_choice`,
// `text.format`, `store`, `previous_response_id`), and results → response objects (output
// items `reasoning` (the model's thinking, when its template separates it), `message` and
// `function_call`, usage in the Responses shape).
// A response continues a stored one by its items: the stored input items and output go
// before the new input, so the prompt starts as the stored response's did and the engine's
// prefix cache serves it (usage.input_tokens_details.cached_tokens).
// Refused with invalid_params naming the field: tool types other than function (web_search,
// file_search, ...), background: true, conversation, prompt templates, images and files.
// reasoning.effort reaches the template as reasoning_effort. Accepted and ignored: include, metadata, user, prompt_cache_key, client_metadata,
// safety_identifier, truncation, service_tier auto/default, text.verbosity.
// Owns: Responses shapes. Must not touch: HTTP framing and routing (openai/http_*.h), the
// event stream (responses/responses_stream.h), the store (responses/response_store.h).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <functional>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "protocol/errors.h"
#include "protocol/generate_params.h"
#include "protocol/reply_stream.h"
#include "protocol/tool_calls.h"

namespace strata::daemon {

// The stored items of previous_response_id; throws ApiError when there is none.
using FindPrevious = std::function<boost::json::array(const std::string& id)>;

// Names and request fields shared by every object of one response.
struct ResponsesReply {
    std::string id;  // "resp_..."
    int64_t created_at = 0;
    std::string model;
    std::string message_id;    // "msg_...": the id of the output's message item
    std::string reasoning_id;  // "rs_...": the id of its reasoning item (the model's thinking)
    chat::ReasoningSyntax reasoning;  // how the model's reply separates thinking from the answer
    std::shared_ptr<const ToolUse> tools;
    boost::json::object echo;   // request fields the response object repeats (instructions, tools, text, ...)
    bool store = true;
    boost::json::array context;  // the items this response answered (stored ones first): stored with it
};

struct ResponsesCall {
    engine::GenerateRequest request;
    ResponsesReply reply;
    bool stream = false;
    chat::ReasoningSyntax reasoning;  // set by the routes, then the reply's
};

// Throws ApiError (invalid_params naming the field). `format`: the model's tool-call format.
ResponsesCall parse_responses(const boost::json::object& body, const RequestContext& context, ToolFormat format,
                              const std::string& model, const FindPrevious& previous);

// The reply's text and calls (no calls without tools).
ChatReply parse_output(const ResponsesReply& reply, std::string_view text);

boost::json::object responses_usage(const engine::Usage& usage);
// Output items: the message (its text so far, or "" and no content part while `done` is
// false) and one function call.
boost::json::object message_item(const ResponsesReply& reply, const std::string& text, bool done);
boost::json::object function_call_item(const ToolCall& call, bool done);
// The reasoning item: the thinking so far ("" and no content while `done` is false).
boost::json::object reasoning_item(const ResponsesReply& reply, const std::string& text, bool done);
boost::json::object output_text_part(const std::string& text);
// Whether the output has a message item: it has text, or no calls.
bool has_message(const ParsedReply& parsed);
// The output was cut (max_output_tokens, or the request's timeout): status "incomplete".
bool incomplete(const engine::Result& result, const ParsedReply& parsed);

// The response object: in progress (no output yet), finished, or failed with `error`.
boost::json::object pending_response_json(const ResponsesReply& reply);
// `parsed`: parse_output of the result's text (parsed once: call ids are drawn at random).
boost::json::object response_json(const ResponsesReply& reply, const engine::Result& result, const ChatReply& whole);
boost::json::object failed_response_json(const ResponsesReply& reply, const ApiError& error);
boost::json::object deleted_response_json(const std::string& id);

}  // namespace strata::daemon
