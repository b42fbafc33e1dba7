// engine/scheduler.h — the plan of each engine step, as plain data.
// Owns: the requests the engine has accepted, seen as tickets (handle, uid, submit time,
// deadline) and stages (queued, being prepared, ready for KV, running); cancellations and
// deadlines; limits.max_queued and limits.max_running_per_user; which queued requests are
// prepared (rendered and tokenized) and which prepared ones are admitted to the KV budget,
// in an order fair across users; which cached KV is evicted for them, least recently used
// first; and the batch of each forward pass: who feeds how many tokens and which of those
// positions need logits, within engine.batch_tokens.
// Must not touch: models, tokens, sessions, sinks. The scheduler sees requests as numbers,
// so that its unit test drives plan() without a model (tests/unit/scheduler_test.cpp).
// Thread model: submit(), cancel() and the counts are thread-safe (the scheduler's own
// lock); plan() and the report methods are called by the engine thread.
//
// A step: plan() -> the engine applies the plan (ends, prepares, evicts, admits, runs the
// batch) -> it reports back what happened to each request (prepared, fed, remove).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <set>
#include <mutex>
#include <vector>

#include "engine/config.h"

namespace strata::engine {

// Cached KV that may be dropped to make room: a block of the prefix cache or an idle
// session's cache.
struct Evictable {
    enum class Kind { Prefix, Session } kind = Kind::Prefix;
    uint64_t id = 0;     // Session: which one (the engine's id); Prefix: the cache's oldest entry goes
    uint64_t tick = 0;   // last use (larger = more recent)
    uint64_t bytes = 0;  // what dropping it frees: the blocks it alone holds
};

// The KV ledger before a step: the budget, the bytes live blocks take, and what may be
// evicted, least recently used first.
struct KvView {
    uint64_t budget = 0, used = 0;
    std::vector<Evictable> lru;
};

// Which positions of a request's tokens in a pass need logits.
enum class LogitsAt { None, Last, All };

// One request's part of a forward pass.
struct Feed {
    uint64_t handle = 0;
    int32_t tokens = 0;
    LogitsAt logits = LogitsAt::Last;
};

struct Ending {
    uint64_t handle = 0;
    const char* reason = "";  // "cancelled", "timeout"
};

struct StepPlan {
    std::vector<Ending> end;          // to end now: cancelled, overdue, or every request when the grace time ran out
    std::vector<uint64_t> prepare;    // queued requests to render now; report prepared() or remove()
    std::vector<Evictable> evict;     // cached KV to drop, in this order, before admitting
    std::vector<uint64_t> admit;      // prepared requests whose KV fits now: attach and reserve it
    std::vector<Feed> batch;          // the forward pass: decoding requests first, then prompt chunks, oldest first
    bool idle() const { return end.empty() && prepare.empty() && admit.empty() && batch.empty(); }
};

// What a prepared request needs before it runs.
struct Prepared {
    uint64_t kv_bytes = 0;       // new KV its prompt takes
    int32_t prompt_tokens = 0;   // tokens left to feed (at least one)
    bool whole = false;          // its prompt must go in one pass (attention that is not causal)
    bool logits = true;          // logits at the prompt's end (false: hidden states only, embeddings)
    int32_t pause = 0;           // > 0: the prompt's first `pause` tokens end a pass (a recurrent
                                 // state is kept there), the rest goes after
};

class Scheduler {
public:
    Scheduler(const Limits& limits, int32_t batch_tokens);

    // Accepting work (any thread). submit() throws EngineError(Busy) when limits.max_queued
    // requests are queued or running; a deadline of time_point::max() is none.
    void check_room() const;
    void submit(uint64_t handle, uint32_t uid, Clock::time_point submitted, Clock::time_point deadline);
    void cancel(uint64_t handle);
    void update_limits(const Limits& limits);
    // Stops taking work; requests still running after `deadline` are ended.
    void stop(Clock::time_point deadline);
    bool stopping() const;
    // After an idle plan: waits until a request comes or is cancelled, the engine stops (or
    // its grace time runs out), or `until`.
    void wait_for_work(Clock::time_point until);
    // Ends a wait_for_work (the engine has something to do besides requests: a new memory
    // budget, weights loaded in the background).
    void wake();

    int32_t queued() const;   // waiting: in the queue, or prepared and waiting for KV room
    int32_t running() const;  // being prepared or running
    bool done() const;        // stopping, and nothing left

    // Whether plan() will want a KvView: prepared requests wait for KV room.
    bool wants_kv() const;
    // The next step's plan. Applying it is the engine's; plan() assumes it is applied:
    // ended requests are gone, prepared ones wait for prepared(), admitted ones run.
    StepPlan plan(Clock::time_point now, const KvView& kv);

    // Reports (engine thread).
    void prepared(uint64_t handle, const Prepared& p);
    // After a pass, or to change course: the tokens it has to feed next, and whether they
    // are generated tokens (logits at every one of them) or the rest of a prompt (whose
    // first `pause` tokens, when > 0, end a pass).
    void feed_next(uint64_t handle, int32_t tokens, bool decoding, int32_t pause = 0);
    void remove(uint64_t handle);  // ended, failed, or gone back to waiting outside

private:
    enum class Stage { Queued, Preparing, Ready, Running };
    static bool waiting(Stage s) { return s == Stage::Queued || s == Stage::Ready; }
    struct Entry {
        uint64_t handle = 0;
        uint32_t uid = 0;
        Clock::time_point submitted, deadline;
        Stage stage = Stage::Queued;
        uint64_t order = 0;          // admission order (prompt chunks go oldest first)
        Prepared need;
        int32_t pending = 0;         // Running: tokens to feed next
        int32_t pause = 0;           // a prompt's pass ends after this many of them (0: no pause)
        bool decoding = false;
    };
    using Entries = std::list<Entry>;

    Entries::iterator find(uint64_t handle);
    void end_marked(Clock::time_point now, StepPlan& plan);
    void take_queued(StepPlan& plan);
    void admit_ready(const KvView& kv, StepPlan& plan);
    void fill_batch(StepPlan& plan);
    int32_t taken_by(uint32_t uid) const;
    int32_t running_of(uint32_t uid) const;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    Limits limits_;
    int32_t batch_tokens_;
    Entries entries_;                // submit order
    std::set<uint64_t> cancels_;
    bool stopping_ = false;
    Clock::time_point stop_deadline_;
    uint64_t next_order_ = 0;
    uint64_t events_ = 0, planned_events_ = 0;  // submits, cancels and stops; as of the last plan
};

}  // namespace strata::engine
