// kernels/avx512/traits.h — the AVX-512 vector of 16 floats, as the generic SIMD code in
// kernels/simd/ expects it. Included only by translation units compiled with the AVX-512
// flags; everything lives in an anonymous namespace so that no inline function built with
// these flags can be picked by the linker for code that runs on other CPUs.
// Must not touch: anything outside this ISA's translation units.
#pragma once

#include "kernels/simd/intrinsics.h"

#include <cstdint>

namespace {

struct V {
    static constexpr int N = 16;  // floats per vector
    using F = __m512;
    using I = __m512i;

    static F zero() { return _mm512_setzero_ps(); }
    static F set1(float x) { return _mm512_set1_ps(x); }
    static F load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
    static F add(F a, F b) { return _mm512_add_ps(a, b); }
    static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
    static F div(F a, F b) { return _mm512_div_ps(a, b); }
    static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }     // a * b + c
    static F fnma(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }   // c - a * b
    static F min(F a, F b) { return _mm512_min_ps(a, b); }
    static F max(F a, F b) { return _mm512_max_ps(a, b); }
    static F round(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    // a * 2^n for integral n in [-126, 127].
    static F ldexp(F a, F n) {
        const I e = _mm512_slli_epi32(_mm512_cvtps_epi32(n), 23);
        return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), e));
    }

    static float hsum(F v) { return _mm512_reduce_add_ps(v); }
    static float hmax(F v) { return _mm512_reduce_max_ps(v); }
    // Whether any lane of a is greater than b's (ordered: NaN lanes are not).
    static bool any_gt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) != 0; }

    static F load_i8(const int8_t* p) {
        return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    }
    static F load_f16(const uint16_t* p) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
    static void store_f16(uint16_t* p, F v) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                            _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    static F load_bf16(const uint16_t* p) {
        const I w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    }
    // Round to nearest even; a NaN stays a quiet NaN (as tensor/fp16.h's fp32_to_bf16).
    static void store_bf16(uint16_t* p, F v) {
        const I u = _mm512_castps_si512(v);
        const I lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
        const I rounded = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
        const I quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(64));
        const __mmask16 nan =
            _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet)));
    }

    // Integer side of the quantized products (I holds kBytes int8 or int32 lanes).
    static constexpr int kBytes = 64;
    static I load_i(const void* p) { return _mm512_loadu_si512(p); }
    static I izero() { return _mm512_setzero_si512(); }
    static I sub_i32(I a, I b) { return _mm512_sub_epi32(a, b); }
    static F cvt(I v) { return _mm512_cvtepi32_ps(v); }
    // u8 x s8 products summed in pairs to int16 (no overflow for u < 64).
    static I maddubs(I u, I s) { return _mm512_maddubs_epi16(u, s); }
    // (u - 128) x s8 products summed in pairs to int16, for any u (no saturation): |w| and
    // s with w's sign, w = u - 128.
    static I maddubs_wide(I u, I s) {
        const I w = _mm512_xor_si512(u, _mm512_set1_epi8(-128));
        const I signed_s = _mm512_mask_sub_epi8(s, _mm512_movepi8_mask(w), _mm512_setzero_si512(), s);
        return _mm512_maddubs_epi16(_mm512_abs_epi8(w), signed_s);
    }
    // acc + int16 pairs a * b summed to int32 (VNNI).
    static I dot_i16(I acc, I a, I b) { return _mm512_dpwssd_epi32(acc, a, b); }
    static __m256i dot_i16_256(__m256i acc, __m256i a, __m256i b) { return _mm256_dpwssd_epi32(acc, a, b); }
    // sum of 16 int16 products a[i] * b[i] in int32 lanes (8 partial sums, upper lanes 0).
    static I madd16(const int16_t* a, const int16_t* b) {
        return _mm512_zextsi256_si512(_mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)),
                                                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b))));
    }
    // u8 x s8 dot in int32 lanes of 4 products, plus corr (VNNI: no saturation for any u).
    template <bool Wide>
    static __m256i dot_u8s8_256(__m256i u, __m256i a, __m256i corr) {
        return _mm256_dpbusd_epi32(corr, u, a);
    }

    // Sums of squares in double, as GGML's rms_norm: D holds the running double sums.
    struct D {
        __m512d lo, hi;
    };
    static D dzero() { return {_mm512_setzero_pd(), _mm512_setzero_pd()}; }
    static D add_squares(D acc, F x) {
        const F sq = _mm512_mul_ps(x, x);
        return {_mm512_add_pd(acc.lo, _mm512_cvtps_pd(_mm512_castps512_ps256(sq))),
                _mm512_add_pd(acc.hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(sq, 1)))};
    }
    static double dsum(D acc) { return _mm512_reduce_add_pd(_mm512_add_pd(acc.lo, acc.hi)); }
};

}  // namespace
