// kernels/avx2/traits.h — the AVX2 (+FMA, F16C) vector of 8 floats, as the generic SIMD
// code in kernels/simd/ expects it. Included only by translation units compiled with the
// AVX2 flags; everything lives in an anonymous namespace so that no inline function built
// with these flags can be picked by the linker for code that runs on other CPUs.
// Must not touch: anything outside this ISA's translation units.
#pragma once

#include <immintrin.h>

#include <cstdint>

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
