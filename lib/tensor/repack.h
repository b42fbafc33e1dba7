// tensor/repack.h — strata's in-memory weight layouts: the byte orders that resident weights
// are rearranged into at load, so that the matrix products need fewer shuffles per block
// than the file's order allows. Same block size as the file type, so a tensor is
// rearranged in place and every size stays as the file says. Which layout a tensor takes is
// the products' choice (kernels.h's resident_layout); this file only says which exist.
// Q4_K_R, from Q4_K (144 bytes per 256 weights), row by row: d, dmin and the packed scales as
// in Q4_K; qs as Q4_K's with its 16-byte pieces 1 and 2, and 5 and 6, swapped, so that 32
// bytes 2q + h of Q4_K_R hold half h (the first or the second 16 bytes) of Q4_K's 32-byte
// vectors 2q and 2q + 1. Q4_K's vector P holds groups 2P (low nibbles) and 2P + 1 (high
// nibbles) of 32 elements, so in 32 bytes of Q4_K_R the low nibbles of dwords 0..3 are group
// 4q and of dwords 4..7 group 4q + 2 (the high ones 4q + 1 and 4q + 3): a byte dot product
// per 32 bytes sums every group in lanes of its own, and the group scales are applied once
// per super-block (kernels/simd/gemm_kquant_resident.h). Products of several tokens read
// Q4_K's vectors back as two 16-byte loads each.
// The 8-row layouts Q4_K_R8, Q5_K_R8, Q6_K_R8, IQ4_XS_R8, Q8_0_R8, Q4_0_R8 and IQ4_NL_R8,
// from the file types of those names, 8 rows at a time (rows 8g .. 8g + 7, for tensors
// whose rows, or rows per slice of a 3-D tensor, are a multiple of 8): the 8 rows' block s
// (8 blocks) starts at byte 8 (block size) s of the group, which starts where row 8g did. A
// block is cut into pieces: the bytes before its dwords (the 32-element types' d), its
// whole dwords, and the bytes after them (Q6_K's d: 210 bytes are 52 dwords and 2 bytes);
// row r's piece of n bytes at offset o of its block is at 8 o + n r of the group's block.
// So dword c of the rows (at o = 4c, or 2 + 4c for the 32-element types) is 32 bytes with
// one dword of every row, and the 8 rows' d is one 16-byte vector, both where 8 o says: a
// product with a row in each int32 lane (kernels/simd/gemm_kquant_r8.h,
// gemm_legacy_rows8.h, gemm_legacy_rows16.h) reads each as it is, where the file's order
// takes a transposition, and the 8 rows are one sequential stream.
// Q6_K_R8's blocks are first each in the Q6_K planes order: its ql and qh (192 bytes) hold
// half n's 128 values (runs r = 0..3 of 32, element l of run r = 6-bit value v_r[l], in Q6_K
// the low nibble of ql[64n + l] (r = 0), ql[64n + 32 + l] (1), their high nibbles (2, 3), and
// bits 2r, 2r + 1 of qh[32n + l] above it) as three planes of 32 bytes at 96n: X[l] = v_0 |
// (v_2 >> 4) << 6, Y[l] = v_1 | (v_3 >> 4) << 6, Z[l] = (v_2 & 15) | (v_3 & 15) << 4. Runs 0
// and 1 are then a mask away, runs 2 and 3 a nibble and two bits (the Q6_K order takes a
// nibble and two bits for every run); scales and d stay where Q6_K has them.
// Owns: which file types have which layouts, and the conversions both ways.
// Must not touch: files, kernels, models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "tensor/dtype.h"

namespace strata {

// Rows an 8-row group holds.
inline constexpr int kR8Rows = 8;

// The 8-row layouts, their file types and the bytes before the dwords of a file block (the
// 32-element types' d): the one list of which layout is made from which type.
struct R8Pair {
    DType file, layout;
    uint32_t head = 0;
    bool planes = false;  // the Q6_K planes (above) before the interleave
};
inline constexpr R8Pair kR8Pairs[] = {{DType::Q4_K, DType::Q4_K_R8},          {DType::Q5_K, DType::Q5_K_R8},
                                      {DType::Q6_K, DType::Q6_K_R8, 0, true}, {DType::IQ4_XS, DType::IQ4_XS_R8},
                                      {DType::Q8_0, DType::Q8_0_R8, 2},       {DType::Q4_0, DType::Q4_0_R8, 2},
                                      {DType::IQ4_NL, DType::IQ4_NL_R8, 2}};

// The index in kR8Pairs of an 8-row layout, or -1 when `layout` is not one; its pair (or
// nullptr); and the file type it is made from (or `layout` itself). Plain lookups, for the
// kernel variants' tables too, which must not instantiate std templates; by index, as a
// sanitized build does not take a pointer comparison as a constant expression.
constexpr int r8_index_of(DType layout) {
    int i = 0;
    for (const R8Pair& p : kR8Pairs) {
        if (p.layout == layout) return i;
        ++i;
    }
    return -1;
}
constexpr const R8Pair* r8_pair_of(DType layout) {
    const int i = r8_index_of(layout);
    return i < 0 ? nullptr : &kR8Pairs[i];
}
constexpr DType r8_file_of(DType layout) {
    const int i = r8_index_of(layout);
    return i < 0 ? layout : kR8Pairs[i].file;
}

// The layout a tensor of file type `file` can take whatever its row count: Q4_K_R for Q4_K,
// the file's own type for the rest.
constexpr DType row_layout_of(DType file) { return file == DType::Q4_K ? DType::Q4_K_R : file; }

// Whether a tensor of file type `file` whose slices have `rows` rows each can be kept in
// `layout` (its own type always can).
bool can_keep_as(DType file, DType layout, int64_t rows);

// Rearranges `rows` rows of `row_bytes` bytes (whole blocks of type `file`) into `layout`,
// in place. Throws std::invalid_argument when can_keep_as says no or the rows are not whole
// blocks.
void rearrange(DType file, DType layout, void* data, int64_t rows, size_t row_bytes);

// Q4_K_R blocks back to Q4_K: `blocks` super-blocks from src to dst (not overlapping).
void q4_k_from_resident(const void* src, void* dst, int64_t blocks);

// The file type an 8-row layout is made from (Q4_K for Q4_K_R8, ...), or nullopt for any
// other type.
std::optional<DType> file_type_of_r8(DType layout);
// The other way: the 8-row layout of file type `file`, or nullopt if it has none.
std::optional<DType> r8_layout_of(DType file);

// Row r (0..7) of the 8-row group at `group` (an 8-row layout, `blocks` blocks a row) back
// in its file type's order at dst.
void row_from_r8(DType layout, const void* group, int r, void* dst, int64_t blocks);

}  // namespace strata
