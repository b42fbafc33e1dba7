// engine/engine.h — the engine: one loaded model serving many sessions.
// Owns: sessions (token history, chat conversation, KV cache, owner uid), the request
// queue, and the scheduler thread that batches work into forward passes (prompt chunks of
// sessions in prefill plus one token of every session that is decoding), sampling,
// incremental detokenizing, stop conditions, and saving sessions to disk.
// Thread model: every public method is thread-safe. Output of a request reaches its Sink on
// the engine thread, which never blocks on I/O: sinks must only queue what they get.
// Must not touch: sockets, JSON, systemd (daemon/).
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

#include "chat/value.h"
#include "engine/config.h"
#include "figures/figures.h"
#include "grammar/grammar.h"
#include "sampling/params.h"

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

struct Message {
    std::string role;  // system, user, assistant, tool
    std::string content;
    // Tool calling (requests without a session): an assistant turn's calls as the chat
    // template sees them ([{"id","type":"function","function":{"name","arguments":{...}}}]),
    // and which call a tool turn answers.
    chat::Value tool_calls = chat::Value::none();
    std::string tool_call_id;
};

// Whether a request uses tool calling: tools offered, or tool turns in its messages.
struct GenerateRequest;
bool uses_tools(const GenerateRequest& request);

// One input of an embeddings request: text (tokenized as a prompt, special tokens parsed,
// as llama-server does) or token ids.
using EmbedInput = std::variant<std::string, std::vector<int32_t>>;

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
    sampling::SamplingParams sampling;
    int32_t max_tokens = 256;
    std::vector<std::string> stop;       // stop strings (not included in the output)
    bool ignore_eos = false;
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

struct SessionInfo {
    std::string name;
    uint32_t uid = 0;
    int32_t tokens = 0;          // history length
    int32_t messages = 0;        // chat turns kept
    bool cached = false;         // the KV cache is in memory (else rebuilt on next use)
    bool busy = false;           // a request is running on it
    int64_t created = 0;         // unix seconds
    int64_t last_used = 0;
    std::vector<Message> conversation;  // filled by session_info() only
    std::string text;                   // raw-prompt sessions: the history as text (session_info() only)
};

struct ModelInfo {
    std::string name, arch, path;
    int32_t n_vocab = 0, n_ctx_train = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, n_ff = 0;
    uint64_t n_params = 0, file_bytes = 0;
    std::vector<std::pair<std::string, int>> tensor_types;  // type name → tensor count
    std::string chat_template;   // "jinja" (the model's own template), a built-in family name, or "" (none usable)
    std::string chat_template_source;  // the model's Jinja template text ("" without one)
    int32_t context = 0;         // per-session context the engine uses
};

// The engine's status figures (figures.h: Source::Engine), filled by status().
using Status = figures::Snapshot;

class Engine {
public:
    // Loads the model and the saved sessions; throws std::runtime_error (naming what is
    // wrong) for a bad model file or configuration.
    explicit Engine(Config config);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Queues a generation. Limits and parameters are checked at once: a request that cannot
    // run throws EngineError (InvalidParams, Busy, ContextFull, ShuttingDown) and
    // the sink is never called. Otherwise returns a handle for cancel(), and the sink gets
    // the output. Tokenizing and template rendering happen on the engine thread; errors found
    // there (e.g. a context overflow after tokenizing) reach sink->on_error.
    uint64_t submit(GenerateRequest request, std::shared_ptr<Sink> sink);
    // Ends a request within one step: its sink gets on_done with finish_reason "cancelled"
    // (the text so far). Unknown or finished handles are ignored. A request whose timeout
    // runs out ends the same way (queued or running) with finish_reason "timeout".
    void cancel(uint64_t handle);

    std::vector<int32_t> tokenize(std::string_view text, bool add_special, bool parse_special) const;
    std::string detokenize(const std::vector<int32_t>& ids) const;  // InvalidParams for ids out of range

    // Session names are per user: `name` of `uid` is another session than `name` of another
    // uid (a generate request's session is its uid's). list_sessions: the sessions of uid
    // (everyone's for root). The others address the session `name` of `uid` (the caller
    // decides whose it may address). Throw EngineError (SessionNotFound, Busy).
    std::vector<SessionInfo> list_sessions(uint32_t uid) const;
    SessionInfo session_info(const std::string& name, uint32_t uid) const;
    void reset_session(const std::string& name, uint32_t uid);   // forget history, keep the session
    void delete_session(const std::string& name, uint32_t uid);

    Status status() const;
    ModelInfo model_info() const;

    // Live-reloadable settings (SIGHUP): limits and defaults; model and threads need a restart.
    // How long the engine has had work without making progress (finishing a layer of a
    // forward pass, or a step): zero while it waits for work. For the systemd watchdog.
    std::chrono::steady_clock::duration stalled_for() const;

    void update_limits(const Limits& limits);

    // Stops accepting work, lets running requests finish for up to `grace_ms` and cancels
    // the rest, saves every session, and stops the engine thread. Idempotent.
    void shutdown(int grace_ms);

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace strata::engine
