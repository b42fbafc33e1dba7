// engine/scheduler.cpp — plan(): ending, preparing, admitting and batching requests for one
// engine step (see scheduler.h), from the tickets, their stages and the KV ledger only.
#include "engine/scheduler.h"

#include <algorithm>

#include "engine/request.h"

namespace strata::engine {

Scheduler::Scheduler(const Limits& limits, int32_t batch_tokens) : limits_(limits), batch_tokens_(batch_tokens) {}

void Scheduler::check_room() const {
    std::lock_guard lk(mu_);
    if (static_cast<int32_t>(entries_.size()) >= limits_.max_queued)
        throw EngineError(Errc::Busy, "the queue is full (" + std::to_string(limits_.max_queued) + " requests); retry later");
}

void Scheduler::submit(uint64_t handle, uint32_t uid, Clock::time_point submitted, Clock::time_point deadline) {
    {
        std::lock_guard lk(mu_);
        Entry e;
        e.handle = handle;
        e.uid = uid;
        e.submitted = submitted;
        e.deadline = deadline;
        entries_.push_back(e);
        ++events_;
    }
    cv_.notify_all();
}

void Scheduler::cancel(uint64_t handle) {
    {
        std::lock_guard lk(mu_);
        if (find(handle) == entries_.end()) return;
        cancels_.insert(handle);
        ++events_;
    }
    cv_.notify_all();
}

void Scheduler::update_limits(const Limits& limits) {
    std::lock_guard lk(mu_);
    limits_ = limits;
}

void Scheduler::stop(Clock::time_point deadline) {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
        stop_deadline_ = deadline;
        ++events_;
    }
    cv_.notify_all();
}

bool Scheduler::stopping() const {
    std::lock_guard lk(mu_);
    return stopping_;
}

void Scheduler::wake() {
    {
        std::lock_guard lk(mu_);
        ++events_;
    }
    cv_.notify_all();
}

void Scheduler::wait_for_work(Clock::time_point until) {
    std::unique_lock lk(mu_);
    if (stopping_) until = std::min(until, stop_deadline_);
    cv_.wait_until(lk, until, [&] { return events_ != planned_events_; });
}

int32_t Scheduler::queued() const {
    std::lock_guard lk(mu_);
    return static_cast<int32_t>(std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return waiting(e.stage); }));
}

int32_t Scheduler::running() const {
    std::lock_guard lk(mu_);
    return static_cast<int32_t>(std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !waiting(e.stage); }));
}

bool Scheduler::done() const {
    std::lock_guard lk(mu_);
    return stopping_ && entries_.empty();
}

bool Scheduler::wants_kv() const {
    std::lock_guard lk(mu_);
    return std::any_of(entries_.begin(), entries_.end(), [](const Entry& e) { return e.stage == Stage::Ready; });
}

StepPlan Scheduler::plan(Clock::time_point now, const KvView& kv) {
    std::lock_guard lk(mu_);
    planned_events_ = events_;
    StepPlan plan;
    end_marked(now, plan);
    take_queued(plan);
    admit_ready(kv, plan);
    fill_batch(plan);
    return plan;
}

// Cancelled and overdue requests, wherever they are; every request once the grace time of
// a shutdown ran out. They leave the scheduler with the plan.
void Scheduler::end_marked(Clock::time_point now, StepPlan& plan) {
    const bool expired = stopping_ && now >= stop_deadline_;
    for (auto it = entries_.begin(); it != entries_.end();) {
        const char* reason = cancels_.count(it->handle) ? "cancelled" : now >= it->deadline ? "timeout" : expired ? "cancelled" : nullptr;
        if (!reason) {
            ++it;
            continue;
        }
        plan.end.push_back({it->handle, reason});
        it = entries_.erase(it);
    }
    cancels_.clear();
}

int32_t Scheduler::taken_by(uint32_t uid) const {
    return static_cast<int32_t>(
        std::count_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.uid == uid && e.stage != Stage::Queued; }));
}

int32_t Scheduler::running_of(uint32_t uid) const {
    return static_cast<int32_t>(
        std::count_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.uid == uid && e.stage == Stage::Running; }));
}

