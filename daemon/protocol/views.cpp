// daemon/protocol/views.cpp — engine values as protocol JSON (see views.h).
#include "protocol/views.h"

#include <cmath>
#include <variant>

#include "utf8/utf8.h"

namespace strata::daemon {
namespace json = boost::json;

double finite(double value) { return std::isfinite(value) ? value : 0.0; }

json::object usage_json(const engine::Usage& usage) {
    return {{"prompt_tokens", usage.prompt_tokens},
            {"completion_tokens", usage.completion_tokens},
            {"cached_tokens", usage.cached_tokens},
            {"dropped_messages", usage.dropped_messages}};
}

json::object timings_json(const engine::Timings& t) {
    return {{"queued_ms", finite(t.queued_ms)},   {"prompt_ms", finite(t.prompt_ms)},
            {"generate_ms", finite(t.generate_ms)}, {"prompt_tps", finite(t.prompt_tps)},
            {"generate_tps", finite(t.generate_tps)}, {"speculative_guessed", t.speculative_guessed},
            {"speculative_accepted", t.speculative_accepted}};
}

json::object result_json(const engine::Result& result, const std::string& session, uint64_t seed) {
    json::object out{{"text", result.text},
                     {"finish_reason", result.finish_reason},
                     {"seed", seed},
                     {"usage", usage_json(result.usage)},
                     {"timings", timings_json(result.timings)}};
    out["session"] = session.empty() ? json::value(nullptr) : json::value(session);
    if (!result.logprobs.empty())
        out["logprobs"] = logprobs_json(result.logprobs);
    return out;
}

double logprob_value(float logprob) { return std::isfinite(logprob) ? logprob : -9999.0; }

namespace {

json::object choice_json(const engine::TokenChoice& choice) {
    json::array bytes;
    for (unsigned char c : choice.bytes)
        bytes.push_back(c);
    return {{"token", utf8::replace_invalid(choice.bytes)}, {"logprob", logprob_value(choice.logprob)},
            {"bytes", std::move(bytes)}};
}

}  // namespace

json::array logprobs_json(std::span<const engine::TokenLogprobs> tokens) {
    json::array out;
    for (const engine::TokenLogprobs& t : tokens) {
        json::object entry = choice_json(t.token);
        json::array top;
        for (const engine::TokenChoice& alternative : t.top)
            top.push_back(choice_json(alternative));
        entry["top_logprobs"] = std::move(top);
        out.push_back(std::move(entry));
    }
    return out;
}

json::object session_json(const engine::SessionInfo& info, bool detailed) {
    json::object out{{"name", info.name},         {"uid", info.uid},         {"tokens", info.tokens},
                     {"messages", info.messages}, {"cached", info.cached},   {"busy", info.busy},
                     {"created", info.created},   {"last_used", info.last_used}};
    if (detailed) {
        json::array conversation;
        for (const engine::Message& m : info.conversation)
            conversation.push_back(json::object{{"role", m.role}, {"content", m.content}});
        out["conversation"] = std::move(conversation);
        out["text"] = info.text;
    }
    return out;
}

json::object model_info_json(const engine::ModelInfo& info) {
    json::object types;
    for (const auto& [type, count] : info.tensor_types)
        types[type] = count;
    return {{"name", info.name},
            {"arch", info.arch},
            {"path", info.path},
            {"n_vocab", info.n_vocab},
            {"n_ctx_train", info.n_ctx_train},
            {"context", info.context},
            {"n_embd", info.n_embd},
            {"n_layer", info.n_layer},
            {"n_head", info.n_head},
            {"n_head_kv", info.n_head_kv},
            {"n_ff", info.n_ff},
            {"n_params", info.n_params},
            {"file_bytes", info.file_bytes},
            {"tensor_types", std::move(types)},
            {"chat_template", info.chat_template}};
}

json::object status_json(const figures::Snapshot& status) {
    json::object out;
    for (size_t i = 0; i < figures::kFigureCount; ++i)
        out[figures::kFigures[i].name] = std::visit([](const auto& v) { return json::value(v); }, status.value(i));
    return out;
}

json::object latency_json(const Latency& latency) {
    json::object endpoints;
    for (const Endpoint endpoint : kEndpoints) {
        json::object measures;
        uint64_t requests = 0;
        for (const Measure measure : kMeasures) {
            const Histogram::Recent recent = latency.of(endpoint, measure).recent();
            auto value = [](std::optional<double> x) { return x ? json::value(*x) : json::value(nullptr); };
            measures[measure_name(measure)] = json::object{
                {"count", recent.count}, {"p50", value(recent.p50)}, {"p90", value(recent.p90)}, {"p99", value(recent.p99)}};
            if (measure == Measure::RequestDuration)
                requests = recent.count;
        }
        if (requests > 0)
            endpoints[endpoint_name(endpoint)] = std::move(measures);
    }
    return {{"window_s", std::chrono::duration_cast<std::chrono::seconds>(Histogram::kWindow).count()},
            {"endpoints", std::move(endpoints)}};
}

}  // namespace strata::daemon
