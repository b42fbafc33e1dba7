// kernels/simd/gemm_float.cpp — F32, F16, BF16 matrix products for one SIMD variant.
#include "kernels/simd/gemm_float.h"
#include "kernels/simd/isa.h"

namespace strata::kernels::detail::STRATA_SIMD_NS {
namespace {

template <template <class> class Elems>
using FloatOf = simd::Gemm<V, simd::FloatGemm<V, Elems>>;

#if defined(STRATA_SIMD_AVX512)
constexpr int64_t kFusedTokens = kFloatFusedAvx512;
#else
constexpr int64_t kFusedTokens = kFloatFusedAvx2;
#endif
static_assert(kFusedTokens <= simd::FloatGemm<V, simd::F32Elems>::kFusedTokens, "gemm_routes.h: more tokens than fused takes");

constexpr GemmProduct kProducts[] = {
    {Kernel::FloatFused, DType::F32, FloatOf<simd::F32Elems>::few},
    {Kernel::FloatStepped, DType::F32, FloatOf<simd::F32Elems>::many},
    {Kernel::FloatFused, DType::F16, FloatOf<simd::F16Elems>::few},
    {Kernel::FloatStepped, DType::F16, FloatOf<simd::F16Elems>::many},
    {Kernel::FloatFused, DType::BF16, FloatOf<simd::BF16Elems>::few},
    {Kernel::FloatStepped, DType::BF16, FloatOf<simd::BF16Elems>::many},
};

}  // namespace

void install_float_gemm(Table& t) { install_products(t, kProducts); }

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
