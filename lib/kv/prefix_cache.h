// kv/prefix_cache.h — the automatic prefix cache: full KV blocks of finished and running
// sequences, keyed by all the tokens up to and including the block, so that any later
// sequence starting with the same tokens shares them instead of computing them again.
// Owns: the block index (a chained 64-bit hash of the tokens, checked against the block's
// own tokens and its parent's key, so a hash collision can never hand out wrong KV),
// recurrent caches' snapshots (the state at a position, kept with the entry of the last
// full block before it, once per position), recency for least-recently-used eviction, hit
// counters. Must not touch: block memory
// and copy-on-write (kv_cache.h), the memory budget and when to evict (engine/).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kv/kv_cache.h"

namespace strata::kv {

class PrefixCache {
public:
    // Makes the full blocks of `cache` (holding `tokens`' first cache.size() positions) findable;
    // a block whose prefix is known already is replaced in `cache` by the known one, so equal
    // prefixes computed twice end up stored once. `tick` orders uses (larger = more recent).
    // A recurrent cache's blocks are of use only with a snapshot of its state: `snap` (taken
    // of `cache` at a position of at least kBlockTokens) is kept with them, unless one of
    // that position and tokens is known already.
    void insert(const std::vector<int32_t>& tokens, KvCache& cache, uint64_t tick, const Snapshot* snap = nullptr);
    // Appends to `cache` the known blocks that continue it along `tokens`, while the cache
    // stays under `limit` positions and, for sliding-window layers, up to the deepest block
    // where the known blocks still hold the window; cache.size() must be a multiple of
    // kBlockTokens and its positions hold tokens' first ones. An empty recurrent cache
    // becomes the deepest snapshot along `tokens` within `limit` (with its blocks); one that
    // is not empty gets nothing. Returns the positions appended.
    int32_t extend(const std::vector<int32_t>& tokens, KvCache& cache, int32_t limit, uint64_t tick);

    // The least recently used entry's tick (0 when empty), and dropping it. An entry is used
    // whenever one deeper in its prefix is, and among entries used last at the same tick
    // the deepest goes first, so eviction trims prefixes from their ends.
    uint64_t oldest_tick() const;
    void evict_oldest();
    void clear() { entries_.clear(); }

    // Every entry in the order evict_oldest() drops them: its tick, and the bytes of its
    // blocks that nothing else holds (what dropping it alone frees).
    struct Victim {
        uint64_t tick = 0, bytes = 0;
    };
    std::vector<Victim> eviction_order() const;

    size_t entries() const { return entries_.size(); }
    // Bytes of blocks nothing but this cache holds (what evicting everything would free).
    uint64_t bytes_held_alone() const;

    struct Stats {
        uint64_t lookups = 0, hits = 0;   // extend() calls, and those that appended blocks
        uint64_t blocks_reused = 0;        // blocks appended by extend()
        uint64_t evictions = 0;            // entries evicted
    };
    const Stats& stats() const { return stats_; }

private:
    // A snapshot after an entry's block: the tokens from the block's end to its position.
    struct Snap {
        std::vector<int32_t> tail;
        Snapshot at;
    };
    struct Entry {
        uint64_t parent = 0;               // key of the block before (0 for the first)
        std::vector<int32_t> tokens;       // the block's own kBlockTokens tokens
        Blocks blocks;                     // (the window part only where its inserter still had it)
        uint64_t tick = 0;
        int32_t depth = 0;                 // the block's index in its sequence
        std::vector<Snap> snaps;           // recurrent caches' states in the next block's positions
    };
    static bool evicts_before(const std::pair<const uint64_t, Entry>& a, const std::pair<const uint64_t, Entry>& b);
    static uint64_t held_alone(const Entry& e);
    // extend() for a recurrent cache.
    int32_t restore(const std::vector<int32_t>& tokens, KvCache& cache, int32_t limit, uint64_t tick);
    std::unordered_map<uint64_t, Entry>::const_iterator oldest() const;
    // The key of block i of `tokens` after the key of block i - 1.
    static uint64_t key(uint64_t parent, const int32_t* tokens);
    Entry* find(uint64_t key, uint64_t parent, const int32_t* tokens);
    // Whether `cache` continued by found[0..n) holds the window its next position needs.
    static bool window_kept(const KvCache& cache, const std::vector<Entry*>& found, size_t n);

    std::unordered_map<uint64_t, Entry> entries_;
    Stats stats_;
};

}  // namespace strata::kv
