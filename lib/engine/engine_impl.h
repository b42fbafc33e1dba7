// engine/engine_impl.h — internal: the state behind Engine, shared by engine.cpp (the
// thread-safe front: accepting requests, sessions, status) and the engine thread's files:
// step.cpp (each step: plan, apply, run the pass, hand out logits), admission.cpp (preparing
// a request: its prompt, its session's KV), kv_room.cpp (the KV budget's holders and
// eviction), prompt.cpp (messages to tokens), embed.cpp (embeddings requests).
// Locking: `mu` guards what other threads read (sessions, counters, the prefix cache);
// the scheduler has its own lock; the engine thread alone touches `actives`.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/draft.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "engine/guess.h"
#include "engine/memory.h"
#include "engine/scheduler.h"
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

inline int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

using SessionKey = std::pair<uint32_t, std::string>;  // owner uid, name

// A request accepted by submit(), waiting to be taken off the queue.
struct Pending {
    uint64_t handle = 0;
    GenerateRequest req;
    std::shared_ptr<Sink> sink;
    Session* session = nullptr;             // reserved (busy) named session, or null: anonymous
    std::optional<chat::ChatFamily> family;  // chat requests: a built-in family, or null: the model's own template
    Clock::time_point submitted;
};

// A request the engine thread holds: from being prepared until it ends. Ending it marks it
// `ended`; the step removes ended requests after it is done with them.
struct Active {
    Pending p;
    std::unique_ptr<Session> anonymous;
    Session* session = nullptr;             // p.session or anonymous.get()
    std::vector<int32_t> history;           // prepared: the session's tokens after its input (its Generation's from admission)
    std::vector<Message> conversation;      // chat: the session's turns after this request's input
    std::vector<int32_t> prompt;            // tokens to feed before generating (not yet cached)
    std::vector<int32_t> snapshot_at;       // recurrent chats: where the last messages start (ascending positions)
    size_t fed = 0;                         // of prompt, how many are in the cache
    std::vector<int32_t> next;              // decoding: the sampled token to feed next, then its guesses
    Speculation spec;                       // its guesses' length and acceptance (guess.h)
    std::optional<DraftSequence> draft;     // the draft model's KV of its sequence, once asked
    int32_t draft_ask = 0;                  // > 0: the draft guesses this many after the pass (draft_guesses)
    std::optional<kv::Snapshot> before_guesses;  // a recurrent sequence's cache before a pass with guesses
    std::optional<Generation> gen;          // from admission on
    Usage usage;                            // the prompt's figures (completion tokens: gen)
    bool ended = false;                     // finished or failed: its sink has heard the end
    bool released = false;                  // its session was given back
    // Embeddings requests: every input's tokens, which one runs (as `prompt`), how its
    // hidden states pool, the pooled sum so far, and the vectors done.
    std::vector<std::vector<int32_t>> embed_inputs;
    size_t embed_index = 0;
    model::Pooling pooling = model::Pooling::None;
    std::vector<float> pooled;
    std::vector<std::vector<float>> embeddings;

    bool decoding() const { return fed == prompt.size(); }
    bool embedding() const { return !p.req.embed.empty(); }
};

// KV bytes by what holds them: running requests, idle sessions, and the prefix cache alone.
struct KvKinds {
    uint64_t running = 0, idle = 0, prefix = 0;
};

// The weights of a larger budget's plan, read on a thread of their own while the current
// ones serve; swapped in between steps when done.
struct Regrowth {
    MemorySetup setup;
    std::unique_ptr<weights::WeightSource> source;
    std::string error;
    std::atomic<bool> done{false};
    std::thread thread;
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
    std::unique_ptr<Draft> draft;            // model.draft, or null
    std::shared_ptr<const sampling::ConstraintVocab> vocab_for_grammars;  // engine thread only
    std::unique_ptr<tokenizer::Tokenizer> tokenizer;
    std::unique_ptr<chat::Template> model_template;      // the GGUF's tokenizer.chat_template, parsed
    std::optional<chat::ChatFamily> model_family;       // configured, or the fallback when the template does not parse
    std::string model_template_problem;                 // why the model has no usable template
    // A chat request's built-in family (null: the model's template); InvalidParams when neither.
    std::optional<chat::ChatFamily> chat_family(const GenerateRequest& request) const;
    SessionStore store;
    int32_t context = 0;
    int32_t batch_tokens = 0;
    uint64_t kv_budget = 0;
    std::shared_ptr<kv::Ledger> kv_ledger = std::make_shared<kv::Ledger>();  // every KV block's bytes
    std::unique_ptr<MemoryPlanner> memory;
    std::unique_ptr<Scheduler> sched;
    Clock::time_point started_at = Clock::now();

