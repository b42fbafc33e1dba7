// engine/engine_impl.h — internal: the state behind Engine, shared by engine.cpp (the
// thread-safe front: admission, sessions, status) and scheduler.cpp (the engine thread:
// preparing requests, batching, sampling, finishing).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "engine/engine.h"
#include "engine/memory.h"
#include "engine/session.h"
#include "kv/prefix_cache.h"
#include "model/model.h"
#include "sampling/constraint.h"
#include "sampling/sampler.h"
#include "sampling/stop.h"
#include "chat/families.h"
#include "chat/template.h"
#include "tokenizer/tokenizer.h"

namespace strata::engine {

using Clock = std::chrono::steady_clock;

inline int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

using SessionKey = std::pair<uint32_t, std::string>;  // owner uid, name

// Requests to end at the next step, and their finish reason ("cancelled", "timeout").
using Ending = std::map<uint64_t, const char*>;

// A request accepted by submit(), waiting for the engine thread.
struct Pending {
    uint64_t handle = 0;
    GenerateRequest req;
    std::shared_ptr<Sink> sink;
    Session* session = nullptr;             // reserved (busy) named session, or null: anonymous
    std::optional<chat::ChatFamily> family;  // chat requests: a built-in family, or null: the model's own template
    Clock::time_point submitted;
};

// A request the engine thread is running.
struct Active {
    Pending p;
    std::unique_ptr<Session> anonymous;
    Session* session = nullptr;             // p.session or anonymous.get()
    std::vector<int32_t> history;           // the session's tokens after this request so far
    std::vector<Message> conversation;      // chat: the session's turns after this request's input
    std::vector<int32_t> prompt;            // tokens to feed before generating (not yet cached)
    size_t fed = 0;                         // of prompt, how many are in the cache
    int32_t next = -1;                      // decoding: the sampled token to feed next
    std::optional<sampling::Sampler> sampler;
    std::optional<sampling::Constraint> constraint;  // when the request carries a grammar
    std::optional<tokenizer::StreamDecoder> decoder;
    std::optional<sampling::StopMatcher> stop;
    Result result;
    Clock::time_point first_pass, first_token;
    bool started = false;
    bool released = false;                  // its session was given back (it ends now)
    // Embeddings requests: every input's tokens, which one runs (as `prompt`), how its
    // hidden states pool, and the pooled sum so far.
    std::vector<std::vector<int32_t>> embed_inputs;
    size_t embed_index = 0;
    model::Pooling pooling = model::Pooling::None;
    std::vector<float> pooled;

    bool decoding() const { return fed == prompt.size(); }
    bool embedding() const { return !p.req.embed.empty(); }
};

// KV bytes by what holds them: running requests, idle sessions, and the prefix cache alone.
struct KvKinds {
    uint64_t running = 0, idle = 0, prefix = 0;
};

struct StepRecord {
    Clock::time_point end;
    double seconds;
    int32_t prompt_tokens, generated_tokens;
};

struct Engine::Impl {
    Config config;
    std::shared_ptr<const gguf::File> file;
    std::unique_ptr<model::Model> model;
    std::shared_ptr<const sampling::ConstraintVocab> vocab_for_grammars;  // engine thread only
    std::unique_ptr<tokenizer::Tokenizer> tokenizer;
    std::unique_ptr<chat::Template> model_template;      // the GGUF's tokenizer.chat_template, parsed
    std::optional<chat::ChatFamily> model_family;       // configured, or the fallback when the template does not parse
    std::string model_template_problem;                 // why the model has no usable template
    SessionStore store;
    int32_t context = 0;
    int32_t batch_tokens = 0;
    uint64_t kv_budget = 0;
    std::shared_ptr<kv::Ledger> kv_ledger = std::make_shared<kv::Ledger>();  // every KV block's bytes
    std::unique_ptr<MemoryPlanner> memory;
    Clock::time_point started_at = Clock::now();

