// tensor/codecs.h — internal: the per-type reference codecs behind quantize.h's
// dispatch. legacy.cpp holds the 32-element formats, kquants.cpp the 256-element ones,
// iquants.cpp the non-linear IQ4 ones, mxfp4.cpp MXFP4, iq_lowbit.cpp the lattice formats
// IQ1_S..IQ3_S.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tensor/dtype.h"

namespace strata {

// Round to nearest, ties to even, for |fval| < 2^22: GGML's nearest_int (adding 1.5 * 2^23
// puts the integer part in the low mantissa bits). The quantizers use it, not lrintf, so
// that they round exactly as GGML's do.
inline int nearest_int(float fval) {
    const float val = fval + 12582912.f;
    int i;
    std::memcpy(&i, &val, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

// The element of largest magnitude among x[0..n) (the first of equal ones), with its sign;
// 0 when all are zero. The symmetric formats scale their codes by it.
inline float signed_absmax(const float* x, int n) {
    float amax = 0, max = 0;
    for (int j = 0; j < n; ++j) {
        const float a = std::fabs(x[j]);
        if (a > amax) {
            amax = a;
            max = x[j];
        }
    }
    return max;
}

void dequantize_q4_0(const void* x, float* y, int64_t n);
void dequantize_q4_1(const void* x, float* y, int64_t n);
void dequantize_q5_0(const void* x, float* y, int64_t n);
void dequantize_q5_1(const void* x, float* y, int64_t n);
void dequantize_q2_k(const void* x, float* y, int64_t n);
void dequantize_q3_k(const void* x, float* y, int64_t n);
void dequantize_q4_k(const void* x, float* y, int64_t n);
void dequantize_q5_k(const void* x, float* y, int64_t n);
void dequantize_q6_k(const void* x, float* y, int64_t n);
void dequantize_iq4_nl(const void* x, float* y, int64_t n);
void dequantize_iq4_xs(const void* x, float* y, int64_t n);
void dequantize_mxfp4(const void* x, float* y, int64_t n);

// The lattice formats: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M.
bool is_lattice_type(DType t);
void dequantize_lattice(DType t, const void* x, float* y, int64_t n);

// Scalar dot products as GGML's generic vec_dot (tensor/dot_ref.h).
float dot_mxfp4_q8_0(const void* w, const void* a, int64_t k);
float dot_lattice_q8_k(DType t, const void* w, const void* a, int64_t k);

// 2^(e - 128), the factor of MXFP4's doubled E2M1 values for the E8M0 byte e.
inline float mxfp4_scale(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

void quantize_row_q4_0(const float* x, void* y, int64_t n);
void quantize_row_q4_1(const float* x, void* y, int64_t n);
void quantize_row_q5_0(const float* x, void* y, int64_t n);
void quantize_row_q5_1(const float* x, void* y, int64_t n);
void quantize_row_q2_k(const float* x, void* y, int64_t n);
void quantize_row_q3_k(const float* x, void* y, int64_t n);
void quantize_row_q4_k(const float* x, void* y, int64_t n);
void quantize_row_q5_k(const float* x, void* y, int64_t n);
void quantize_row_q6_k(const float* x, void* y, int64_t n);
void quantize_row_iq4_nl(const float* x, void* y, int64_t n);
void quantize_row_iq4_xs(const float* x, void* y, int64_t n);
void quantize_row_mxfp4(const float* x, void* y, int64_t n);

}  // namespace strata
