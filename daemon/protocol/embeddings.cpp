// daemon/protocol/embeddings.cpp — embeddings requests and answers (see embeddings.h).
#include "protocol/embeddings.h"

#include <boost/json/array.hpp>
#include <cstring>

#include "protocol/fields.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

std::vector<int32_t> token_ids(const json::array& items, const std::string& field, int32_t n_vocab) {
    std::vector<int32_t> ids;
    ids.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i)
        ids.push_back(static_cast<int32_t>(integer_value(items[i], field + "[" + std::to_string(i) + "]", 0, n_vocab - 1)));
    return ids;
}

// A string, or token ids.
engine::EmbedInput one_input(const json::value& value, const std::string& field, int32_t n_vocab) {
    if (value.is_string())
        return std::string(value.get_string());
    if (!value.is_array())
        throw invalid_params(field, field + " must be a string or an array of token ids");
    return token_ids(value.get_array(), field, n_vocab);
}

std::vector<engine::EmbedInput> read_inputs(const json::value& input, int32_t n_vocab) {
    if (input.is_string())
        return {std::string(input.get_string())};
    if (!input.is_array())
        throw invalid_params("input", "input must be a string, an array of strings, an array of token ids or an array of arrays of token ids");
    const json::array& items = array_value(input, "input", kMaxEmbedInputs);
    if (items.empty())
        throw invalid_params("input", "input is empty");
    if (items[0].is_number())
        return {token_ids(items, "input", n_vocab)};
    std::vector<engine::EmbedInput> inputs;
    for (size_t i = 0; i < items.size(); ++i)
        inputs.push_back(one_input(items[i], "input[" + std::to_string(i) + "]", n_vocab));
    return inputs;
}

std::string base64(const std::vector<float>& values) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string bytes(values.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const size_t n = std::min<size_t>(3, bytes.size() - i);
        uint32_t v = 0;
        for (size_t j = 0; j < 3; ++j) v = (v << 8) | (j < n ? static_cast<uint8_t>(bytes[i + j]) : 0);
        for (size_t j = 0; j < 4; ++j) out += j <= n ? kAlphabet[(v >> (18 - 6 * j)) & 63] : '=';
    }
    return out;
}

}  // namespace

EmbedCall parse_embed(const json::object& params, const RequestContext& context, int32_t n_embd, int32_t n_vocab) {
    const Fields fields(params);
    fields.allow_only({"input", "model", "encoding_format", "dimensions", "user", "timeout"});
    const json::value* input = &fields.required("input");
    EmbedCall call;
    call.request.uid = context.uid;
    call.request.embed = read_inputs(*input, n_vocab);
    fields.string("model", 256);  // any model name is accepted: one model is loaded
    fields.string("user", SIZE_MAX);
    const std::string format = fields.string("encoding_format", 16).value_or("float");
    if (format != "float" && format != "base64")
        throw invalid_params("encoding_format", "encoding_format must be \"float\" or \"base64\", not \"" + format + "\"");
    call.base64 = format == "base64";
    if (const auto dims = fields.integer("dimensions", 1, INT32_MAX); dims && *dims != n_embd)
        throw invalid_params("dimensions", "dimensions " + std::to_string(*dims) + " is not supported: this model's embeddings have " +
                                               std::to_string(n_embd));
    if (const auto seconds = fields.number("timeout"))
        call.request.timeout = request_timeout(*seconds, "timeout");
    return call;
}

json::object embeddings_json(const engine::Result& result, bool as_base64, const std::string& model) {
    json::array data;
    for (size_t i = 0; i < result.embeddings.size(); ++i) {
        const auto& v = result.embeddings[i];
        json::value embedding = as_base64 ? json::value(base64(v)) : json::value(json::array(v.begin(), v.end()));
        data.push_back(json::object{{"object", "embedding"}, {"index", i}, {"embedding", std::move(embedding)}});
    }
    const int32_t tokens = result.usage.prompt_tokens;
    return {{"object", "list"},
            {"data", std::move(data)},
            {"model", model},
            {"usage", json::object{{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
}

ApiError embed_ended(const std::string& finish_reason) {
    if (finish_reason == "timeout")
        return ApiError(ErrorKind::Busy, "the embeddings were not done within the request's timeout (timeout, limits.request_timeout)");
    return ApiError(ErrorKind::InvalidRequest, "the embeddings request was cancelled");
}

}  // namespace strata::daemon
