// kernels/simd/gemm_legacy.cpp — Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL matrix products for
// one SIMD variant: the kernels gemm_routes.h's rows name.
#include <type_traits>

#include "kernels/simd/gemm_legacy.h"
#include "kernels/simd/gemm_legacy_rows8_avx2.h"
#include "kernels/simd/isa.h"
#if defined(STRATA_SIMD_AVX512)
#include "kernels/simd/gemm_legacy_rows16_avx512.h"
#include "kernels/simd/gemm_legacy_x4_avx512.h"
#endif

namespace strata::kernels::detail::STRATA_SIMD_NS {
namespace {

// The 8-row layouts' lanes: AVX-512 two groups a tile (Q8_0 and Q4_0 one token: AVX2's, a
// group at a time), AVX2 one.
template <class Type>
constexpr GemmFn legacy_r8_gemm() {
#if defined(STRATA_SIMD_AVX512)
    using Tiles8 = std::conditional_t<std::is_same_v<Type, simd::IQ4NL>, void, simd::LegacyRows8<V, Type>>;
    return simd::GemmGroups<V, simd::LegacyR8<V, Type, simd::LegacyRows16<V, Type>, simd::Interleaved16, Tiles8>>::run;
#else
    return simd::GemmGroups<V, simd::LegacyR8<V, Type, simd::LegacyRows8<V, Type>, simd::Interleaved8>>::run;
#endif
}

#if defined(STRATA_SIMD_AVX512)
template <class Type>
constexpr GemmProduct rows16(DType w) {
    return {Kernel::LegacyRows16, w, simd::Gemm<V, simd::LegacyRows16<V, Type>>::blocks};
}
template <class Type>
constexpr GemmProduct x4(DType w) {
    return {Kernel::LegacyX4, w, simd::GemmX4<V, simd::LegacyX4<V, Type>>::run};
}
#else
template <class Type>
constexpr GemmProduct rows8(DType w) {
    return {Kernel::LegacyRows8, w, simd::Gemm<V, simd::LegacyRows8<V, Type>>::blocks};
}
#endif
template <class Type>
constexpr GemmProduct r8(DType layout) {
    return {Kernel::LegacyR8, layout, legacy_r8_gemm<Type>()};
}

constexpr GemmProduct kProducts[] = {
#if defined(STRATA_SIMD_AVX512)
    rows16<simd::Q4_0>(DType::Q4_0), x4<simd::Q4_0>(DType::Q4_0),
    rows16<simd::Q4_1>(DType::Q4_1), x4<simd::Q4_1>(DType::Q4_1),
    rows16<simd::Q5_0>(DType::Q5_0), x4<simd::Q5_0>(DType::Q5_0),
    rows16<simd::Q5_1>(DType::Q5_1), x4<simd::Q5_1>(DType::Q5_1),
    rows16<simd::Q8_0>(DType::Q8_0), x4<simd::Q8_0>(DType::Q8_0),
    rows16<simd::IQ4NL>(DType::IQ4_NL), x4<simd::IQ4NL>(DType::IQ4_NL),
#else
    rows8<simd::Q4_0>(DType::Q4_0),
    rows8<simd::Q4_1>(DType::Q4_1),
    rows8<simd::Q5_0>(DType::Q5_0),
    rows8<simd::Q5_1>(DType::Q5_1),
    rows8<simd::Q8_0>(DType::Q8_0),
    rows8<simd::IQ4NL>(DType::IQ4_NL),
#endif
    r8<simd::Q8_0>(DType::Q8_0_R8),
    r8<simd::Q4_0>(DType::Q4_0_R8),
    r8<simd::IQ4NL>(DType::IQ4_NL_R8),
};

}  // namespace

void install_legacy_gemm(Table& t) {
    install_products(t, kProducts);
    make_resident<DType::Q8_0_R8>(t);
    make_resident<DType::Q4_0_R8>(t);
    make_resident<DType::IQ4_NL_R8>(t);
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
