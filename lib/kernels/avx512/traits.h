// kernels/avx512/traits.h — the AVX-512 vector of 16 floats, as the generic SIMD code in
// kernels/simd/ expects it. Included only by translation units compiled with the AVX-512
// flags; everything lives in an anonymous namespace so that no inline function built with
// these flags can be picked by the linker for code that runs on other CPUs.
// Must not touch: anything outside this ISA's translation units.
#pragma once

// GCC 12's AVX-512 intrinsics initialise their "undefined" vectors from themselves, which
// -Wuninitialized flags inside the header (GCC bug 105593); silence it for the header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

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
