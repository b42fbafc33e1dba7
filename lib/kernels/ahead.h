// kernels/ahead.h — Ahead: memory a kernel is to bring into L2 while it computes, for the
// attention kernels (kernels.h) and their table slots (table.h), which both include it.
// Plain struct, no std templates (see table.h). Must not touch: what is prefetched when.
#pragma once

#include <cstddef>

namespace strata::kernels {

// [p, p + bytes): the attention kernels prefetch one 64-byte line of it per step of their
// key loop (a step is one key element d, all positions), and what is left after that
// loop at once. Spread over the work, a block's share of the next KV block waited less
// than when it came in one burst of prefetches before the call (see model/blocks.cpp).
struct Ahead {
    const void* p = nullptr;
    size_t bytes = 0;
};

// Part `part` of `parts` equal parts of [p, p + bytes) (the parts together cover it all):
// one KV head's share of the next block's layer.
inline Ahead ahead_part(const void* p, size_t bytes, int part, int parts) {
    const size_t from = bytes * size_t(part) / size_t(parts), to = bytes * size_t(part + 1) / size_t(parts);
    return {static_cast<const char*>(p) + from, to - from};
}

}  // namespace strata::kernels
