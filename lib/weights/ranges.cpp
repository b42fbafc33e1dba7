// weights/ranges.cpp — merging a layer's tensors into aligned file ranges.
#include "weights/ranges.h"

#include <algorithm>
#include <numeric>

namespace strata::weights {

LayerRanges layer_ranges(const std::vector<const gguf::TensorInfo*>& tensors, uint32_t alignment, uint64_t merge_gap) {
    const uint64_t a = alignment;
    std::vector<size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return tensors[x]->file_offset < tensors[y]->file_offset; });
    LayerRanges out;
    out.tensor_range.resize(tensors.size());
    out.tensor_offset.resize(tensors.size());
    std::vector<uint64_t> range_start;  // where each range begins in the layer buffer
    for (size_t i : order) {
        const auto* t = tensors[i];
        const uint64_t begin = t->file_offset / a * a, end = (t->file_offset + t->nbytes + a - 1) / a * a;
        if (out.ranges.empty() || begin > out.ranges.back().offset + out.ranges.back().length + merge_gap) {
            range_start.push_back(out.bytes);
            out.ranges.push_back({begin, end - begin});
            out.bytes += end - begin;
        } else {
            FileRange& r = out.ranges.back();
            const uint64_t new_end = std::max(r.offset + r.length, end);
            out.bytes += new_end - (r.offset + r.length);
            r.length = new_end - r.offset;
        }
        out.tensor_range[i] = out.ranges.size() - 1;
        out.tensor_offset[i] = range_start.back() + (t->file_offset - out.ranges.back().offset);
    }
    return out;
}

}  // namespace strata::weights
