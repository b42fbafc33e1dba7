// tensor/repack.cpp — the resident layouts of tensor/repack.h and their conversions.
#include "tensor/repack.h"

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tensor/blocks.h"

namespace strata {
namespace {

// Q4_K_R's 16-byte piece 4q + 2h + i of qs is Q4_K's piece 4q + 2i + h (and the other
// way round): dword d of one is dword source_dword(d) of the other.
constexpr int source_dword(int d) {
    const int piece = d / 4, q = piece / 4, h = piece / 2 % 2, i = piece % 2;
    return 4 * (4 * q + 2 * i + h) + d % 4;
}

// Block `from` in the other order, into `to` (not the same block): the swap is its own
// inverse, so this converts both ways.
void swap_pieces(const BlockQ4_K& from, BlockQ4_K& to) {
    std::memcpy(&to, &from, offsetof(BlockQ4_K, qs));
    for (int d = 0; d < 32; ++d) std::memcpy(to.qs + 4 * d, from.qs + 4 * source_dword(d), 4);
}

}  // namespace

DType resident_type(DType t) { return t == DType::Q4_K ? DType::Q4_K_R : t; }

void to_resident(DType t, void* data, uint64_t bytes) {
    if (resident_type(t) == t) return;
    if (bytes % sizeof(BlockQ4_K) != 0)
        throw std::invalid_argument("to_resident: " + std::to_string(bytes) + " bytes is not a whole number of Q4_K blocks");
    auto* b = static_cast<BlockQ4_K*>(data);
    for (uint64_t i = 0; i < bytes / sizeof(BlockQ4_K); ++i) {
        const BlockQ4_K natural = b[i];
        swap_pieces(natural, b[i]);
    }
}

void q4_k_from_resident(const void* src, void* dst, int64_t blocks) {
    const auto* r = static_cast<const BlockQ4_K*>(src);
    auto* n = static_cast<BlockQ4_K*>(dst);
    for (int64_t i = 0; i < blocks; ++i) swap_pieces(r[i], n[i]);
}

}  // namespace strata
