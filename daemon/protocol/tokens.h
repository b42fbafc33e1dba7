// daemon/protocol/tokens.h — tokenize and detokenize requests, shared by the native
// methods (text in "text") and the HTTP endpoints /tokenize and /detokenize (text in
// "content", as llama-server names it). Owns: their fields and checks.
// Must not touch: routing (rpc/methods.cpp, openai/http_routes.cpp).
#pragma once

#include <boost/json/object.hpp>
#include <string_view>

#include "engine/engine.h"

namespace strata::daemon {

// {"<text_field>": TEXT, "add_special"?: bool (default true), "parse_special"?: bool
// (default false)} → {"tokens": [ids]}. Throws ApiError naming a bad field.
boost::json::object tokenize_json(const engine::Engine& engine, const boost::json::object& params, std::string_view text_field);
// {"tokens": [ids]} → {"<text_field>": TEXT}; ids outside the vocabulary of `n_vocab` are
// refused naming the index.
boost::json::object detokenize_json(const engine::Engine& engine, int32_t n_vocab, const boost::json::object& params,
                                    std::string_view text_field);

}  // namespace strata::daemon
