// tensor/quantize.h — reference quantization and dequantization of rows, bit-exact with
// GGML's (the same bytes as llama.cpp's model quantizer without an importance matrix: the
// *_ref quantizers, and for IQ4_NL quantize_iq4_nl, whose scale search its _ref skips). These define
// the formats; kernels/ has faster versions of the hot ones and tests them against these.
// Inputs are finite floats (callers check: NaN/Inf have no defined encoding).
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace strata {

// dst[0..n) = the values stored in src (n a multiple of t's block size). All of
// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K..Q6_K, Q8_K, IQ4_NL, IQ4_XS, MXFP4,
// the lattice formats IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, and the resident
// layout Q4_K_R (tensor/repack.h).
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

// Whether dequantize_row supports t.
bool can_dequantize(DType t);
// Whether quantize_row supports t: every type dequantize_row reads except the lattice
// formats (GGML quantizes those only with an importance matrix) and Q4_K_R.
bool can_quantize(DType t);
// Encodes n floats (a multiple of t's block size) as type t, as GGML's reference
// quantizer without an importance matrix does. Throws std::invalid_argument when
// !can_quantize(t).
void quantize_row(DType t, const float* src, void* dst, int64_t n);

// Per-type reference quantizers (also used directly by kernels' tests).
void quantize_row_q8_0(const float* x, void* y, int64_t n);
void quantize_row_q8_1(const float* x, void* y, int64_t n);
void quantize_row_q8_k(const float* x, void* y, int64_t n);

}  // namespace strata