    // Guarded by mu.
    mutable std::mutex mu;
    Limits limits;
    std::map<uint64_t, Pending> queued;     // submitted, not yet taken by the engine thread
    std::map<SessionKey, std::unique_ptr<Session>> sessions;  // one namespace per uid
    uint64_t next_handle = 1;
    uint64_t requests_total = 0, requests_failed = 0, prompt_tokens_total = 0, completion_tokens_total = 0,
             cached_tokens_total = 0, forward_passes = 0, sessions_expired = 0, messages_dropped = 0,
             spec_passes = 0, spec_guessed = 0, spec_accepted = 0, spec_tokens = 0;  // verify passes with guesses, what they made
    double pass_seconds = 0;                 // in the model's forward passes (the draft's: draft->seconds())
    Clock::time_point next_expiry_sweep = Clock::now();
    std::deque<StepRecord> recent;           // the last seconds of steps, for recent tokens/s
    kv::PrefixCache prefixes;                // written by the engine thread (holding mu)
    NgramPool ngram_pool;                    // finished outputs' n-grams; written by the engine thread (holding mu)
    uint64_t kv_tick = 0;                    // use counter ordering sessions' caches and prefixes
    uint64_t kv_evictions = 0;               // idle sessions' caches dropped for the budget
    KvKinds kv_kinds;                        // after the last step
    std::optional<weights::Budget> next_budget;  // set_memory_budget's, not yet applied
    uint64_t memory_pressure_events = 0;     // budgets lowered while serving
    uint64_t memory_released_bytes = 0;      // weights and KV given back for them

    // Progress, for the watchdog: loop iterations and whether the thread waits for work.
    std::atomic<uint64_t> beats{0};
    std::atomic<bool> idle{true};
    mutable std::mutex watch_mu;           // stalled_for()'s memory of the last progress seen
    mutable uint64_t seen_progress = 0;
    mutable Clock::time_point seen_at = Clock::now();

    // The engine thread's own state.
    std::unique_ptr<Regrowth> regrowth;      // weights for a larger budget, loading in the background
    std::map<uint64_t, Active> actives;      // by handle
    std::vector<float> logits;
    std::vector<float> hidden;  // hidden states of embeddings requests' tokens, from the last pass
    std::thread thread;

    explicit Impl(Config c);

    // engine.cpp
    void log(int priority, const std::string& message) const;
    Session* reserve_session(const GenerateRequest& r);  // under mu
    Session& find_session(const std::string& name, uint32_t uid) const;  // under mu; throws
    std::string session_text(const Session& s) const;

    // step.cpp (engine thread)
    void loop();
    void apply(const StepPlan& plan);
    void run_batch(const std::vector<Feed>& batch);
    void take_logits(Active& a, const Feed& f, const float* row);
    void report_next(const Active& a);  // what it feeds next, to the scheduler
    void verify(Active& a, const Feed& f, const float* rows);
    std::optional<Generation::Outcome> on_token(Active& a, const float* row, int32_t& token);
    bool go_on(Active& a, std::optional<Generation::Outcome> outcome);
    bool plan_guesses(Active& a);
    bool rewind_recurrent(Active& a, int32_t kept);
    void add_guesses(Active& a, std::vector<int32_t> guesses);
    void draft_guesses();
    bool uses_draft(const GenerateRequest& r) const;
    void send_output(Active& a);
    void finish(Active& a, const std::string& reason);
    void fail(Active& a, const EngineError& e);
    void release(Active& a, bool keep_history);
    void record_step(Clock::time_point t0, int32_t prompt_tokens, int32_t generated);
    void record_verify(int32_t guessed, int32_t accepted);
    void expire_idle_sessions();  // under mu
    // rebudget.cpp (engine thread)
    void adjust_memory();
    void apply_budget(const weights::Budget& budget);
    void start_regrowth(MemorySetup next);
    void finish_regrowth();
    void shed_kv(uint64_t target);
    // admission.cpp (engine thread)
    Active& take(uint64_t handle);
    void prepare(Active& a);
    void admit(Active& a);
    uint64_t attach_cache(Active& a, const std::vector<int32_t>& full);
    std::shared_ptr<const sampling::ConstraintVocab> constraint_vocab();
    // kv_room.cpp (engine thread)
    KvView kv_view();
    void evict(const std::vector<Evictable>& victims, bool save_sessions = false);
    void save_cache(const Session& s);  // under mu
    void remember_prefix(Active& a, bool snapshot);
    int32_t recurrent_pause(const Active& a) const;
    void count_kv_kinds();
    // prompt.cpp (engine thread)
    std::vector<int32_t> render(Active& a);
    std::vector<int32_t> render_conversation(const Active& a, const std::vector<Message>& conv) const;
    void truncate_middle(Active& a, std::vector<int32_t>& full);
    std::vector<int32_t> message_starts(const Active& a, const std::vector<int32_t>& full, int32_t from) const;
    // embed.cpp (engine thread)
    void prepare_embed(Active& a);
    void start_embed_input(Active& a);
    void next_embed_input(Active& a, std::vector<float> vector);
    std::vector<int32_t> input_tokens(const EmbedInput& input) const;
    void pool_hidden(Active& a, const float* rows, size_t n);
};

}  // namespace strata::engine
