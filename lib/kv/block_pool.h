// kv/block_pool.h — the memory that KV blocks live in.
// Owns: chunks of anonymous memory on transparent huge pages (weights::Buffer), each cut
// into slots of one block size; handing out a zeroed slot (a free one of that size before
// a new chunk is mapped) and taking it back; returning a chunk whose slots are all free to
// the kernel (one such chunk per size is kept for the next block). Must not touch: what a
// block holds (kv_cache.h), how many blocks may live (the engine's KV budget).
//
// Why: at every decoded token, attention reads every block of every sequence, a layer at
// a time. On 4 KB pages one layer of a block (32 KB for a 1B model) spans eight pages, and
// once the caches outgrow the TLB each is a page walk; on 2 MiB pages the TLB covers
// gigabytes. Eight sessions of 1B Q4_K_M decoding together after 2048 tokens: a step of
// 74.7-76.7 ms with these chunks on 4 KB pages, 71.4-73.1 on huge pages (after 1024
// tokens 67.5-77.2 and 61.9-71.6, medians of 3 reps, strata-bench alternating).
//
// Memory: a chunk is mapped only when every slot of its size is taken, so the pool maps at
// most the most its blocks ever held at once, rounded up to chunks, plus one chunk per
// block size (mapped_bytes()). Free slots are poisoned under AddressSanitizer, so a read of
// a block that was let go is still caught. Thread-safe: a block may be let go anywhere.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "weights/buffer.h"

namespace strata::kv {

class BlockPool {
public:
    BlockPool() = default;
    ~BlockPool();
    BlockPool(const BlockPool&) = delete;
    BlockPool& operator=(const BlockPool&) = delete;

    // A zeroed slot of `bytes`; throws std::system_error when no memory can be mapped.
    uint8_t* take(size_t bytes);
    // Gives back a slot that take(bytes) handed out.
    void give(uint8_t* slot, size_t bytes);
    // Bytes of the chunks mapped now.
    uint64_t mapped_bytes() const { return mapped_.load(std::memory_order_relaxed); }

    // The huge pages a chunk of slots of `bytes` spans: the fewest whose tail past the last
    // whole slot is at most a sixteenth of the chunk.
    static uint64_t chunk_pages(size_t bytes);

private:
    struct Chunk {
        weights::Buffer memory;
        std::vector<uint64_t> free;  // slot indices not handed out, the next to hand out last
    };
    // The chunks of one slot size, by start address; `open` those with a free slot by their
    // count of free slots (take() fills the fullest first, so that the others drain and go
    // back to the kernel), `empty` the one kept with every slot free.
    struct Size {
        size_t slot = 0;
        uint64_t chunk_bytes = 0, per_chunk = 0;
        std::map<const uint8_t*, std::unique_ptr<Chunk>> chunks;
        std::set<std::pair<uint64_t, const uint8_t*>> open;
        const uint8_t* empty = nullptr;
    };
    Size& size_of(size_t bytes);
    uint8_t* take_locked(Size& s);
    void release(Size& s, const uint8_t* start);

    std::mutex mu_;
    std::vector<Size> sizes_;
    std::atomic<uint64_t> mapped_{0};
};

}  // namespace strata::kv
