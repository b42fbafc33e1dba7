// kernels/simd/quantize_acts.h — activation rows to Q8_0, Q8_1 and Q8_K with 256-bit
// vectors (both variants), bit-identical to the scalar variant's converters: Q8_0/Q8_1 as
// ggml-cpu's x86 quantize_row_q8_0/_q8_1 (multiplier 127 / amax, rounding half to even),
// Q8_K as tensor/quantize.h's reference (its magic-number nearest_int, half to even); the
// same float operations on the same values (max of |x| is exact in any order; the scale and
// its inverse are computed as scalars).
// Must not touch: the matrix products.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/intrinsics.h"
#include "tensor/blocks.h"

namespace {
namespace simd {

inline __m256 abs256(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

inline float hmax256(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// max |x[i]| over n (a multiple of 32) floats.
inline float max_abs(const float* x, int n) {
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 8) m = _mm256_max_ps(m, abs256(_mm256_loadu_ps(x + i)));
    return hmax256(m);
}

// 32 int32 lanes (4 vectors, in order) narrowed to 32 int8 in order.
inline __m256i narrow32(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// Rounds x[0..32) * id half to even into q; returns the sum of the 32 values.
inline int quantize32(const float* x, float id, int8_t* q) {
    const __m256 s = _mm256_set1_ps(id);
    __m256i v[4];
    for (int j = 0; j < 4; ++j)
        v[j] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * j), s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i bytes = narrow32(v[0], v[1], v[2], v[3]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), bytes);
    const __m256i sums = _mm256_add_epi32(_mm256_add_epi32(v[0], v[1]), _mm256_add_epi32(v[2], v[3]));
    __m128i t = _mm_add_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    t = _mm_add_epi32(t, _mm_unpackhi_epi64(t, t));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 1));
    return _mm_cvtsi128_si32(t);
}

inline uint16_t to_half(float f) { return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }

// Q8_0 and Q8_1 share everything but the stored sum.
template <class Block>
void quantize_q8_32(const float* x, void* out, int64_t n) {
    auto* y = static_cast<Block*>(out);
    for (int64_t b = 0; b < n / 32; ++b, x += 32) {
        const float amax = max_abs(x, 32);
        const float d = amax / 127.0f, id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[b].d = to_half(d);
        const int sum = quantize32(x, id, y[b].qs);
        if constexpr (requires { y[b].s; }) y[b].s = to_half(static_cast<float>(sum) * d);
    }
}

inline void quantize_q8_0(const float* x, void* out, int64_t n) { quantize_q8_32<strata::BlockQ8_0>(x, out, n); }
inline void quantize_q8_1(const float* x, void* out, int64_t n) { quantize_q8_32<strata::BlockQ8_1>(x, out, n); }

// The first of x[0..256) whose magnitude is amax (the reference keeps the first maximum).
inline float first_with_magnitude(const float* x, float amax) {
    const __m256 m = _mm256_set1_ps(amax);
    for (int i = 0; i < 256; i += 8) {
        const int hits = _mm256_movemask_ps(_mm256_cmp_ps(abs256(_mm256_loadu_ps(x + i)), m, _CMP_EQ_OQ));
        if (hits) return x[i + __builtin_ctz(static_cast<unsigned>(hits))];
    }
    return amax;
}

inline void quantize_q8_k(const float* x, void* out, int64_t n) {
    auto* y = static_cast<strata::BlockQ8_K*>(out);
    for (int64_t b = 0; b < n / 256; ++b, x += 256) {
        const float amax = max_abs(x, 256);
        if (!amax) {
            std::memset(&y[b], 0, sizeof y[b]);
            continue;
        }
        const float iscale = -127.f / first_with_magnitude(x, amax);
        const __m256 s = _mm256_set1_ps(iscale);
        const __m256i top = _mm256_set1_epi32(127);
        for (int g = 0; g < 256; g += 32) {
            __m256i v[4];
            for (int j = 0; j < 4; ++j) {
                const __m256 r = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + g + 8 * j), s),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                v[j] = _mm256_min_epi32(_mm256_cvtps_epi32(r), top);
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs + g), narrow32(v[0], v[1], v[2], v[3]));
        }
        // bsums: sums of 16 consecutive int8, as int16.
        for (int g = 0; g < 256; g += 32) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs + g));
            const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q);
            const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
            // 8 int32 sums of 4: lanes 0-3 (low 128) hold elements 0-15, 4-7 elements 16-31.
            const __m128i lo = _mm256_castsi256_si128(quads), hi = _mm256_extracti128_si256(quads, 1);
            const __m128i h = _mm_hadd_epi32(_mm_hadd_epi32(lo, hi), _mm_setzero_si128());
            y[b].bsums[g / 16] = static_cast<int16_t>(_mm_cvtsi128_si32(h));
            y[b].bsums[g / 16 + 1] = static_cast<int16_t>(_mm_extract_epi32(h, 1));
        }
        y[b].d = 1 / iscale;
    }
}

}  // namespace simd
}  // namespace
