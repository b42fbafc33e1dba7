// daemon/llamacpp/rerank.h — POST /v1/rerank (also /rerank and /v1/reranking, as llama.cpp's
// server has them) in llama.cpp's and Jina's shape: `query` (a string), `documents` (strings,
// at most kMaxEmbedInputs), `top_n` (the best n; default all), `return_documents` (each result
// also carries {"text"}; default false, as llama.cpp never returns them), `model` (any name)
// and strata's `timeout`; the answer {"model", "object": "list", "results": [{"index",
// "relevance_score", "document"?}] best first, "usage": {"prompt_tokens", "total_tokens"}}.
// The scores are the reranker's (engine RerankPair inputs): a cross-encoder's raw logit, or
// Qwen3-Reranker's probability of "yes". Owns: those fields and that shape. Must not touch:
// routing and framing (openai/), the pair layout (tokenizer/layouts.h).
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "protocol/generate_params.h"

namespace strata::daemon {

struct RerankCall {
    engine::GenerateRequest request;  // one RerankPair input per document
    size_t top_n = 0;
    bool return_documents = false;
    std::vector<std::string> documents;
};

// Throws ApiError (invalid_params naming the field: "documents[3]", "top_n", ...).
RerankCall parse_rerank(const boost::json::object& body, const RequestContext& context);

// The answer to a request that ended with finish_reason "stop".
boost::json::object rerank_json(const RerankCall& call, const engine::Result& result, const std::string& model);

}  // namespace strata::daemon
