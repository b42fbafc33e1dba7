// kernels/simd/nibbles.h — 4-bit codes of a 32-element block as bytes, and the IQ4 code
// table as a byte lookup, for the families that store nibbles (gemm_legacy.h, gemm_kquant.h).
// Must not touch: anything type-specific beyond the codes.
#pragma once

#include <cstdint>

#include "kernels/simd/intrinsics.h"
#include "tensor/blocks.h"

namespace {
namespace simd {

// The 32 codes of 16 bytes in element order: low nibbles (elements 0..15), then high ones.
inline __m256i nibbles(const uint8_t* qs) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m128i m4 = _mm_set1_epi8(0x0F);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m4), _mm_and_si128(q, m4));
}

// The IQ4 code table in both 128-bit lanes, each value xor-ed with flip.
inline __m256i iq4_table(char flip) {
    const __m128i values = _mm_loadu_si128(reinterpret_cast<const __m128i*>(strata::kIQ4NLValues));
    return _mm256_broadcastsi128_si256(_mm_xor_si128(values, _mm_set1_epi8(flip)));
}

// IQ4 codes (bytes 0..15) to their table values (-127..113), signed.
inline __m256i iq4_signed(__m256i codes) { return _mm256_shuffle_epi8(iq4_table(0), codes); }

// IQ4 codes to their table values + 128, unsigned (1..241).
inline __m256i iq4_unsigned(__m256i codes) { return _mm256_shuffle_epi8(iq4_table(-128), codes); }

}  // namespace simd
}  // namespace
