// kernels/avx2/traits.h — the AVX2 (+FMA, F16C) vector of 8 floats, as the generic SIMD
// code in kernels/simd/ expects it. Included only by translation units compiled with the
// AVX2 flags; everything lives in an anonymous namespace so that no inline function built
// with these flags can be picked by the linker for code that runs on other CPUs.
// Must not touch: anything outside this ISA's translation units.
#pragma once

#include <cstdint>

#include "kernels/simd/intrinsics.h"

namespace {

struct V {
    static constexpr int N = 8;  // floats per vector
    using F = __m256;
    using I = __m256i;

    static F zero() { return _mm256_setzero_ps(); }
    static F set1(float x) { return _mm256_set1_ps(x); }
    static F load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
    static F add(F a, F b) { return _mm256_add_ps(a, b); }
    static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
    static F div(F a, F b) { return _mm256_div_ps(a, b); }
    static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }     // a * b + c
    static F fnma(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }   // c - a * b
    static F min(F a, F b) { return _mm256_min_ps(a, b); }
    static F max(F a, F b) { return _mm256_max_ps(a, b); }
    static F round(F a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    // a * 2^n for integral n in [-126, 127].
    static F ldexp(F a, F n) {
        const I e = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
        return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), e));
    }

    static float hsum(F v) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }
    static float hmax(F v) {
        __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_max_ps(s, _mm_movehl_ps(s, s));
        s = _mm_max_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }
    // Whether any lane of a is greater than b's (ordered: NaN lanes are not).
    static bool any_gt(F a, F b) { return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ)) != 0; }

    static F load_i8(const int8_t* p) {
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
    }
    static F load_f16(const uint16_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static void store_f16(uint16_t* p, F v) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    static F load_bf16(const uint16_t* p) {
        const I w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    }
    // Round to nearest even; a NaN stays a quiet NaN (as tensor/fp16.h's fp32_to_bf16).
    static void store_bf16(uint16_t* p, F v) {
        const I u = _mm256_castps_si256(v);
        const I lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        const I rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
        const I quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(64));
        const I abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
        const I nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
        const I r = _mm256_blendv_epi8(rounded, quiet, nan);
        const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
    }

    // Integer side of the quantized products (I holds kBytes int8 or int32 lanes).
    static constexpr int kBytes = 32;
    static I load_i(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
    static I izero() { return _mm256_setzero_si256(); }
    static I sub_i32(I a, I b) { return _mm256_sub_epi32(a, b); }
    static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
    // u8 x s8 products summed in pairs to int16 (no overflow for u < 64).
    static I maddubs(I u, I s) { return _mm256_maddubs_epi16(u, s); }
    // (u - 128) x s8 products summed in pairs to int16, for any u (no saturation).
    static I maddubs_wide(I u, I s) { return maddubs_wide256(u, s); }
    // acc + int16 pairs a * b summed to int32.
    static I dot_i16(I acc, I a, I b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
    static __m256i dot_i16_256(__m256i acc, __m256i a, __m256i b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
    // sum of 16 int16 products a[i] * b[i] in int32 lanes (8 partial sums).
    static I madd16(const int16_t* a, const int16_t* b) {
        return _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)),
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
    }
    // u8 x s8 dot in int32 lanes of 4 products, minus an offset: u * a + corr. When u spans
    // 0..255 (Wide, u = w + 128) maddubs could saturate, so the signed w = u - 128 goes
    // through |w| * (a with w's sign), which is exactly u * a - 128 * sum(a) and makes
    // corr (= -128 * sum(a)) unnecessary.
    template <bool Wide>
    static __m256i dot_u8s8_256(__m256i u, __m256i a, __m256i corr) {
        const I ones = _mm256_set1_epi16(1);
        if constexpr (Wide) {
            return _mm256_madd_epi16(maddubs_wide(u, a), ones);
        } else {
            return _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(u, a), ones), corr);
        }
    }

    // Sums of squares in double, as GGML's rms_norm: D holds the running double sums.
    struct D {
        __m256d lo, hi;
    };
    static D dzero() { return {_mm256_setzero_pd(), _mm256_setzero_pd()}; }
    static D add_squares(D acc, F x) {
        const F sq = _mm256_mul_ps(x, x);
        return {_mm256_add_pd(acc.lo, _mm256_cvtps_pd(_mm256_castps256_ps128(sq))),
                _mm256_add_pd(acc.hi, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)))};
    }
    static double dsum(D acc) {
        const __m256d s = _mm256_add_pd(acc.lo, acc.hi);
        __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
        h = _mm_add_sd(h, _mm_unpackhi_pd(h, h));
        return _mm_cvtsd_f64(h);
    }
};

}  // namespace
