// kernels/simd/gemm_kquant.cpp — Q2_K..Q6_K, IQ4_XS and their resident layouts' matrix products for one SIMD variant.
#include <type_traits>

#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/gemm_kquant_r8.h"
#include "kernels/simd/gemm_kquant_resident.h"
#include "kernels/simd/isa.h"
#if defined(STRATA_SIMD_AVX512)
#include "kernels/simd/gemm_kquant_x4.h"
#endif

namespace strata::kernels::detail::STRATA_SIMD_NS {
namespace {

// AVX-512: the 4 x 4 lane layout for many tokens; AVX2: the products in gemm_kquant_rows8.h's
// lanes for every token count (fewer than a form's kMinTokens in gemm_kquant.h's narrow_row).
template <class Type>
constexpr GemmFn kquant_gemm() {
#if defined(STRATA_SIMD_AVX512)
    return simd::GemmX4<V, simd::KQuantX4<V, Type>>::run;
#else
    return simd::Gemm<V, simd::KQuantRows8<V, Type>>::run;
#endif
}

// The 8-row layouts' lanes: AVX-512 two groups a tile (Q4_K and Q6_K one token: AVX2's, a
// group at a time), AVX2 one.
#if defined(STRATA_SIMD_AVX512)
using R8Q4K = simd::Lanes16<V, simd::Q4K, simd::Rows16Q4KOf<false>, simd::Rows8Q4KOf<false>>;
using R8Q5K = simd::Lanes16<V, simd::Q5K, simd::Rows16Q5K>;
using R8Q6K = simd::Lanes16<V, simd::Q6K, simd::Rows16Q6KPlanes, simd::Rows8Q6KPlanes>;
using R8IQ4XS = simd::Lanes16<V, simd::IQ4XS, simd::Rows16IQ4XS>;
#else
using R8Q4K = simd::Lanes8<simd::Rows8Q4KOf<false>>;
using R8Q5K = simd::Lanes8<simd::Rows8Q5K>;
using R8Q6K = simd::Lanes8<simd::Rows8Q6KPlanes>;
using R8IQ4XS = simd::Lanes8<simd::Rows8IQ4XS>;
#endif

}  // namespace

void install_kquant_gemm(Table& t) {
    t.gemm[slot(DType::Q2_K)] = kquant_gemm<simd::Q2K>();
    t.gemm[slot(DType::Q3_K)] = kquant_gemm<simd::Q3K>();
    t.gemm[slot(DType::Q4_K)] = kquant_gemm<simd::Q4K>();
    t.gemm[slot(DType::Q4_K_R)] = simd::Q4KResident<V, kquant_gemm<simd::Q4KR>()>::run;
    install_r8<DType::Q4_K_R8>(t, simd::GemmGroups<V, simd::KQuantR8<V, R8Q4K>>::run);
    install_r8<DType::Q5_K_R8>(t, simd::GemmGroups<V, simd::KQuantR8<V, R8Q5K>>::run);
    install_r8<DType::Q6_K_R8>(t, simd::GemmGroups<V, simd::KQuantR8<V, R8Q6K>>::run);
    install_r8<DType::IQ4_XS_R8>(t, simd::GemmGroups<V, simd::KQuantR8<V, R8IQ4XS>>::run);
    t.gemm[slot(DType::Q5_K)] = kquant_gemm<simd::Q5K>();
    t.gemm[slot(DType::Q6_K)] = kquant_gemm<simd::Q6K>();
    t.gemm[slot(DType::IQ4_XS)] = kquant_gemm<simd::IQ4XS>();
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
