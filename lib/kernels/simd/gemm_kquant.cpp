// kernels/simd/gemm_kquant.cpp — Q2_K..Q6_K matrix products for one SIMD variant.
#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/isa.h"

namespace strata::kernels::detail::STRATA_SIMD_NS {

void install_kquant_gemm(Table& t) {
    t.gemm[slot(DType::Q2_K)] = simd::Gemm<V, simd::KQuant<V, simd::Q2K>>::run;
    t.gemm[slot(DType::Q3_K)] = simd::Gemm<V, simd::KQuant<V, simd::Q3K>>::run;
    t.gemm[slot(DType::Q4_K)] = simd::Gemm<V, simd::KQuant<V, simd::Q4K>>::run;
    t.gemm[slot(DType::Q5_K)] = simd::Gemm<V, simd::KQuant<V, simd::Q5K>>::run;
    t.gemm[slot(DType::Q6_K)] = simd::Gemm<V, simd::KQuant<V, simd::Q6K>>::run;
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
