// kernels/simd/gemm_kquant.cpp — Q2_K..Q6_K, IQ4_XS and their resident layouts' matrix
// products for one SIMD variant: the kernels gemm_routes.h's rows name.
#include <type_traits>

#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/gemm_kquant_r8.h"
#include "kernels/simd/gemm_kquant_q4k_r.h"
#include "kernels/simd/isa.h"
#if defined(STRATA_SIMD_AVX512)
#include "kernels/simd/gemm_kquant_x4_avx512.h"
#endif

namespace strata::kernels::detail::STRATA_SIMD_NS {
namespace {

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

#if defined(STRATA_SIMD_AVX512)
template <class Type>
constexpr GemmProduct quads(DType w) {
    return {Kernel::KQuantQuads, w, simd::Gemm<V, simd::KQuantQuads<V, Type>>::blocks};
}
template <class Type>
constexpr GemmProduct x4(DType w) {
    return {Kernel::KQuantX4, w, simd::GemmX4<V, simd::KQuantX4<V, Type>>::run};
}
#else
template <class Type>
constexpr GemmProduct rows8(DType w) {
    return {Kernel::KQuantRows8, w, simd::Gemm<V, simd::KQuantRows8<V, Type>>::blocks};
}
#endif
template <class Lanes>
constexpr GemmProduct r8(DType layout) {
    return {Kernel::KQuantR8, layout, simd::GemmGroups<V, simd::KQuantR8<V, Lanes>>::run};
}

constexpr GemmProduct kProducts[] = {
#if defined(STRATA_SIMD_AVX512)
    quads<simd::Q2K>(DType::Q2_K), x4<simd::Q2K>(DType::Q2_K),
    quads<simd::Q3K>(DType::Q3_K), x4<simd::Q3K>(DType::Q3_K),
    quads<simd::Q4K>(DType::Q4_K), x4<simd::Q4K>(DType::Q4_K),
    quads<simd::Q5K>(DType::Q5_K), x4<simd::Q5K>(DType::Q5_K),
    quads<simd::Q6K>(DType::Q6_K), x4<simd::Q6K>(DType::Q6_K),
    quads<simd::IQ4XS>(DType::IQ4_XS), x4<simd::IQ4XS>(DType::IQ4_XS),
    quads<simd::Q4KR>(DType::Q4_K_R), x4<simd::Q4KR>(DType::Q4_K_R),
#else
    rows8<simd::Q2K>(DType::Q2_K),
    rows8<simd::Q3K>(DType::Q3_K),
    rows8<simd::Q4K>(DType::Q4_K),
    rows8<simd::Q5K>(DType::Q5_K),
    rows8<simd::Q6K>(DType::Q6_K),
    rows8<simd::IQ4XS>(DType::IQ4_XS),
    rows8<simd::Q4KR>(DType::Q4_K_R),
#endif
    {Kernel::Q4KResident, DType::Q4_K_R, simd::Q4KResident<V>::run},
    r8<R8Q4K>(DType::Q4_K_R8),
    r8<R8Q5K>(DType::Q5_K_R8),
    r8<R8Q6K>(DType::Q6_K_R8),
    r8<R8IQ4XS>(DType::IQ4_XS_R8),
};

}  // namespace

void install_kquant_gemm(Table& t) {
    install_products(t, kProducts);
    make_resident<DType::Q4_K_R8>(t);
    make_resident<DType::Q5_K_R8>(t);
    make_resident<DType::Q6_K_R8>(t);
    make_resident<DType::IQ4_XS_R8>(t);
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
