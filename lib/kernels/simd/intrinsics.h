// kernels/simd/intrinsics.h — <immintrin.h> for the SIMD translation units, the
// horizontal float sum every family needs, the saturation-free byte product, and the
// prefetch of a tile's rows. GCC 12's AVX-512 intrinsics initialise their "undefined"
// vectors from themselves, which -Wuninitialized flags inside the header (GCC bug
// 105593); silenced for the header only.
#pragma once

#include <cstddef>
#include <cstdint>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

// Sum of the 8 floats of v (both variants use 256-bit vectors in their fused paths).
inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// w * a for signed bytes w and a (|a| <= 127), summed in int16 pairs without saturation:
// maddubs of |w| and a with w's sign (|w| * |a| <= 128 * 127).
inline __m256i signed_pairs256(__m256i w, __m256i a) {
    return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

// (u - 128) * a for unsigned bytes u and signed bytes a, summed in int16 pairs without
// saturation (maddubs of u * a could saturate for u > 128).
inline __m256i maddubs_wide256(__m256i u, __m256i a) {
    return signed_pairs256(_mm256_xor_si256(u, _mm256_set1_epi8(-128)), a);
}

// 32 bytes: the 16 at p and the 16 at p + second.
inline __m256i load_halves(const uint8_t* p, int second) {
    return _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(p + second), reinterpret_cast<const __m128i*>(p));
}

// A one-token product reads a row's activations again for every row while the row's
// weights stream through L1. Past kL1Acts bytes of activations (Zen 4's L1 holds 32 KB) the
// weights brought into L1 far ahead push them out, so such long rows bring the weights far
// ahead into L2 only and just before use into L1: gemm_float.h's vec_dot and Q8_0's
// narrow_row (gemm_legacy.h) kFarAhead and kNearAhead bytes ahead (the K-quants' narrow_row,
// gemm_kquant.h, reads the bus better with its one prefetch into L1 on every row).
constexpr int64_t kL1Acts = 12 * 1024;
constexpr size_t kFarAhead = 8192, kNearAhead = 512;

// The cache lines of the `bytes` at `at` into L1 (Locality 3: prefetcht0) or into L2 (2:
// prefetcht1).
template <int Locality = 3>
inline void prefetch_bytes(const void* at, size_t bytes) {
    for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(static_cast<const char*>(at) + off, 0, Locality);
}

// Share i of n of the first `bytes` of Rows rows (ldw apart) into L2: the few-token
// products that take whole rows (gemm_kquant_rows16_avx512.h, gemm_kquant_rows8_avx2.h) bring the next
// tile's rows in as the super-blocks go, gemm_legacy_rows16_avx512.h as the blocks go.
template <int Rows>
void prefetch_rows_share(const uint8_t* w, size_t ldw, size_t bytes, int64_t i, int64_t n) {
    const size_t from = bytes * static_cast<size_t>(i) / static_cast<size_t>(n) / 64 * 64;
    const size_t to = bytes * static_cast<size_t>(i + 1) / static_cast<size_t>(n);
    for (int r = 0; r < Rows; ++r)
        for (size_t off = from; off < to; off += 64) _mm_prefetch(reinterpret_cast<const char*>(w + r * ldw + off), _MM_HINT_T1);
}

// An 8-row group's stream (tensor/repack.h), read from `group` at its step s (8 rows'
// blocks) of `steps`: into L2 (prefetcht1) the step kGroupAheadBytes on, and past the
// group's end the same bytes of the group `next` bytes on (the one the next tile reads), so
// that its stream starts warm; L1 is left to the core's own prefetcher. Taken into L1
// instead (prefetcht0, 4 K-quant super-blocks or 16 Q8_0 blocks ahead, as until December
// 2026), the prefetches held L1's miss buffers while they waited on DRAM; half this distance,
// a second prefetch into L1, or the next tile's share of the stored rows read less of the
// bus (tests/bench/HISTORY.md, "8-row groups' prefetch").
constexpr size_t kGroupAheadBytes = 8192;
template <class Block>
void prefetch_group_ahead(const uint8_t* group, int64_t s, int64_t steps, size_t next) {
    constexpr size_t kStep = 8 * sizeof(Block);
    constexpr auto kAhead = static_cast<int64_t>((kGroupAheadBytes + kStep - 1) / kStep);
    const int64_t at = s + kAhead;
    prefetch_bytes<2>(at < steps ? group + at * kStep : group + next + (at - steps) * kStep, kStep);
}

}  // namespace
