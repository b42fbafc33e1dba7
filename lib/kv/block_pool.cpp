// kv/block_pool.cpp — huge-page chunks cut into block slots (see block_pool.h).
#include "kv/block_pool.h"

#include <cstring>

#if defined(__has_include)
#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>  // ASAN_(UN)POISON_MEMORY_REGION: no-ops without ASan
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

namespace strata::kv {

uint64_t BlockPool::chunk_pages(size_t bytes) {
    uint64_t pages = (bytes + weights::kHugePage - 1) / weights::kHugePage;
    for (;; ++pages) {
        const uint64_t chunk = pages * weights::kHugePage;
        if ((chunk % bytes) * 16 <= chunk) return pages;
    }
}

BlockPool::~BlockPool() {
    // Unpoisoned before unmapping: the addresses may be mapped again by anyone.
    for (Size& s : sizes_)
        for (auto& [start, chunk] : s.chunks) ASAN_UNPOISON_MEMORY_REGION(start, chunk->memory.size());
}

BlockPool::Size& BlockPool::size_of(size_t bytes) {
    for (Size& s : sizes_)
        if (s.slot == bytes) return s;
    Size& s = sizes_.emplace_back();
    s.slot = bytes;
    s.chunk_bytes = chunk_pages(bytes) * weights::kHugePage;
    s.per_chunk = s.chunk_bytes / bytes;
    return s;
}

uint8_t* BlockPool::take(size_t bytes) {
    uint8_t* slot;
    {
        std::lock_guard lock(mu_);
        slot = take_locked(size_of(bytes));
    }
    ASAN_UNPOISON_MEMORY_REGION(slot, bytes);
    std::memset(slot, 0, bytes);
    return slot;
}

uint8_t* BlockPool::take_locked(Size& s) {
    if (s.open.empty()) {
        weights::Buffer memory(s.chunk_bytes, "KV cache blocks");
        uint8_t* start = memory.data();
        ASAN_POISON_MEMORY_REGION(start, memory.size());
        auto chunk = std::make_unique<Chunk>(Chunk{std::move(memory), {}});
        for (uint64_t i = s.per_chunk; i-- > 0;) chunk->free.push_back(i);
        mapped_.fetch_add(chunk->memory.size(), std::memory_order_relaxed);
        s.open.emplace(chunk->free.size(), start);
        s.chunks.emplace(start, std::move(chunk));
    }
    const uint8_t* start = s.open.begin()->second;
    s.open.erase(s.open.begin());
    Chunk& chunk = *s.chunks.at(start);
    const uint64_t i = chunk.free.back();
    chunk.free.pop_back();
    if (!chunk.free.empty()) s.open.emplace(chunk.free.size(), start);
    if (s.empty == start) s.empty = nullptr;
    return chunk.memory.data() + i * s.slot;
}

void BlockPool::give(uint8_t* slot, size_t bytes) {
    ASAN_POISON_MEMORY_REGION(slot, bytes);
    std::lock_guard lock(mu_);
    Size& s = size_of(bytes);
    auto it = std::prev(s.chunks.upper_bound(slot));
    Chunk& chunk = *it->second;
    s.open.erase({chunk.free.size(), it->first});
    chunk.free.push_back(uint64_t(slot - it->first) / s.slot);
    s.open.emplace(chunk.free.size(), it->first);
    if (chunk.free.size() < s.per_chunk) return;
    if (!s.empty) s.empty = it->first;
    else release(s, it->first);
}

void BlockPool::release(Size& s, const uint8_t* start) {
    auto it = s.chunks.find(start);
    ASAN_UNPOISON_MEMORY_REGION(start, it->second->memory.size());
    mapped_.fetch_sub(it->second->memory.size(), std::memory_order_relaxed);
    s.open.erase({it->second->free.size(), start});
    s.chunks.erase(it);
}

}  // namespace strata::kv
