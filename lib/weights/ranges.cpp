// weights/ranges.cpp — merging a layer's tensors into aligned file ranges; expert slices.
#include "weights/ranges.h"

#include <algorithm>

namespace strata::weights {

LayerRanges layer_ranges(const std::vector<const gguf::TensorInfo*>& tensors, uint32_t alignment, uint64_t merge_gap,
                         const std::vector<int>& skip) {
    const uint64_t a = alignment;
    std::vector<size_t> order;
    for (size_t i = 0; i < tensors.size(); ++i)
        if (std::find(skip.begin(), skip.end(), static_cast<int>(i)) == skip.end()) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return tensors[x]->file_offset < tensors[y]->file_offset; });
    LayerRanges out;
    out.tensor_range.assign(tensors.size(), LayerRanges::kNone);
    out.tensor_offset.assign(tensors.size(), 0);
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

LayerRanges pass_ranges(const Layout& layout, size_t l, bool experts_on_demand, uint32_t alignment) {
    const bool skip = experts_on_demand && l < layout.expert_tensors.size();
    return layer_ranges(layout.layers[l], alignment, 1 << 16, skip ? layout.expert_tensors[l] : std::vector<int>{});
}

ExpertRanges expert_ranges(const Layout& layout, size_t l, int e, uint32_t alignment) {
    const uint64_t a = alignment;
    ExpertRanges out;
    for (int j : layout.expert_tensors[l]) {
        const auto* t = layout.layers[l][size_t(j)];
        const uint64_t slice = t->nbytes / uint64_t(layout.n_expert), first = t->file_offset + uint64_t(e) * slice;
        const uint64_t begin = first / a * a, end = (first + slice + a - 1) / a * a;
        out.ranges.push_back({begin, end - begin});
        out.offset.push_back(out.bytes + (first - begin));
        out.bytes += end - begin;
    }
    return out;
}

uint64_t expert_slot_bytes(const Layout& layout, uint32_t alignment) {
    uint64_t most = 0;
    for (size_t l = 0; l < layout.expert_tensors.size(); ++l) {
        uint64_t bytes = 0;  // the aligned span of a slice is at most one alignment unit longer than its rounded size
        for (int j : layout.expert_tensors[l]) {
            const uint64_t slice = layout.layers[l][size_t(j)]->nbytes / uint64_t(layout.n_expert);
            bytes += (slice + alignment - 1) / alignment * alignment + alignment;
        }
        most = std::max(most, bytes);
    }
    return most;
}

}  // namespace strata::weights
