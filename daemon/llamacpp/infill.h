// daemon/llamacpp/infill.h — POST /infill in llama.cpp server's shape (the endpoint llama.vim and
// llama.vscode call): `input_prefix`, `input_suffix` (strings), `input_extra`
// ([{"filename", "text"}]), `prompt` (the start of the middle), `n_predict` (-1: the default
// limit; 0: the prompt is evaluated, into the prefix cache, and no text comes back), `stream`,
// `stop`, the sampling fields (temperature, top_k, top_p, min_p, seed, repeat_penalty, ...),
// `response_fields` (the answer cut down to these "a/b" paths), strata's `timeout`, and
// llama.cpp's fields strata accepts without acting on them (cache_prompt: the prefix cache is
// always on; samplers, n_indent, t_max_prompt_ms, t_max_predict_ms, id_slot). The answer is
// llama.cpp's completion object {"index", "content", "tokens", "id_slot", "stop": true,
// "model", "tokens_predicted", "tokens_evaluated", "prompt", "has_new_line", "truncated",
// "stop_type" ("eos", "limit", "none"), "stopping_word", "tokens_cached", "timings"};
// streamed, one `data: {"index", "content", "tokens", "stop": false, "id_slot"}` event per
// piece of text and that object last (its content empty), without a [DONE] line.
// Owns: those fields and shapes. Must not touch: routing and framing (openai/), the prompt
// layout (tokenizer/layouts.h).
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "protocol/errors.h"
#include "protocol/generate_params.h"

namespace strata::daemon {

inline constexpr size_t kMaxInfillFiles = 1024;

struct InfillCall {
    engine::GenerateRequest request;  // its `infill` set
    bool stream = false;
    bool warm_only = false;                    // n_predict 0: no text in the answer
    std::vector<std::string> response_fields;  // empty: all
};

// Throws ApiError (invalid_params naming the field: "input_extra[2].text", ...).
InfillCall parse_infill(const boost::json::object& body, const RequestContext& context);

// The final object (streamed: with empty content); `prompt` the prompt's text.
boost::json::object infill_json(const InfillCall& call, const engine::Result& result, const std::string& model);
boost::json::object infill_chunk_json(const std::string& text);

}  // namespace strata::daemon
