// kernels/simd/intrinsics.h — <immintrin.h> for the SIMD translation units. GCC 12's
// AVX-512 intrinsics initialise their "undefined" vectors from themselves, which
// -Wuninitialized flags inside the header (GCC bug 105593); silenced for the header only.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
