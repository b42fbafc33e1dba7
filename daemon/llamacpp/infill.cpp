// daemon/llamacpp/infill.cpp — /infill requests and answers in llama.cpp's shape (see infill.h).
#include "llamacpp/infill.h"

#include <boost/json/array.hpp>

#include "protocol/fields.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

std::vector<tokenizer::InfillFile> read_extra(const json::value& value) {
    const json::array& items = array_value(value, "input_extra", kMaxInfillFiles);
    std::vector<tokenizer::InfillFile> files;
    for (size_t i = 0; i < items.size(); ++i) {
        const std::string field = "input_extra[" + std::to_string(i) + "]";
        const Fields chunk(object_value(items[i], field), field);
        chunk.allow_only({"filename", "text", "time"});  // llama.vim also sends when it read the chunk
        tokenizer::InfillFile file;
        file.text = std::string(string_value(chunk.required("text"), field + ".text", SIZE_MAX));
        file.filename = chunk.string("filename", 4096).value_or("tmp");
        files.push_back(std::move(file));
    }
    return files;
}

std::vector<std::string> read_response_fields(const json::value& value) {
    const json::array& items = array_value(value, "response_fields", 64);
    std::vector<std::string> paths;
    for (size_t i = 0; i < items.size(); ++i)
        paths.emplace_back(string_value(items[i], "response_fields[" + std::to_string(i) + "]", 256));
    return paths;
}

// llama.cpp's response_fields: each "a/b" path's value under the path as its key (absent paths left out).
json::object pick_fields(const json::object& full, const std::vector<std::string>& paths) {
    json::object out;
    for (const std::string& path : paths) {
        const json::value* at = nullptr;
        const json::object* in = &full;
        for (size_t start = 0; in != nullptr;) {
            const size_t slash = path.find('/', start);
            at = in->if_contains(path.substr(start, slash - start));
            if (at == nullptr || slash == std::string::npos)
                break;
            in = at->if_object();
            start = slash + 1;
        }
        if (at != nullptr)
            out[path] = *at;
    }
    return out;
}

json::object timings_json(const engine::Result& result) {
    const engine::Timings& t = result.timings;
    const int32_t prompt_n = result.usage.prompt_tokens - result.usage.cached_tokens;
    const int32_t predicted_n = result.usage.completion_tokens;
    return {{"prompt_n", prompt_n},
            {"prompt_ms", t.prompt_ms},
            {"prompt_per_token_ms", prompt_n > 0 ? t.prompt_ms / prompt_n : 0.0},
            {"prompt_per_second", t.prompt_tps},
            {"predicted_n", predicted_n},
            {"predicted_ms", t.generate_ms},
            {"predicted_per_token_ms", predicted_n > 0 ? t.generate_ms / predicted_n : 0.0},
            {"predicted_per_second", t.generate_tps}};
}

const char* stop_type(const std::string& finish_reason) {
    if (finish_reason == "stop")
        return "eos";
    return finish_reason == "length" ? "limit" : "none";
}

}  // namespace

InfillCall parse_infill(const json::object& body, const RequestContext& context) {
    const Fields fields(body);
    fields.allow_only({"input_prefix", "input_suffix", "input_extra", "prompt", "n_predict", "stream", "stop", "temperature",
                       "top_k", "top_p", "min_p", "typical_p", "repeat_penalty", "frequency_penalty", "presence_penalty",
                       "penalty_last_n", "min_keep", "seed", "logit_bias", "ignore_eos", "timeout", "response_fields", "model",
                       "cache_prompt", "samplers", "n_indent", "t_max_prompt_ms", "t_max_predict_ms", "id_slot"});
    InfillCall call;
    tokenizer::InfillInput input;
    input.prefix = std::string(string_value(fields.required("input_prefix"), "input_prefix", SIZE_MAX));
    input.suffix = std::string(string_value(fields.required("input_suffix"), "input_suffix", SIZE_MAX));
    input.prompt = fields.string("prompt", SIZE_MAX).value_or("");
    if (const json::value* extra = fields.find("input_extra"))
        input.extra = read_extra(*extra);
    fields.string("model", 256);  // any model name is accepted: one model is loaded
    call.stream = fields.boolean("stream").value_or(false);
    if (const json::value* paths = fields.find("response_fields"))
        call.response_fields = read_response_fields(*paths);
    read_common_fields(fields, context, "n_predict", call.request);
    const int32_t n_predict = fields.find("n_predict") ? call.request.max_tokens : context.limits.default_max_tokens;
    if (n_predict < -1)
        throw invalid_params("n_predict", "n_predict must be -1 (the default limit), 0 (evaluate the prompt only) or more");
    call.warm_only = n_predict == 0;
    call.request.max_tokens = n_predict > 0 ? n_predict : n_predict == 0 ? 1 : context.limits.default_max_tokens;
    call.request.infill = std::move(input);
    return call;
}

json::object infill_json(const InfillCall& call, const engine::Result& result, const std::string& model) {
    const std::string content = call.stream || call.warm_only ? std::string() : result.text;
    json::object full{{"index", 0},
                      {"content", content},
                      {"tokens", json::array()},
                      {"id_slot", -1},
                      {"stop", true},
                      {"model", model},
                      {"tokens_predicted", call.warm_only ? 0 : result.usage.completion_tokens},
                      {"tokens_evaluated", result.usage.prompt_tokens},
                      {"has_new_line", result.text.find('\n') != std::string::npos && !call.warm_only},
                      {"truncated", false},
                      {"stop_type", stop_type(result.finish_reason)},
                      {"stopping_word", ""},
                      {"tokens_cached", result.usage.cached_tokens},
                      {"timings", timings_json(result)}};
    return call.response_fields.empty() ? full : pick_fields(full, call.response_fields);
}

json::object infill_chunk_json(const std::string& text) {
    return {{"index", 0}, {"content", text}, {"tokens", json::array()}, {"stop", false}, {"id_slot", -1}};
}

}  // namespace strata::daemon
