// daemon/llamacpp/rerank.cpp — rerank requests and answers (see rerank.h).
#include "llamacpp/rerank.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <numeric>

#include "protocol/embeddings.h"
#include "protocol/fields.h"

namespace strata::daemon {
namespace json = boost::json;

RerankCall parse_rerank(const json::object& body, const RequestContext& context) {
    const Fields fields(body);
    fields.allow_only({"query", "documents", "top_n", "return_documents", "model", "timeout"});
    RerankCall call;
    const std::string query(string_value(fields.required("query"), "query", SIZE_MAX));
    const json::array& items = array_value(fields.required("documents"), "documents", kMaxEmbedInputs);
    if (items.empty())
        throw invalid_params("documents", "documents must be a non-empty array of strings");
    for (size_t i = 0; i < items.size(); ++i) {
        call.documents.emplace_back(string_value(items[i], "documents[" + std::to_string(i) + "]", SIZE_MAX));
        call.request.embed.emplace_back(engine::RerankPair{query, call.documents.back()});
    }
    call.request.uid = context.uid;
    call.top_n = static_cast<size_t>(fields.integer("top_n", 1, INT32_MAX).value_or(INT32_MAX));
    call.return_documents = fields.boolean("return_documents").value_or(false);
    fields.string("model", 256);  // any model name is accepted: one model is loaded
    if (const auto seconds = fields.number("timeout"))
        call.request.timeout = request_timeout(*seconds, "timeout");
    return call;
}

json::object rerank_json(const RerankCall& call, const engine::Result& result, const std::string& model) {
    std::vector<size_t> order(result.embeddings.size());
    std::iota(order.begin(), order.end(), size_t{0});
    const auto score = [&](size_t i) { return result.embeddings[i].front(); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score(a) > score(b); });
    order.resize(std::min(order.size(), call.top_n));
    json::array results;
    for (const size_t i : order) {
        json::object item{{"index", i}, {"relevance_score", score(i)}};
        if (call.return_documents)
            item["document"] = json::object{{"text", call.documents[i]}};
        results.push_back(std::move(item));
    }
    const int32_t tokens = result.usage.prompt_tokens;
    return {{"model", model},
            {"object", "list"},
            {"results", std::move(results)},
            {"usage", json::object{{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
}

}  // namespace strata::daemon
