// engine/request.cpp — checking a request before it is queued: every field against the
// limits and the vocabulary (errors name the field), and the error codes' names.
#include <algorithm>

#include "engine/request.h"
#include "engine/session.h"
#include "sampling/logprobs.h"
#include "sampling/stop.h"

namespace strata::engine {

std::string_view errc_name(Errc code) {
    switch (code) {
        case Errc::InvalidParams: return "invalid_params";
        case Errc::SessionNotFound: return "session_not_found";
        case Errc::Busy: return "busy";
        case Errc::ContextFull: return "context_full";
        case Errc::ModelError: return "model_error";
        case Errc::ShuttingDown: return "shutting_down";
        case Errc::Internal: return "internal_error";
    }
    return "internal_error";
}

namespace {

// An embeddings request: no session, and no empty input or token id outside the vocabulary
// (lengths are checked once tokenized, on the engine thread).
void check_embed_request(const GenerateRequest& r, int32_t n_vocab) {
    if (!r.session.empty()) throw EngineError(Errc::InvalidParams, "embeddings do not use a session", "session");
    for (size_t i = 0; i < r.embed.size(); ++i) {
        const std::string field = "input[" + std::to_string(i) + "]";
        if (std::holds_alternative<RerankPair>(r.embed[i])) continue;  // an empty document is a document
        const auto* ids = std::get_if<std::vector<int32_t>>(&r.embed[i]);
        if (ids ? ids->empty() : std::get<std::string>(r.embed[i]).empty())
            throw EngineError(Errc::InvalidParams, field + " is empty", field);
        if (!ids) continue;
        for (size_t j = 0; j < ids->size(); ++j)
            if ((*ids)[j] < 0 || (*ids)[j] >= n_vocab)
                throw EngineError(Errc::InvalidParams,
                                  field + "[" + std::to_string(j) + "]: token id " + std::to_string((*ids)[j]) +
                                      " is outside the vocabulary of " + std::to_string(n_vocab),
                                  field + "[" + std::to_string(j) + "]");
    }
}

}  // namespace

void check_request(const GenerateRequest& r, const Limits& limits, int32_t n_vocab) {
    if (r.timeout.count() < 0)
        throw EngineError(Errc::InvalidParams, "timeout must not be negative", "timeout");
    if (!r.embed.empty()) return check_embed_request(r, n_vocab);
    if (r.infill && (r.prompt || !r.messages.empty()))
        throw EngineError(Errc::InvalidParams, "an infill request has neither prompt nor messages", r.prompt ? "prompt" : "messages");
    if (!r.infill && r.prompt.has_value() == !r.messages.empty())
        throw EngineError(Errc::InvalidParams, "give exactly one of prompt and messages", r.prompt ? "messages" : "prompt");
    for (size_t i = 0; i < r.messages.size(); ++i) {
        const auto& role = r.messages[i].role;
        if (role != "system" && role != "user" && role != "assistant" && role != "tool")
            throw EngineError(Errc::InvalidParams, "role \"" + role + "\" is not system, user, assistant or tool",
                              "messages[" + std::to_string(i) + "].role");
    }
    if (!r.session.empty() && uses_tools(r))
        throw EngineError(Errc::InvalidParams, "tools and tool messages need a request without a session (send the whole conversation)",
                          "session");
    if (r.max_tokens < 1 || r.max_tokens > limits.max_tokens)
        throw EngineError(Errc::InvalidParams,
                          "max_tokens " + std::to_string(r.max_tokens) + " is out of range [1, " + std::to_string(limits.max_tokens) + "]",
                          "max_tokens");
    if (r.logprobs < -1 || r.logprobs > sampling::kMaxTopLogprobs)
        throw EngineError(Errc::InvalidParams, "logprobs " + std::to_string(r.logprobs) + " is out of range [0, " +
                                                   std::to_string(sampling::kMaxTopLogprobs) + "]", "logprobs");
    if (!r.session.empty() && !valid_session_name(r.session))
        throw EngineError(Errc::InvalidParams, "session name must be 1-64 characters of A-Z a-z 0-9 . _ - (not starting with .)", "session");
    try {
        sampling::validate(r.sampling, n_vocab);
        sampling::StopMatcher check(r.stop);
    } catch (const sampling::SamplingError& e) {
        throw EngineError(Errc::InvalidParams, e.what(), e.field());
    }
}

bool uses_tools(const GenerateRequest& r) {
    return !r.tools.is_none() ||
           std::any_of(r.messages.begin(), r.messages.end(), [](const Message& m) { return m.role == "tool" || !m.tool_calls.is_none(); });
}

}  // namespace strata::engine
