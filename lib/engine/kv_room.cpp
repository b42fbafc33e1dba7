// engine/kv_room.cpp — the KV budget's holders, on the engine thread: what may be evicted
// for a request that waits for room (cached prefixes and idle sessions' caches, least
// recently used first, with what each frees), evicting it, making a sequence's blocks
// findable by later requests, and the bytes by holder that status shows.
// Must not touch: when to evict (scheduler.h), prompts, sampling.
#include <unordered_set>

#include "engine/engine_impl.h"

namespace strata::engine {
namespace {

// The bytes of a cache's live blocks and recurrent state that `counts` (given a shared
// pointer to either).
template <class Counts>
uint64_t block_bytes(const kv::KvCache& c, Counts counts) {
    uint64_t bytes = 0;
    for (int32_t i = 0; i * kv::kBlockTokens < c.size(); ++i)
        for (const kv::BlockRef* part : c.block(i).parts())
            if (*part && counts(*part)) bytes += (*part)->bytes();
    if (c.state_ref() && counts(c.state_ref())) bytes += c.state_ref()->bytes();
    return bytes;
}

// Bytes of a cache's blocks and state that nothing else holds.
uint64_t held_alone(const kv::KvCache& c) {
    return block_bytes(c, [](const auto& b) { return b.use_count() == 1; });
}

uint64_t session_id(const Session& s) { return reinterpret_cast<uintptr_t>(&s); }

}  // namespace

// The ledger and its evictable holders, oldest first: idle sessions' caches (a session keeps
// its history: its cache is rebuilt, or reloaded from disk, on next use) and the prefix
// cache's entries. A block two of them share frees nothing until both go: the scheduler
// then sees it freed in a later step.
KvView Engine::Impl::kv_view() {
    std::lock_guard lk(mu);
    KvView view{kv_budget, kv_ledger->bytes(), {}};
    for (const auto& [key, s] : sessions)
        if (s->cache && !s->busy) view.lru.push_back({Evictable::Kind::Session, session_id(*s), s->kv_tick, held_alone(*s->cache)});
    for (const auto& v : prefixes.eviction_order()) view.lru.push_back({Evictable::Kind::Prefix, 0, v.tick, v.bytes});
    std::stable_sort(view.lru.begin(), view.lru.end(), [](const Evictable& a, const Evictable& b) { return a.tick < b.tick; });
    return view;
}

void Engine::Impl::evict(const std::vector<Evictable>& victims, bool save_sessions) {
    std::lock_guard lk(mu);
    for (const Evictable& v : victims) {
        if (v.kind == Evictable::Kind::Prefix) {
            prefixes.evict_oldest();
            continue;
        }
        for (auto& [key, s] : sessions)
            if (session_id(*s) == v.id && s->cache && !s->busy) {
                if (save_sessions) save_cache(*s);
                s->cache.reset();
                ++kv_evictions;
            }
    }
}

// Writes an idle session's cache to its file before it is dropped, so the next request of
// the session reloads it instead of recomputing (a session that cannot be saved is logged
// and recomputed then).
void Engine::Impl::save_cache(const Session& s) {
    try {
        store.save_cache(s);
    } catch (const std::exception& e) {
        log(3, "cannot save the KV cache of session " + s.name + ": " + e.what());
    }
}

// Makes the full blocks of the request's sequence so far findable by later requests, with a
// snapshot of a recurrent sequence's state where it is now when asked (the prompt's pause
// before its last token, the end of the reply).
void Engine::Impl::remember_prefix(Active& a, bool snapshot) {
    const kv::KvCache& cache = *a.session->cache;
    const kv::Snapshot snap = snapshot && cache.recurrent() ? cache.snapshot() : kv::Snapshot{};
    std::lock_guard lk(mu);
    prefixes.insert(a.gen->history(), *a.session->cache, ++kv_tick, snap.state ? &snap : nullptr);
}

// KV bytes by holder, for status: blocks of running requests, then of idle sessions, then
// those only the prefix cache holds (a shared block counts once, for its first holder).
void Engine::Impl::count_kv_kinds() {
    std::unordered_set<const void*> seen;
    auto count = [&](const kv::KvCache& c) { return block_bytes(c, [&](const auto& b) { return seen.insert(b.get()).second; }); };
    KvKinds k;
    for (const auto& [handle, a] : actives)  // a released request's session may already be gone (deleted by its owner)
        if (!a.released && a.session->cache) k.running += count(*a.session->cache);
    std::lock_guard lk(mu);
    for (const auto& [key, s] : sessions)
        if (s->cache && !s->busy) k.idle += count(*s->cache);
    k.prefix = kv_ledger->bytes() > k.running + k.idle ? kv_ledger->bytes() - k.running - k.idle : 0;
    kv_kinds = k;
}

}  // namespace strata::engine