    // Guarded by mu: the queue, sessions, limits, counters.
    mutable std::mutex mu;
    std::condition_variable cv;
    Limits limits;
    std::deque<Pending> queue;
    std::deque<Pending> kv_wait;      // admitted, but their KV did not fit beside the running requests'
    size_t kv_wait_actives = 0;       // running requests when they were put to wait
    std::set<uint64_t> cancels;
    std::map<SessionKey, std::unique_ptr<Session>> sessions;  // one namespace per uid
    std::map<uint32_t, int32_t> running_per_user;  // requests taken off the queue, per uid
    int32_t running = 0;
    uint64_t next_handle = 1;
    bool stopping = false;
    Clock::time_point deadline;
    uint64_t requests_total = 0, requests_failed = 0, prompt_tokens_total = 0, completion_tokens_total = 0,
             cached_tokens_total = 0, forward_passes = 0, sessions_expired = 0, messages_dropped = 0;
    Clock::time_point next_expiry_sweep = Clock::now();
    std::deque<StepRecord> recent;           // the last seconds of steps, for recent tokens/s
    kv::PrefixCache prefixes;                // written by the engine thread (holding mu)
    uint64_t kv_tick = 0;                    // use counter ordering sessions' caches and prefixes
    uint64_t kv_evictions = 0;               // idle sessions' caches dropped for the budget
    KvKinds kv_kinds;                        // after the last step

    // Progress, for the watchdog: loop iterations and whether the thread waits for work.
    std::atomic<uint64_t> beats{0};
    std::atomic<bool> idle{true};
    mutable std::mutex watch_mu;           // stalled_for()'s memory of the last progress seen
    mutable uint64_t seen_progress = 0;
    mutable Clock::time_point seen_at = Clock::now();

    // The engine thread's own state.
    std::list<Active> actives;
    std::vector<float> logits;
    std::vector<float> hidden;  // hidden states of embeddings requests' tokens, from the last pass
    std::thread thread;

    explicit Impl(Config c);

    // engine.cpp
    void log(int priority, const std::string& message) const;
    Session* reserve_session(const GenerateRequest& r);  // under mu
    Session& find_session(const std::string& name, uint32_t uid) const;  // under mu; throws
    std::string session_text(const Session& s) const;

    // scheduler.cpp (engine thread)
    void loop();
    std::deque<Pending> take_admissible(const Ending& ending, bool expired);  // under mu
    void mark_overdue(Ending& ending) const;  // under mu
    void admit(Pending p, const Ending& ending);
    bool prepare(Active& a);  // false: its KV must wait for room
    // prompt.cpp (engine thread)
    std::vector<int32_t> render(Active& a);
    std::vector<int32_t> render_conversation(const Active& a, const std::vector<Message>& conv) const;
    void truncate_middle(Active& a, std::vector<int32_t>& full);
    // embed.cpp (engine thread)
    void prepare_embed(Active& a);
    void start_embed_input(Active& a);
    void pool_hidden(Active& a, const float* rows, size_t n);
    void expire_idle_sessions();  // under mu
    bool attach_cache(Active& a, const std::vector<int32_t>& full);
    void requeue_kv_waiting(const Ending& ending);  // under mu
    std::shared_ptr<const sampling::ConstraintVocab> constraint_vocab();
    void evict_caches(uint64_t need);  // under mu
    void remember_prefix(Active& a);
    void count_kv_kinds();
    void step();
    void on_token(Active& a, const float* row);
    void record_logprobs(Active& a, std::span<const float> logits, int32_t token);
    void emit(Active& a, const std::string& text);
    void finish(Active& a, const std::string& reason);
    void fail(Active& a, const EngineError& e);
    void release(Active& a, bool keep_history);
    void end_marked(const Ending& ending, bool all);
    void record_step(Clock::time_point t0, int32_t prompt_tokens, int32_t generated);
};

}  // namespace strata::engine
