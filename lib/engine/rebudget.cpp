// engine/rebudget.cpp — a memory budget that changes while the engine serves (memory
// pressure, a cgroup limit lowered or raised, memory.budget on reload): on the engine
// thread, between steps, it gives memory back in order, each step only as far as the new
// budget needs — cached prefixes, then idle sessions' KV caches (saved to their session
// files first), then resident weights (the plan a start with that budget would have made:
// layers move to the streaming ring) — and takes it back for a larger budget by reading
// the larger plan's weights on a thread of their own while the current ones keep serving.
// Must not touch: when the budget changes (daemon/host/pressure.h), what a plan is
// (weights/planner.h).
#include <algorithm>

#include "engine/engine_impl.h"

namespace strata::engine {
namespace {

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

void Engine::set_memory_budget(const weights::Budget& budget) {
    {
        std::lock_guard lk(impl_->mu);
        impl_->next_budget = budget;
    }
    impl_->sched->wake();
}

// At the top of each engine step: weights loaded in the background go in, a new budget applies.
void Engine::Impl::adjust_memory() {
    if (regrowth && regrowth->done) finish_regrowth();
    std::optional<weights::Budget> budget;
    {
        std::lock_guard lk(mu);
        budget.swap(next_budget);
    }
    if (budget) apply_budget(*budget);
}

void Engine::Impl::apply_budget(const weights::Budget& budget) {
    if (regrowth) {  // a larger plan still loading: the new budget decides afresh
        regrowth->thread.join();
        regrowth.reset();
    }
    const MemorySetup before = memory->setup();
    MemorySetup next = memory->replan(budget);
    const bool lower = budget.bytes < before.budget.bytes;
    const bool same_weights = next.plan.mode == before.plan.mode && next.plan.resident == before.plan.resident;
    log(lower && !same_weights ? 4 : 6, "memory budget " + mib(before.budget.bytes) + " -> " + mib(budget.bytes) + " (" + budget.source + ")" +
                           (same_weights ? "; weights stay " + before.plan.summary() : "; weights to " + next.plan.summary()));
    if (!same_weights && next.plan.resident_bytes > before.plan.resident_bytes) {
        start_regrowth(std::move(next));
        std::lock_guard lk(mu);
        memory->commit([&] {
            MemorySetup s = before;  // the current weights serve until the larger plan is read
            s.budget = budget;
            return s;
        }());
        return;
    }
    const uint64_t kv_before = kv_ledger->bytes();
    {
        std::lock_guard lk(mu);
        kv_budget = next.kv_budget;
        memory_pressure_events += lower;
    }
    shed_kv(next.kv_budget);
    const uint64_t kv_released = kv_before > kv_ledger->bytes() ? kv_before - kv_ledger->bytes() : 0;
    if (!same_weights) {
        try {
            model->replace_weights(memory->factory_for(next.plan));
        } catch (const std::exception& e) {
            log(3, "cannot load the weights for the memory plan " + next.plan.summary() + ": " + e.what());
        }
    }
    const uint64_t weights_before = before.plan.resident_bytes + before.plan.ring_bytes + before.plan.expert_cache_bytes();
    const uint64_t weights_after = next.plan.resident_bytes + next.plan.ring_bytes + next.plan.expert_cache_bytes();
    const uint64_t released = kv_released + (weights_before > weights_after ? weights_before - weights_after : 0);
    if (released) log(4, "memory: gave back " + mib(kv_released) + " of KV caches and " + mib(released - kv_released) + " of weights");
    std::lock_guard lk(mu);
    memory->commit(std::move(next));
    memory_released_bytes += released;
}

void Engine::Impl::start_regrowth(MemorySetup next) {
    regrowth = std::make_unique<Regrowth>();
    regrowth->setup = std::move(next);
    regrowth->thread = std::thread([this, r = regrowth.get()] {
        try {
            r->source = model->build_weights(memory->factory_for(r->setup.plan));
        } catch (const std::exception& e) {
            r->error = e.what();
        }
        r->done = true;
        sched->wake();
    });
}

void Engine::Impl::finish_regrowth() {
    regrowth->thread.join();
    std::unique_ptr<Regrowth> r = std::move(regrowth);
    if (!r->source) {
        log(3, "cannot load the weights for the memory plan " + r->setup.plan.summary() + ": " + r->error + "; keeping the current plan");
        return;
    }
    model->replace_weights(std::move(r->source));
    log(6, "memory: weights back to " + r->setup.plan.summary());
    std::lock_guard lk(mu);
    kv_budget = r->setup.kv_budget;
    memory->commit(std::move(r->setup));
}

// Gives KV caches back until the ledger holds at most `target`: cached prefixes first, then
// idle sessions' caches, least recently used first, each saved to its session's file first.
// Running requests keep theirs (a request that cannot fit fails naming the budget).
void Engine::Impl::shed_kv(uint64_t target) {
    KvView view = kv_view();
    std::stable_partition(view.lru.begin(), view.lru.end(), [](const Evictable& e) { return e.kind == Evictable::Kind::Prefix; });
    std::vector<Evictable> victims;
    for (uint64_t used = view.used; used > target && victims.size() < view.lru.size(); used -= std::min(used, victims.back().bytes))
        victims.push_back(view.lru[victims.size()]);
    if (!victims.empty()) evict(victims, true);
}

}  // namespace strata::engine
