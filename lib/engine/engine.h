// engine/engine.h — the engine: one loaded model serving many sessions.
// Owns: sessions (token history, chat conversation, KV cache, owner uid), accepting
// requests, and the engine thread whose steps (plan -> apply -> run: scheduler.h, step.cpp)
// batch work into forward passes (prompt chunks of sessions in prefill plus the next token
// of every session that is decoding), each request's generation (generation.h: sampling,
// incremental detokenizing, stop conditions), and saving sessions to disk.
// Thread model: every public method is thread-safe. Output of a request reaches its Sink on
// the engine thread, which never blocks on I/O: sinks must only queue what they get.
// Must not touch: sockets, JSON, systemd (daemon/).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat/reasoning.h"
#include "engine/config.h"
#include "engine/request.h"
#include "figures/figures.h"
#include "weights/budget.h"

namespace strata::engine {

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

    // How a chat request's reply separates thinking from the answer (its chat format and
    // template variables decide); none when it cannot be rendered (submit() says why).
    chat::ReasoningSyntax reasoning_syntax(const GenerateRequest& request) const;

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
    // The memory budget from now on (the pressure watch's, or memory.budget on reload),
    // applied between engine steps (rebudget.cpp): a lower one gives back cached prefixes,
    // then idle sessions' KV (saved first), then resident weights (layers move to the
    // streaming ring); a higher one reads the larger plan's weights in the background.
    // Running requests go on, slower when their weights are streamed.
    void set_memory_budget(const weights::Budget& budget);

    // Stops accepting work, lets running requests finish for up to `grace_ms` and cancels
    // the rest, saves every session, and stops the engine thread. Idempotent.
    void shutdown(int grace_ms);

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace strata::engine
