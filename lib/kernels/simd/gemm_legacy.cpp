// kernels/simd/gemm_legacy.cpp — Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 matrix products for one SIMD
// variant.
#include "kernels/simd/gemm_legacy.h"
#include "kernels/simd/isa.h"

namespace strata::kernels::detail::STRATA_SIMD_NS {

void install_legacy_gemm(Table& t) {
    t.gemm[slot(DType::Q4_0)] = simd::Gemm<V, simd::Legacy<V, simd::Q4_0>>::run;
    t.gemm[slot(DType::Q4_1)] = simd::Gemm<V, simd::Legacy<V, simd::Q4_1>>::run;
    t.gemm[slot(DType::Q5_0)] = simd::Gemm<V, simd::Legacy<V, simd::Q5_0>>::run;
    t.gemm[slot(DType::Q5_1)] = simd::Gemm<V, simd::Legacy<V, simd::Q5_1>>::run;
    t.gemm[slot(DType::Q8_0)] = simd::Gemm<V, simd::Legacy<V, simd::Q8_0>>::run;
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
