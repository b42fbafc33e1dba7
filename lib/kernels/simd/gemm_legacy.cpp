// kernels/simd/gemm_legacy.cpp — Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL matrix products for
// one SIMD variant.
#include <type_traits>

#include "kernels/simd/gemm_legacy.h"
#include "kernels/simd/gemm_legacy_rows8.h"
#include "kernels/simd/isa.h"
#if defined(STRATA_SIMD_AVX512)
#include "kernels/simd/gemm_legacy_rows16.h"
#include "kernels/simd/gemm_legacy_x4.h"
#endif

namespace strata::kernels::detail::STRATA_SIMD_NS {
namespace {

// AVX-512: the 4 x 4 lane layout for many tokens, the 16-row lanes (gemm_legacy_rows16.h)
// for up to 8, a row at a time for 1-2 (gemm_legacy_row.h, all types but Q8_0); AVX2: the
// 8-row lanes (gemm_legacy_rows8.h) for every token count. The 8-row layouts (Q8_0_R8,
// Q4_0_R8, IQ4_NL_R8): the lanes of either, for every token count (on AVX-512 one token of
// Q8_0_R8 and Q4_0_R8 in AVX2's).
template <class Type>
constexpr GemmFn legacy_gemm() {
#if defined(STRATA_SIMD_AVX512)
    return simd::GemmX4<V, simd::LegacyX4<V, Type>>::run;
#else
    return simd::Gemm<V, simd::LegacyRows8<V, Type>>::run;
#endif
}

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

}  // namespace

void install_legacy_gemm(Table& t) {
    t.gemm[slot(DType::Q4_0)] = legacy_gemm<simd::Q4_0>();
    t.gemm[slot(DType::Q4_1)] = legacy_gemm<simd::Q4_1>();
    t.gemm[slot(DType::Q5_0)] = legacy_gemm<simd::Q5_0>();
    t.gemm[slot(DType::Q5_1)] = legacy_gemm<simd::Q5_1>();
    t.gemm[slot(DType::Q8_0)] = legacy_gemm<simd::Q8_0>();
    t.gemm[slot(DType::IQ4_NL)] = legacy_gemm<simd::IQ4NL>();
    install_r8<DType::Q8_0_R8>(t, legacy_r8_gemm<simd::Q8_0>());
    install_r8<DType::Q4_0_R8>(t, legacy_r8_gemm<simd::Q4_0>());
    install_r8<DType::IQ4_NL_R8>(t, legacy_r8_gemm<simd::IQ4NL>());
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
