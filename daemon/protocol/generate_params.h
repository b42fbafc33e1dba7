// daemon/protocol/generate_params.h — turning the fields of a generation request (native `generate`
// params, or an OpenAI request body) into an engine::GenerateRequest, checking every
// field's JSON type (and that integers fit their C++ type) before any work; the values'
// ranges and the configured limits are checked by Engine::submit, which names the field
// the same way. Owns: the request fields shared by both protocols (session, sampling
// fields, stop strings, messages, max_tokens, seed, timeout). Must not touch: JSON-RPC framing
// (jsonrpc.h), OpenAI response shapes (openai.h).
#pragma once

#include <boost/json/object.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "engine/engine.h"
#include "protocol/fields.h"

namespace strata::daemon {

// Who asks, and the limits in force (default_max_tokens applies when max_tokens is absent).
struct RequestContext {
    uint32_t uid = 0;
    engine::Limits limits;
};

// A request's own deadline, `field` seconds (fractions allowed, above 0, at most 30 days).
// Throws invalid_params.
std::chrono::milliseconds request_timeout(double seconds, const std::string& field);

// A session name (a string; the engine checks its characters). Throws invalid_params.
std::string session_name(const boost::json::value& value, const std::string& field);

// A grammar's text compiled; a GrammarError becomes invalid_params naming field and the
// grammar's line and column.
std::shared_ptr<const grammar::Grammar> compile_grammar(std::string_view text, const std::string& field);

// `messages`: [{"role": "system"|"user"|"assistant", "content": string}]. With `openai`,
// role "developer" means system and content may also be an array of {"type":"text","text"}.
std::vector<engine::Message> read_messages(const boost::json::value& value, const std::string& field, bool openai);

// One call of an assistant turn as a chat template sees it (engine::Message::tool_calls holds
// a list of them): {"id", "type": "function", "function": {"name", "arguments": {...}}}.
chat::Value tool_call_value(const std::string& id, const std::string& name, const boost::json::value& arguments);

// chat_template_kwargs (an object: each member a top-level variable of the model's template,
// as transformers' apply_chat_template passes **kwargs, e.g. {"enable_thinking": false}) and
// reasoning_effort (a string, the template variable of that name, as gpt-oss's reads it).
void read_template_variables(const Fields& fields, engine::GenerateRequest& request);

// The fields both protocols spell the same way: sampling (temperature ... seed, logit_bias),
// stop, session, chat_template, chat_template_kwargs, reasoning_effort, ignore_eos, timeout
// (seconds), and max_tokens under the name `max_tokens_key`.
// The seed is drawn at random when absent (the result reports it).
void read_common_fields(const Fields& fields, const RequestContext& context, std::string_view max_tokens_key,
                        engine::GenerateRequest& request);

// The native `generate` params; unknown fields are rejected.
struct GenerateCall {
    engine::GenerateRequest request;
    bool stream = true;
};
GenerateCall parse_generate(const boost::json::object& params, const RequestContext& context);

}  // namespace strata::daemon
