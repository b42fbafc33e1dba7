// daemon/protocol/tokens.cpp — tokenize and detokenize requests (see tokens.h).
#include "protocol/tokens.h"

#include <boost/json/value_from.hpp>
#include <string>

#include "protocol/errors.h"
#include "protocol/fields.h"

namespace strata::daemon {
namespace json = boost::json;

json::object tokenize_json(const engine::Engine& engine, const json::object& params, std::string_view text_field) {
    const Fields fields(params);
    fields.allow_only({text_field, "add_special", "parse_special"});
    const std::string_view text = string_value(fields.required(text_field), std::string(text_field), SIZE_MAX);
    const auto ids = engine.tokenize(text, fields.boolean("add_special").value_or(true), fields.boolean("parse_special").value_or(false));
    return json::object{{"tokens", json::value_from(ids)}};
}

json::object detokenize_json(const engine::Engine& engine, int32_t n_vocab, const json::object& params, std::string_view text_field) {
    const Fields fields(params);
    fields.allow_only({"tokens"});
    const json::array& items = array_value(fields.required("tokens"), "tokens", SIZE_MAX);
    std::vector<int32_t> ids;
    ids.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i)
        ids.push_back(static_cast<int32_t>(integer_value(items[i], "tokens[" + std::to_string(i) + "]", 0, n_vocab - 1)));
    return json::object{{text_field, engine.detokenize(ids)}};
}

}  // namespace strata::daemon
