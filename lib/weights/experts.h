// weights/experts.h — internal: the expert cache of a streamed mixture-of-experts plan.
// Owns: one buffer of fixed slots, each holding one expert's slices of one layer's expert
// tensors (gate, up, down); which (layer, expert) each slot holds; replacement of the
// least recently used within each layer's share of the slots, or of the least frequently
// used (slots needed by the current call are never replaced); reading the misses
// of a call with io_uring, all at once; hit, miss and byte counts.
// Must not touch: the layer ring (streamed.cpp), the plan's decisions (planner.h).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "weights/buffer.h"
#include "weights/reader.h"
#include "weights/weights.h"

namespace strata::weights {

class ExpertCache {
public:
    ExpertCache(const Layout& layout, AsyncReader& reader, int slots, uint64_t slot_bytes, uint32_t alignment, ExpertPolicy policy);

    int slots() const { return static_cast<int>(slots_.size()); }
    // Pointers to expert ids[i]'s slice j at [i * n + j] (WeightSource::experts); throws
    // std::runtime_error naming the layer and expert when a read fails.
    std::span<const uint8_t* const> get(int layer, std::span<const int32_t> ids);

    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }
    uint64_t bytes_read() const { return bytes_read_; }
    uint64_t bytes() const { return buffer_.size(); }

private:
    struct Slot {
        int64_t key = -1;    // layer * n_expert + expert, -1 empty
        uint64_t used = 0;   // the call that last used it
    };
    int claim(uint64_t call, int layer);  // the slot for an expert of `layer`, among those `call` does not use
    void forget(int slot);                // empties it
    bool older(const Slot& a, const Slot& b) const;  // a goes before b
    void count(int64_t key);
    int layer_of(const Slot& s) const { return static_cast<int>(s.key / layout_.n_expert); }
    uint8_t* slot_data(int slot) const { return buffer_.data() + uint64_t(slot) * slot_bytes_; }

    const Layout& layout_;
    AsyncReader& reader_;
    uint32_t alignment_;
    std::vector<uint32_t> uses_;  // Lfu: per layer * n_expert + expert, halved every uses_.size() requests
    std::vector<int> held_;       // slots per layer
    int share_ = 0;               // Lru: each layer's share of the slots (0: one global order)
    int transient_ = 0;           // slots from here on cache nothing (Lru with shares)
    uint64_t requests_ = 0;
    uint64_t slot_bytes_;
    Buffer buffer_;
    std::vector<Slot> slots_;
    std::unordered_map<int64_t, int> where_;  // key -> slot
    std::vector<const uint8_t*> result_;
    uint64_t calls_ = 0;
    uint64_t hits_ = 0, misses_ = 0, bytes_read_ = 0;
};

}  // namespace strata::weights
