// weights/planner.h — the memory plan: what stays in memory and what is read from disk
// on every forward pass.
// Owns: the decision resident vs streamed, which layers are kept in memory when
// streaming (as many whole layers as fit, spread evenly among the streamed ones so their
// compute time lets the disk read ahead), the size of the ring of layer buffers, and what
// the plan implies (bytes read per pass, the tokens/s bound at a given read speed).
// Must not touch: I/O (streamed.cpp), model semantics (it sees tensor sizes only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weights/weights.h"

namespace strata::weights {

enum class Mode { Auto, Resident, Streamed };
const char* mode_name(Mode m);
Mode mode_from_name(const std::string& name);  // "auto", "resident", "streamed"; throws std::invalid_argument

// Bytes that are not weights but must fit the budget beside them.
struct Reserve {
    uint64_t kv = 0;         // KV caches the engine must be able to hold
    uint64_t working = 0;    // activations, logits, scratch of one forward pass
    uint64_t overhead = 0;   // the process itself: code, heap slack, I/O structures
};

struct PlanRequest {
    uint64_t budget = 0;
    Reserve reserve;
    Mode mode = Mode::Auto;
    uint32_t io_alignment = 4096;  // streamed ranges are padded to this (O_DIRECT)
};

struct Plan {
    Mode mode = Mode::Resident;              // Resident or Streamed
    std::vector<bool> resident;              // per entry of Layout::layers (all true when Resident)
    std::vector<uint64_t> layer_bytes;       // per entry of Layout::layers
    uint64_t budget = 0;
    Reserve reserve;
    uint64_t resident_bytes = 0;             // weights held in memory (mapped or copied)
    uint64_t streamed_bytes = 0;             // weights read from disk per forward pass
    uint64_t ring_bytes = 0;                 // the streaming ring
    int ring_slots = 0;                      // layer buffers in the ring (0 when resident)
    uint64_t slot_bytes = 0;                 // size of one ring buffer
    bool fits = true;                        // false: even streaming everything exceeds the budget
    // Mixture of experts, streamed: expert slices are read on demand (never by the ring)
    // into a cache of expert_slots buffers of expert_slot_bytes, one expert of one layer each.
    bool experts_on_demand = false;
    int expert_slots = 0;
    uint64_t expert_slot_bytes = 0;
    uint64_t expert_bytes_per_token = 0;     // read per token with an empty cache (n_expert_used per layer)
    // Tables never held whatever the mode (Layout::row_tables): their rows are read per pass.
    uint64_t on_demand_bytes = 0;

    uint64_t expert_cache_bytes() const { return uint64_t(expert_slots) * expert_slot_bytes; }
    uint64_t total() const {
        return resident_bytes + ring_bytes + expert_cache_bytes() + reserve.kv + reserve.working + reserve.overhead;
    }
    // Forward passes per second the disk allows at `read_bytes_per_s` (0 when nothing is streamed).
    double pass_bound(double read_bytes_per_s) const;
    // One line for logs and STATUS=.
    std::string summary() const;
    // A table: budget, every reserve, resident/streamed layers, bytes per pass, the bound.
    std::string describe(double read_bytes_per_s) const;
};

// Plans `layout` (the head — final norm and output matrix — is its last layer) within the
// request. Resident when everything fits (or when asked); otherwise streamed, keeping as
// many layers as fit after reserving a ring of at least two slots of the largest streamed
// layer. A streamed mixture-of-experts model plans its layers without their expert
// tensors (after reserving the smallest expert cache: 2 x n_expert_used experts), and the
// memory left over becomes the expert cache. Never throws: a plan that cannot fit says so
// in `fits` (the caller decides).
Plan make_plan(const Layout& layout, const PlanRequest& request);

}  // namespace strata::weights
