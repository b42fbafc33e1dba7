// tensor/dot_ref.h — scalar reference dot products of the weight types kernels/ has no
// matrix product for yet (MXFP4 and the lattice formats IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S): one weight row with one activation row in the format llama.cpp pairs the
// type with (its vec_dot_type), computed exactly as GGML's generic ggml_vec_dot_<w>_<a>: an
// integer dot per sub-block, the scales applied in float in GGML's order. They are the
// exactness reference for the kernels' versions (kernels/scalar_dot.cpp and the SIMD
// variants), which must return the same floats bit for bit.
// Owns: these references. Must not touch: kernels, threads, files.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace strata {

// Whether dot_ref has a reference for weight type w.
bool has_dot_ref(DType w);
// The activation format of w's products: Q8_0 for MXFP4, Q8_K for the lattice formats.
// Throws std::invalid_argument when !has_dot_ref(w).
DType dot_ref_activation(DType w);
// sum_i w[i] * a[i] over k elements (a multiple of both block sizes), w a row of type w_type,
// a a row of dot_ref_activation(w_type) (tensor/quantize.h's quantize_row_q8_0 / _q8_k).
// Throws std::invalid_argument when !has_dot_ref(w_type) or k is not such a multiple.
float dot_ref(DType w_type, const void* w, const void* a, int64_t k);

}  // namespace strata
