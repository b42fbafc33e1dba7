// weights/ranges.h — the file ranges a layer's tensors occupy, as the streamer reads them:
// aligned to the I/O alignment (O_DIRECT), with tensors that are near each other in the
// file merged into one range; and the ranges of one expert's slices of a layer's merged
// expert tensors. Shared by the planner (sizes) and the streamer (reads).
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf.h"
#include "weights/weights.h"

namespace strata::weights {

struct FileRange {
    uint64_t offset = 0;  // aligned
    uint64_t length = 0;  // a multiple of the alignment
};

struct LayerRanges {
    static constexpr size_t kNone = ~size_t(0);
    std::vector<FileRange> ranges;
    std::vector<size_t> tensor_range;     // per tensor: which range holds it (kNone: not read)
    std::vector<uint64_t> tensor_offset;  // per tensor: its first byte within the layer buffer
    uint64_t bytes = 0;                   // sum of the range lengths: the layer buffer size
};

// Tensors whose aligned spans lie within `merge_gap` bytes of each other share a range;
// the entries listed in `skip` are left out.
LayerRanges layer_ranges(const std::vector<const gguf::TensorInfo*>& tensors, uint32_t alignment, uint64_t merge_gap = 1 << 16,
                         const std::vector<int>& skip = {});

// What a pass reads of layout layer l: all its tensors, or, when experts are read on
// demand, all but its expert tensors.
LayerRanges pass_ranges(const Layout& layout, size_t l, bool experts_on_demand, uint32_t alignment);

// Expert e's slices of layer l's expert tensors: one aligned range each, read one after
// another into a buffer; offset[j] is where slice j's first byte lands in it.
struct ExpertRanges {
    std::vector<FileRange> ranges;
    std::vector<uint64_t> offset;
    uint64_t bytes = 0;
};
ExpertRanges expert_ranges(const Layout& layout, size_t l, int e, uint32_t alignment);

// A buffer size that holds any expert's slices of any layer (0 without experts).
uint64_t expert_slot_bytes(const Layout& layout, uint32_t alignment);

}  // namespace strata::weights
