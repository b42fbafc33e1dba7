// kernels/simd/intrinsics.h — <immintrin.h> for the SIMD translation units, and the
// horizontal float sum every family needs. GCC 12's
// AVX-512 intrinsics initialise their "undefined" vectors from themselves, which
// -Wuninitialized flags inside the header (GCC bug 105593); silenced for the header only.
#pragma once

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

}  // namespace
