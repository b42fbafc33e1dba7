// kv/prefix_cache.cpp — the block index of the automatic prefix cache (see prefix_cache.h).
#include "kv/prefix_cache.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace strata::kv {

uint64_t PrefixCache::key(uint64_t parent, const int32_t* tokens) {
    uint64_t h = parent ^ 0x9e3779b97f4a7c15ull;
    for (int32_t i = 0; i < kBlockTokens; ++i) {
        h ^= static_cast<uint32_t>(tokens[i]);
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h == 0 ? 1 : h;  // 0 is "no parent"
}

PrefixCache::Entry* PrefixCache::find(uint64_t k, uint64_t parent, const int32_t* tokens) {
    const auto it = entries_.find(k);
    if (it == entries_.end() || it->second.parent != parent ||
        std::memcmp(it->second.tokens.data(), tokens, sizeof(int32_t) * kBlockTokens) != 0)
        return nullptr;
    return &it->second;
}

void PrefixCache::insert(const std::vector<int32_t>& tokens, KvCache& cache, uint64_t tick, const Snapshot* snap) {
    uint64_t parent = 0;
    const int32_t n = std::min<int32_t>(cache.full_blocks(), static_cast<int32_t>(tokens.size() / kBlockTokens));
    // The entry a snapshot goes with: that of the last full block before its position.
    const int32_t owner = snap && snap->positions >= kBlockTokens && size_t(snap->positions) <= tokens.size() ? snap->positions / kBlockTokens - 1 : -1;
    for (int32_t i = 0; i < n; ++i) {
        const int32_t* t = tokens.data() + size_t(i) * kBlockTokens;
        const uint64_t k = key(parent, t);
        if (Entry* known = find(k, parent, t)) {
            if (!known->blocks.window) known->blocks.window = cache.block(i).window;  // where the cache still has it
            cache.replace(i, known->blocks);
            known->tick = tick;
        } else if (!entries_.count(k)) {  // (a colliding key keeps its first owner)
            entries_.emplace(k, Entry{parent, std::vector<int32_t>(t, t + kBlockTokens), cache.block(i), tick, i, {}});
        }
        if (i == owner)
            if (Entry* e = find(k, parent, t)) {
                std::vector<int32_t> tail(tokens.begin() + (i + 1) * kBlockTokens, tokens.begin() + snap->positions);
                if (std::none_of(e->snaps.begin(), e->snaps.end(), [&](const Snap& x) { return x.tail == tail; }))
                    e->snaps.push_back({std::move(tail), *snap});
            }
        parent = k;
    }
}

int32_t PrefixCache::restore(const std::vector<int32_t>& tokens, KvCache& cache, int32_t limit, uint64_t tick) {
    if (cache.size() != 0) return 0;
    std::vector<Blocks> full;
    std::vector<Entry*> path;
    const Snap* best = nullptr;
    size_t best_blocks = 0;
    uint64_t parent = 0;
    for (int32_t i = 0; size_t(i + 1) * kBlockTokens <= tokens.size() && (i + 1) * kBlockTokens <= limit; ++i) {
        const int32_t* t = tokens.data() + size_t(i) * kBlockTokens;
        const uint64_t k = key(parent, t);
        Entry* e = find(k, parent, t);
        if (!e) break;
        path.push_back(e);
        full.push_back(e->blocks);
        for (const Snap& snap : e->snaps) {
            const auto end = size_t(i + 1) * kBlockTokens + snap.tail.size();
            if (end <= tokens.size() && int32_t(end) <= limit && (!best || end > size_t(best->at.positions)) &&
                std::equal(snap.tail.begin(), snap.tail.end(), tokens.begin() + (i + 1) * kBlockTokens)) {
                best = &snap;
                best_blocks = path.size();
            }
        }
        parent = k;
    }
    if (!best) return 0;
    for (size_t i = 0; i < best_blocks; ++i) path[i]->tick = tick;
    full.resize(best_blocks);
    cache.restore(std::move(full), best->at);
    ++stats_.hits;
    stats_.blocks_reused += best_blocks;
    return cache.size();
}

int32_t PrefixCache::extend(const std::vector<int32_t>& tokens, KvCache& cache, int32_t limit, uint64_t tick) {
    ++stats_.lookups;
    if (cache.recurrent()) return restore(tokens, cache, limit, tick);
    if (cache.size() % kBlockTokens != 0) return 0;
    const int32_t had = cache.full_blocks();
    std::vector<Entry*> found;  // the known blocks after the cache's own
    uint64_t parent = 0;
    for (int32_t i = 0; size_t(i + 1) * kBlockTokens <= tokens.size() && (i + 1) * kBlockTokens <= limit; ++i) {
        const int32_t* t = tokens.data() + size_t(i) * kBlockTokens;
        const uint64_t k = key(parent, t);
        Entry* e = find(k, parent, t);
        if (!e && i >= had) break;
        if (e) e->tick = tick;
        if (i >= had) found.push_back(e);
        parent = k;
    }
    // Stop where the window layers have the window that continuing there needs.
    size_t n = found.size();
    while (n > 0 && !window_kept(cache, found, n)) --n;
    for (size_t i = 0; i < n; ++i) cache.adopt(found[i]->blocks);
    if (n > 0) {
        ++stats_.hits;
        stats_.blocks_reused += n;
    }
    return static_cast<int32_t>(n) * kBlockTokens;
}

bool PrefixCache::window_kept(const KvCache& cache, const std::vector<Entry*>& found, size_t n) {
    const int32_t had = cache.full_blocks(), end = had + static_cast<int32_t>(n);
    for (int32_t b = cache.window_start(end * kBlockTokens) / kBlockTokens; b < end; ++b)
        if (b >= had && !found[size_t(b - had)]->blocks.window) return false;  // (the cache keeps its own window)
    return true;
}

// Eviction order: least recently used first, the deepest first among equals (the key
// decides between equals of the same depth, so the order is total).
bool PrefixCache::evicts_before(const std::pair<const uint64_t, Entry>& a, const std::pair<const uint64_t, Entry>& b) {
    return std::make_tuple(a.second.tick, -a.second.depth, a.first) < std::make_tuple(b.second.tick, -b.second.depth, b.first);
}

std::unordered_map<uint64_t, PrefixCache::Entry>::const_iterator PrefixCache::oldest() const {
    return std::min_element(entries_.begin(), entries_.end(), evicts_before);
}

std::vector<PrefixCache::Victim> PrefixCache::eviction_order() const {
    std::vector<const std::pair<const uint64_t, Entry>*> order;
    for (const auto& entry : entries_) order.push_back(&entry);
    std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return evicts_before(*a, *b); });
    std::vector<Victim> out;
    for (const auto* entry : order) out.push_back({entry->second.tick, held_alone(entry->second)});
    return out;
}

uint64_t PrefixCache::oldest_tick() const { return entries_.empty() ? 0 : oldest()->second.tick; }

void PrefixCache::evict_oldest() {
    if (entries_.empty()) return;
    entries_.erase(oldest());
    ++stats_.evictions;
}

uint64_t PrefixCache::held_alone(const Entry& e) {
    uint64_t total = 0;
    const auto blocks = [&](const Blocks& b) {
        for (const BlockRef* part : b.parts())
            if (*part && part->use_count() == 1) total += (*part)->bytes();
    };
    blocks(e.blocks);
    for (const Snap& snap : e.snaps) {
        blocks(snap.at.partial);
        if (snap.at.state.use_count() == 1) total += snap.at.state->bytes();
    }
    return total;
}

uint64_t PrefixCache::bytes_held_alone() const {
    uint64_t total = 0;
    for (const auto& [k, e] : entries_) total += held_alone(e);
    return total;
}

}  // namespace strata::kv
