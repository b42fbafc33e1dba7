// tensor/repack.h — strata's in-memory weight layouts: the byte order that resident weights
// are rearranged into at load, so that the one-token matrix product (decode) needs fewer
// shuffles per block than the file's order allows. Same block size as the file type, so a
// tensor is rearranged in place and every size stays as the file says.
// Q4_K_R, from Q4_K (144 bytes per 256 weights): d, dmin and the packed scales as in Q4_K;
// qs as Q4_K's with its 16-byte pieces 1 and 2, and 5 and 6, swapped, so that 32 bytes
// 2q + h of Q4_K_R hold half h (the first or the second 16 bytes) of Q4_K's 32-byte vectors
// 2q and 2q + 1. Q4_K's vector P holds groups 2P (low nibbles) and 2P + 1 (high nibbles) of
// 32 elements, so in 32 bytes of Q4_K_R the low nibbles of dwords 0..3 are group 4q and of
// dwords 4..7 group 4q + 2 (the high ones 4q + 1 and 4q + 3): a byte dot product per 32
// bytes sums every group in lanes of its own, and the group scales are applied once per
// super-block (kernels/simd/gemm_kquant_resident.h). Products of several tokens read
// Q4_K's vectors back as two 16-byte loads each.
// Owns: which file types have a resident layout, and the conversions both ways.
// Must not touch: files, kernels, models.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace strata {

// The layout a resident tensor of file type t is kept in (t itself when it has none).
DType resident_type(DType t);

// Rearranges `bytes` bytes of type t (whole blocks) into resident_type(t), in place.
void to_resident(DType t, void* data, uint64_t bytes);

// Q4_K_R blocks back to Q4_K: `blocks` super-blocks from src to dst (not overlapping).
void q4_k_from_resident(const void* src, void* dst, int64_t blocks);

}  // namespace strata
