// kernels/simd/isa.h — which ISA a simd/*.cpp translation unit is being compiled for.
// meson compiles each of those files once per variant with -DSTRATA_SIMD_AVX2 or
// -DSTRATA_SIMD_AVX512 (and the matching -m flags); this header brings in that variant's
// vector traits V and names the namespace its entry points live in. It also declares the
// per-family install functions install.cpp calls. Must not touch: the kernels.
#pragma once

#if defined(STRATA_SIMD_AVX512)
#include "kernels/avx512/traits.h"
#define STRATA_SIMD_NS avx512
#define STRATA_SIMD_ISA Avx512
#elif defined(STRATA_SIMD_AVX2)
#include "kernels/avx2/traits.h"
#define STRATA_SIMD_NS avx2
#define STRATA_SIMD_ISA Avx2
#else
#error "kernels/simd/*.cpp must be compiled with -DSTRATA_SIMD_AVX2 or -DSTRATA_SIMD_AVX512"
#endif

#include "kernels/table.h"
#include "tensor/repack.h"

namespace strata::kernels::detail::STRATA_SIMD_NS {

// The rows of gemm_routes.h this variant installs.
constexpr Isa kIsa = Isa::STRATA_SIMD_ISA;

// Each installs its family's kernels for the rows of gemm_routes.h that name them.
void install_float_gemm(Table& t);
void install_legacy_gemm(Table& t);
void install_kquant_gemm(Table& t);
void install_lattice_gemm(Table& t);

template <size_t N>
void install_products(Table& t, const GemmProduct (&products)[N]) {
    detail::install_products(t, kIsa, products, N);
}

// An 8-row layout (tensor/repack.h), made its file type's resident layout.
template <DType Layout>
void make_resident(Table& t) {
    constexpr DType file = r8_file_of(Layout);
    static_assert(file != Layout, "make_resident takes an 8-row layout");
    t.resident[slot(file)] = Layout;
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
