// weights/ranges.h — the file ranges a layer's tensors occupy, as the streamer reads them:
// aligned to the I/O alignment (O_DIRECT), with tensors that are near each other in the
// file merged into one range. Shared by the planner (sizes) and the streamer (reads).
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf.h"

namespace strata::weights {

struct FileRange {
    uint64_t offset = 0;  // aligned
    uint64_t length = 0;  // a multiple of the alignment
};

struct LayerRanges {
    std::vector<FileRange> ranges;
    std::vector<size_t> tensor_range;     // per tensor: which range holds it
    std::vector<uint64_t> tensor_offset;  // per tensor: its first byte within the layer buffer
    uint64_t bytes = 0;                   // sum of the range lengths: the layer buffer size
};

// Tensors whose aligned spans lie within `merge_gap` bytes of each other share a range.
LayerRanges layer_ranges(const std::vector<const gguf::TensorInfo*>& tensors, uint32_t alignment, uint64_t merge_gap = 1 << 16);

}  // namespace strata::weights
