// tensor/repack.cpp — the resident layouts of tensor/repack.h and their conversions.
#include "tensor/repack.h"

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

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

void to_q4_k_r(uint8_t* data, int64_t blocks) {
    auto* b = reinterpret_cast<BlockQ4_K*>(data);
    for (int64_t i = 0; i < blocks; ++i) {
        const BlockQ4_K natural = b[i];
        swap_pieces(natural, b[i]);
    }
}

// Q6_K planes (tensor/repack.h): half n's ql bytes A = ql[64n + l], B = ql[64n + 32 + l] and
// qh byte H = qh[32n + l] as X, Y, Z at 96n + l, in the 192 bytes of ql and qh, and back.
static_assert(offsetof(BlockQ6_K, ql) == 0 && offsetof(BlockQ6_K, qh) == 128 && offsetof(BlockQ6_K, scales) == 192);
void to_planes(uint8_t* quants) {
    uint8_t q[192];
    std::memcpy(q, quants, sizeof q);
    for (int n = 0; n < 2; ++n)
        for (int l = 0; l < 32; ++l) {
            const unsigned a = q[64 * n + l], b = q[64 * n + 32 + l], h = q[128 + 32 * n + l];
            uint8_t* p = quants + 96 * n + l;
            p[0] = static_cast<uint8_t>((a & 0x0F) | (h & 0x03) << 4 | (h & 0x30) << 2);
            p[32] = static_cast<uint8_t>((b & 0x0F) | (h & 0x0C) << 2 | (h & 0xC0));
            p[64] = static_cast<uint8_t>(a >> 4 | (b & 0xF0));
        }
}

void from_planes(uint8_t* quants) {
    uint8_t p[192];
    std::memcpy(p, quants, sizeof p);
    for (int n = 0; n < 2; ++n)
        for (int l = 0; l < 32; ++l) {
            const unsigned x = p[96 * n + l], y = p[96 * n + 32 + l], z = p[96 * n + 64 + l];
            quants[64 * n + l] = static_cast<uint8_t>((x & 0x0F) | (z & 0x0F) << 4);
            quants[64 * n + 32 + l] = static_cast<uint8_t>((y & 0x0F) | (z & 0xF0));
            quants[128 + 32 * n + l] = static_cast<uint8_t>((x >> 4 & 0x03) | (y >> 2 & 0x0C) | (x >> 2 & 0x30) | (y & 0xC0));
        }
}

// The pieces of a row's block in an 8-row group of blocks of `block` bytes (tensor/
// repack.h): the `head` bytes before its dwords, its whole dwords and the bytes left after
// them; row r's piece of n bytes at offset o of its block s is at 8 o + n r of the group's.
struct Interleave {
    size_t block, head;
    bool planes;
    // A row's block s in the layout's order before it is interleaved, and back after.
    void to_layout(uint8_t* block_at) const {
        if (planes) to_planes(block_at);
    }
    void to_file(uint8_t* block_at) const {
        if (planes) from_planes(block_at);
    }
    size_t at(int64_t s, int r, size_t o, size_t n) const {
        return static_cast<size_t>(s) * kR8Rows * block + kR8Rows * o + n * static_cast<size_t>(r);
    }
    // fn(offset in the row's block, bytes) for each piece.
    template <class Fn>
    void pieces(Fn&& fn) const {
        const size_t dwords = (block - head) / 4, tail = head + 4 * dwords;
        if (head) fn(size_t{0}, head);
        for (size_t c = 0; c < dwords; ++c) fn(head + 4 * c, size_t{4});
        if (tail < block) fn(tail, block - tail);
    }
};

Interleave interleave_of(const R8Pair& p) { return Interleave{dtype_info(p.file).block_bytes, p.head, p.planes}; }

// n bytes from `from` to `to`, a dword as a constant-size copy (one load and one store).
inline void copy_piece(uint8_t* to, const uint8_t* from, size_t n) {
    if (n == 4) std::memcpy(to, from, 4);
    else std::memcpy(to, from, n);
}

// Each group of 8 rows through a copy of itself.
void to_r8(const R8Pair& pair, uint8_t* data, int64_t rows, size_t row_bytes) {
    const Interleave il = interleave_of(pair);
    const auto blocks = static_cast<int64_t>(row_bytes / il.block);
    std::vector<uint8_t> copy(kR8Rows * row_bytes);
    for (int64_t g = 0; g < rows / kR8Rows; ++g) {
        uint8_t* group = data + g * kR8Rows * row_bytes;
        std::memcpy(copy.data(), group, copy.size());
        for (int r = 0; r < kR8Rows; ++r)
            for (int64_t s = 0; s < blocks; ++s) il.to_layout(copy.data() + r * row_bytes + s * il.block);
        for (int64_t s = 0; s < blocks; ++s)
            il.pieces([&](size_t o, size_t n) {
                const uint8_t* from = copy.data() + s * il.block + o;
                for (int r = 0; r < kR8Rows; ++r) copy_piece(group + il.at(s, r, o, n), from + r * row_bytes, n);
            });
    }
}

}  // namespace

bool can_keep_as(DType file, DType layout, int64_t rows) {
    if (layout == file || layout == row_layout_of(file)) return true;
    return file_type_of_r8(layout) == file && rows > 0 && rows % kR8Rows == 0;
}

void rearrange(DType file, DType layout, void* data, int64_t rows, size_t row_bytes) {
    if (!can_keep_as(file, layout, rows))
        throw std::invalid_argument("rearrange: " + std::to_string(rows) + " rows of " + std::string(dtype_name(file)) +
                                    " cannot be kept as " + std::string(dtype_name(layout)));
    if (layout == file) return;
    const size_t block = dtype_info(file).block_bytes;
    if (row_bytes % block != 0)
        throw std::invalid_argument("rearrange: a row of " + std::to_string(row_bytes) + " bytes is not a whole number of " +
                                    std::string(dtype_name(file)) + " blocks");
    auto* bytes = static_cast<uint8_t*>(data);
    if (layout == DType::Q4_K_R) to_q4_k_r(bytes, rows * static_cast<int64_t>(row_bytes / block));
    else to_r8(*r8_pair_of(layout), bytes, rows, row_bytes);
}

void q4_k_from_resident(const void* src, void* dst, int64_t blocks) {
    const auto* r = static_cast<const BlockQ4_K*>(src);
    auto* n = static_cast<BlockQ4_K*>(dst);
    for (int64_t i = 0; i < blocks; ++i) swap_pieces(r[i], n[i]);
}

std::optional<DType> file_type_of_r8(DType layout) {
    if (const R8Pair* p = r8_pair_of(layout)) return p->file;
    return std::nullopt;
}

std::optional<DType> r8_layout_of(DType file) {
    for (const R8Pair& p : kR8Pairs)
        if (p.file == file) return p.layout;
    return std::nullopt;
}

void row_from_r8(DType layout, const void* group, int r, void* dst, int64_t blocks) {
    const R8Pair* pair = r8_pair_of(layout);
    if (!pair) throw std::invalid_argument("row_from_r8: " + std::string(dtype_name(layout)) + " is not an 8-row layout");
    const Interleave il = interleave_of(*pair);
    const auto* g = static_cast<const uint8_t*>(group);
    auto* out = static_cast<uint8_t*>(dst);
    for (int64_t s = 0; s < blocks; ++s) {
        il.pieces([&](size_t o, size_t n) { copy_piece(out + s * il.block + o, g + il.at(s, r, o, n), n); });
        il.to_file(out + s * il.block);
    }
}

}  // namespace strata
