// tensor/dot_ref.cpp — dispatch of the reference dot products (dot_ref.h) to their codecs.
#include "tensor/dot_ref.h"

#include <stdexcept>
#include <string>

#include "tensor/codecs.h"

namespace strata {

bool has_dot_ref(DType w) { return w == DType::MXFP4 || is_lattice_type(w); }

DType dot_ref_activation(DType w) {
    if (w == DType::MXFP4) return DType::Q8_0;
    if (is_lattice_type(w)) return DType::Q8_K;
    throw std::invalid_argument("dot_ref: no reference dot product for " + std::string(dtype_name(w)));
}

float dot_ref(DType w_type, const void* w, const void* a, int64_t k) {
    const DType at = dot_ref_activation(w_type);
    if (k < 0 || k % dtype_info(w_type).block_elems != 0 || k % dtype_info(at).block_elems != 0)
        throw std::invalid_argument("dot_ref: " + std::to_string(k) + " elements is not a whole number of " +
                                    std::string(dtype_name(w_type)) + " and " + std::string(dtype_name(at)) + " blocks");
    return w_type == DType::MXFP4 ? dot_mxfp4_q8_0(w, a, k) : dot_lattice_q8_k(w_type, w, a, k);
}

}  // namespace strata
