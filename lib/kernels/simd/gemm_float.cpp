// kernels/simd/gemm_float.cpp — F32, F16, BF16 matrix products for one SIMD variant.
#include "kernels/simd/gemm_float.h"
#include "kernels/simd/isa.h"

namespace strata::kernels::detail::STRATA_SIMD_NS {

void install_float_gemm(Table& t) {
    t.gemm[slot(DType::F32)] = simd::Gemm<V, simd::FloatGemm<V, simd::F32Elems>>::run;
    t.gemm[slot(DType::F16)] = simd::Gemm<V, simd::FloatGemm<V, simd::F16Elems>>::run;
    t.gemm[slot(DType::BF16)] = simd::Gemm<V, simd::FloatGemm<V, simd::BF16Elems>>::run;
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
