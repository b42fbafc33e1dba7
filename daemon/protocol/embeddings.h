// daemon/protocol/embeddings.h — embeddings requests, shared by the native `embed` method and
// POST /v1/embeddings, both in OpenAI's shape: `input` (a string, an array of strings, an
// array of token ids, or an array of arrays of token ids; at most kMaxEmbedInputs), `model`
// (any name: one model is loaded), `encoding_format` ("float", or "base64": each vector's
// float32 little-endian bytes), `dimensions` (only the model's n_embd), `user` (ignored) and
// strata's `timeout`; the answer {"object":"list","data":[{"object":"embedding","index",
// "embedding"}],"model","usage":{"prompt_tokens","total_tokens"}}.
// Owns: those fields and that shape. Must not touch: routing and framing (rpc/, openai/).
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "protocol/errors.h"
#include "protocol/generate_params.h"

namespace strata::daemon {

inline constexpr size_t kMaxEmbedInputs = 2048;  // as OpenAI's API

struct EmbedCall {
    engine::GenerateRequest request;  // its `embed` inputs set
    bool base64 = false;
};

// Throws ApiError (invalid_params naming the field: "input", "input[2]", "input[0][5]" for a
// token id outside the vocabulary of n_vocab, "dimensions", ...).
EmbedCall parse_embed(const boost::json::object& params, const RequestContext& context, int32_t n_embd, int32_t n_vocab);

// The answer to a request that ended with finish_reason "stop".
boost::json::object embeddings_json(const engine::Result& result, bool base64, const std::string& model);

// What the client of an embeddings request gets when it ended otherwise ("cancelled", "timeout").
ApiError embed_ended(const std::string& finish_reason);

}  // namespace strata::daemon