// Queued requests of users under limits.max_running_per_user are taken off the queue to be
// prepared: round by round, one per user a round, each user's oldest first, so that one
// user's burst does not go before another's single request.
void Scheduler::take_queued(StepPlan& plan) {
    for (bool took = true; took;) {
        took = false;
        std::map<uint32_t, bool> served;  // users who had their turn this round
        for (Entry& e : entries_) {
            if (e.stage != Stage::Queued || served[e.uid] || taken_by(e.uid) >= limits_.max_running_per_user) continue;
            served[e.uid] = true;
            e.stage = Stage::Preparing;
            plan.prepare.push_back(e.handle);
            took = true;
        }
    }
}

// Prepared requests join the running ones when their KV fits the budget, after evicting
// the least recently used cached KV that frees enough; the user with the fewest running
// requests first, then the oldest. One that does not fit waits while others run; with
// nothing else running it is admitted anyway (its KV alone fits: prepare checked that),
// after evicting all it can.
void Scheduler::admit_ready(const KvView& kv, StepPlan& plan) {
    std::vector<Entry*> ready;
    for (Entry& e : entries_)
        if (e.stage == Stage::Ready) ready.push_back(&e);
    std::stable_sort(ready.begin(), ready.end(), [&](const Entry* a, const Entry* b) { return running_of(a->uid) < running_of(b->uid); });
    uint64_t used = kv.used;
    size_t evicted = 0;
    for (Entry* e : ready) {
        size_t take = evicted;
        uint64_t freed = 0;
        while (used - freed + e->need.kv_bytes > kv.budget && take < kv.lru.size()) freed += kv.lru[take++].bytes;
        const bool alone = std::none_of(entries_.begin(), entries_.end(), [](const Entry& x) { return x.stage == Stage::Running; });
        if (used - freed + e->need.kv_bytes > kv.budget && !alone) continue;
        plan.evict.insert(plan.evict.end(), kv.lru.begin() + static_cast<std::ptrdiff_t>(evicted),
                          kv.lru.begin() + static_cast<std::ptrdiff_t>(take));
        evicted = take;
        used = used - freed + e->need.kv_bytes;
        e->stage = Stage::Running;
        e->order = next_order_++;
        e->pending = e->need.prompt_tokens;
        e->pause = e->need.pause;
        e->decoding = false;
        plan.admit.push_back(e->handle);
    }
}

// Every decoding request's next tokens first (one, or one and its guesses, with logits at
// each), then prompt chunks of the others, in admission order, up to batch_tokens; a prompt
// that must go whole waits for a pass with room for all of it.
void Scheduler::fill_batch(StepPlan& plan) {
    std::vector<Entry*> running;
    for (Entry& e : entries_)
        if (e.stage == Stage::Running && e.pending > 0) running.push_back(&e);
    std::sort(running.begin(), running.end(), [](const Entry* a, const Entry* b) { return a->order < b->order; });
    int32_t budget = batch_tokens_;
    for (const Entry* e : running) {
        if (!e->decoding || budget == 0) continue;
        const int32_t n = std::min(e->pending, budget);
        plan.batch.push_back({e->handle, n, n == 1 ? LogitsAt::Last : LogitsAt::All});
        budget -= n;
    }
    for (const Entry* e : running) {
        if (e->decoding || budget == 0 || (e->need.whole && e->pending > budget)) continue;
        const int32_t n = std::min({e->pending, budget, e->pause > 0 ? e->pause : e->pending});
        const bool last = n == e->pending && e->need.logits;
        plan.batch.push_back({e->handle, n, last ? LogitsAt::Last : LogitsAt::None});
        budget -= n;
    }
}

Scheduler::Entries::iterator Scheduler::find(uint64_t handle) {
    return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.handle == handle; });
}

void Scheduler::prepared(uint64_t handle, const Prepared& p) {
    std::lock_guard lk(mu_);
    const auto it = find(handle);
    if (it == entries_.end()) return;
    it->need = p;
    it->stage = Stage::Ready;
}

void Scheduler::feed_next(uint64_t handle, int32_t tokens, bool decoding, int32_t pause) {
    std::lock_guard lk(mu_);
    const auto it = find(handle);
    if (it == entries_.end()) return;
    it->pending = tokens;
    it->pause = pause;
    it->decoding = decoding;
}

void Scheduler::remove(uint64_t handle) {
    std::lock_guard lk(mu_);
    const auto it = find(handle);
    if (it != entries_.end()) entries_.erase(it);
    cancels_.erase(handle);
}

}  // namespace strata::engine
