// engine/request.h — what a request to the engine is and what comes back: the generation
// request (prompt or chat messages, sampling, limits, grammar, embeddings inputs), its
// result (text, usage, timings, log-probabilities, embeddings), the sink its output goes
// to, and the engine's errors.
// Must not touch: the engine's state, sockets, JSON (daemon/).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chat/message.h"
#include "chat/value.h"
#include "engine/config.h"
#include "grammar/grammar.h"
#include "sampling/params.h"
#include "tokenizer/layouts.h"

namespace strata::engine {
// Stable error codes; the daemon maps them to JSON-RPC codes and HTTP statuses.
enum class Errc {
    InvalidParams,    // a request field is wrong (field() names it)
    SessionNotFound,
    Busy,             // queue or session limit reached, or the session is in use: retry later
    ContextFull,      // the prompt does not fit the session's context
    ModelError,       // the forward pass failed (e.g. a weight read error)
    ShuttingDown,
    Internal,
};
std::string_view errc_name(Errc code);  // "invalid_params", "session_not_found", ...

class EngineError : public std::runtime_error {
public:
    EngineError(Errc code, const std::string& message, std::string field = {})
        : std::runtime_error(message), code_(code), field_(std::move(field)) {}
    Errc code() const { return code_; }
    const std::string& field() const { return field_; }  // for InvalidParams: which field

private:
    Errc code_;
    std::string field_;
};

// A chat turn (role, content, tool calls, which call a tool turn answers): chat/message.h.
using Message = chat::Message;

// Whether a request uses tool calling: tools offered, or tool turns in its messages.
struct GenerateRequest;
bool uses_tools(const GenerateRequest& request);
// Every field of a request against `limits` and a vocabulary of `n_vocab` tokens; throws
// EngineError(InvalidParams) naming the field.
void check_request(const GenerateRequest& request, const Limits& limits, int32_t n_vocab);

// A query and a document for a reranker (pooling_type rank): laid out by the file's
// tokenizer.chat_template.rerank ({query} and {document} replaced, special tokens parsed) when
// it has one (Qwen3-Reranker), else as llama.cpp's server pairs them (tokenizer/layouts.h).
struct RerankPair {
    std::string query, document;
};

// One input of an embeddings request: text (tokenized as a prompt, special tokens parsed,
// as llama-server does), token ids, or a query/document pair (whose "embedding" is the
// reranker's scores: Model::classify, not normalised; only for a reranker).
using EmbedInput = std::variant<std::string, std::vector<int32_t>, RerankPair>;

// A generated token (or an alternative to it) with its log-probability under the model.
struct TokenChoice {
    int32_t id = 0;
    std::string bytes;   // what the token adds to the text (may be part of a UTF-8 character)
    float logprob = 0;   // natural log of its probability (sampling/logprobs.h says which distribution)
};

// One generated token's log-probability and the most likely tokens at that step.
struct TokenLogprobs {
    TokenChoice token;
    std::vector<TokenChoice> top;  // most likely first
};

struct GenerateRequest {
    uint32_t uid = 0;                    // the peer's uid (SO_PEERCRED); 0 = root
    std::string session;                 // "" = anonymous: nothing is kept afterwards
    std::optional<std::string> prompt;   // raw text, appended to the session's history
    std::vector<Message> messages;       // or chat turns, appended to the session's conversation
    chat::Value tools = chat::Value::none();  // tools for the model's chat template (list of dicts; no session)
    std::string chat_template;           // family name overriding the model's template ("" = auto)
    chat::Dict template_variables;       // more top-level variables for the model's template
                                         // (chat_template_kwargs, reasoning_effort)
    sampling::SamplingParams sampling;
    int32_t max_tokens = 256;
    std::vector<std::string> stop;       // stop strings (not included in the output)
    bool ignore_eos = false;
    std::optional<Speculative> speculative;  // overrides engine.speculative for this request
    std::shared_ptr<const grammar::Grammar> grammar;  // the output must match it; null = free
    int32_t logprobs = -1;               // -1: none; 0..20: each generated token's log-probability and
                                         // that many alternatives (Result::logprobs, Sink::on_logprobs)
    std::chrono::milliseconds timeout{0};  // from submit(): then it ends with finish_reason "timeout";
                                           // 0 = none (limits.request_timeout applies, and caps it)
    // Not empty: an embeddings request instead of a generation. Each input becomes one pooled,
    // L2-normalised vector of n_embd floats (Result::embeddings), the inputs one after the
    // other through the scheduler like prompts; prompt, messages, sampling, max_tokens, stop and
    // grammar do not apply, and there is no session.
    std::vector<EmbedInput> embed;
    // Set: a fill-in-the-middle request (/infill) instead of prompt or messages, its prompt
    // laid out as llama.cpp's server lays it out (tokenizer/layouts.h) with the model's FIM
    // tokens, budgeted by engine.batch_tokens, max_tokens and the context; no session.
    std::optional<tokenizer::InfillInput> infill;
};

struct Usage {
    int32_t prompt_tokens = 0;      // tokens of this request's input (new and reused)
    int32_t completion_tokens = 0;
    int32_t cached_tokens = 0;      // of prompt_tokens, how many came from the KV cache
    int32_t dropped_messages = 0;   // turns dropped to fit the context (limits.context_overflow)
};

struct Timings {
    double queued_ms = 0;     // submit → first forward pass
    double prompt_ms = 0;     // prefill
    double generate_ms = 0;   // first generated token → end
    double prompt_tps = 0;
    double generate_tps = 0;
    int32_t speculative_guessed = 0;    // tokens guessed and verified (engine.speculative)
    int32_t speculative_accepted = 0;   // of those, how many the model accepted
};

struct Result {
    std::string text;
    std::string finish_reason;  // "stop" (EOS or a stop string), "length" (max_tokens or context), "cancelled",
                                // "timeout" (GenerateRequest::timeout ran out, queued or running)
    Usage usage;
    Timings timings;
    std::vector<std::vector<float>> embeddings;  // an embeddings request's, one per input
    std::vector<TokenLogprobs> logprobs;         // one per generated token, when asked for
};

// Receives one request's output, on the engine thread. Exactly one of on_done / on_error
// ends every request that submit() accepted.
class Sink {
public:
    virtual ~Sink() = default;
    virtual void on_text(std::string_view piece) = 0;
    // A generated token's log-probabilities (GenerateRequest::logprobs), before on_text
    // passes on its text — which may come with a later token's: text is held back at an
    // incomplete UTF-8 character or a possible stop string.
    virtual void on_logprobs(const TokenLogprobs&) {}
    virtual void on_done(const Result& result) = 0;
    virtual void on_error(const EngineError& error) = 0;
};

}  // namespace strata::engine
