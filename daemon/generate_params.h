// daemon/generate_params.h — turning the fields of a generation request (native `generate`
// params, or an OpenAI request body) into an engine::GenerateRequest, checking every
// field's type and range before any work. Owns: the request fields shared by both
// protocols (session names, sampling fields, stop strings, messages, max_tokens, seed).
// Must not touch: JSON-RPC framing (jsonrpc.h), OpenAI response shapes (openai.h).
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "engine/engine.h"
#include "fields.h"

namespace strata::daemon {

// What a request is checked against.
struct RequestContext {
    uint32_t uid = 0;
    int32_t n_vocab = 0;
    engine::Limits limits;
};

inline constexpr size_t kMaxStopStrings = 32;
inline constexpr size_t kMaxStopBytes = 1024;
inline constexpr size_t kMaxSessionName = 64;

// A session name: 1–64 characters of [A-Za-z0-9._-]. Throws invalid_params.
std::string session_name(const boost::json::value& value, const std::string& field);

// `messages`: [{"role": "system"|"user"|"assistant", "content": string}]. With `openai`,
// role "developer" means system and content may also be an array of {"type":"text","text"}.
std::vector<engine::Message> read_messages(const boost::json::value& value, const std::string& field, bool openai);

// The fields both protocols spell the same way: sampling (temperature ... seed, logit_bias),
// stop, session, chat_template, ignore_eos, and max_tokens under the name `max_tokens_key`.
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
