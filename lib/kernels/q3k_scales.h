// kernels/q3k_scales.h — the 12-byte packing of Q3_K's sixteen 6-bit scales, shared by the
// scalar reference and the SIMD variants. Anonymous namespace: every translation unit,
// whatever its -m flags, keeps its own copy. Must not touch: anything else.
#pragma once

#include <cstdint>
#include <cstring>

namespace {

// The four scale words from the three packed little-endian words a0, a1, a2, for any word
// type with &, |, >> and << by a scalar: uint32_t, or a GCC vector of uint32_t holding the
// same word of 8 or 16 rows (gemm_kquant_rows8_avx2.h, gemm_kquant_rows16_avx512.h).
template <class W>
inline void q3k_unpack_words(W a0, W a1, W a2, W out[4]) {
    constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
    out[0] = (a0 & kmask2) | (((a2 >> 0) & kmask1) << 4);
    out[1] = (a1 & kmask2) | (((a2 >> 2) & kmask1) << 4);
    out[2] = ((a0 >> 4) & kmask2) | (((a2 >> 4) & kmask1) << 4);
    out[3] = ((a1 >> 4) & kmask2) | (((a2 >> 6) & kmask1) << 4);
}

// The sixteen scales of a Q3_K super-block as bytes 0..63 (still offset by 32), four per
// little-endian word: SIMD code builds a vector from the words without a store and reload.
inline void q3k_scale_words(const uint8_t* packed, uint32_t aux[4]) {
    uint32_t in[3];
    std::memcpy(in, packed, sizeof in);
    q3k_unpack_words(in[0], in[1], in[2], aux);
}

}  // namespace
