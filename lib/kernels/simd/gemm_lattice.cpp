// kernels/simd/gemm_lattice.cpp — MXFP4's and the lattice formats' (IQ1_S..IQ3_S) matrix
// products for one SIMD variant: the kernels gemm_routes.h's rows name (gemm_lattice.h's dots).
#include "kernels/simd/gemm_lattice.h"
#include "kernels/simd/isa.h"

namespace strata::kernels::detail::STRATA_SIMD_NS {
namespace {

// Tokens a lattice row meets per pass: each sub-block is decoded (its codebook entries
// gathered) once for all of them; as many as the vector registers hold the sums of.
constexpr int kLatticeTokens = V::kBytes == 64 ? 8 : 4;

template <class Type, int NT>
void lattice_tokens(const uint8_t* w, int64_t blocks, const uint8_t* x, size_t ldx, float* y, size_t ldy) {
    const BlockQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) a[t] = reinterpret_cast<const BlockQ8_K*>(x + t * ldx);
    float out[NT];
    simd::lattice_dots<Type, NT>(reinterpret_cast<const typename Type::Block*>(w), a, blocks, out);
    for (int t = 0; t < NT; ++t) y[t * ldy] = out[t];
}

// Every row of [r0, r1) against the tokens, kLatticeTokens at a time.
template <class Type>
void lattice_gemm(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                  size_t ldy) {
    const auto* x = static_cast<const uint8_t*>(X);
    for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* w = static_cast<const uint8_t*>(W) + r * ldw;
        for (int64_t t = 0; t < nt; t += kLatticeTokens) {
            const uint8_t* xt = x + t * ldx;
            float* y = Y + t * ldy + r;
            switch (nt - t < kLatticeTokens ? nt - t : kLatticeTokens) {
                case 1: lattice_tokens<Type, 1>(w, k / QK_K, xt, ldx, y, ldy); break;
                case 2: lattice_tokens<Type, 2>(w, k / QK_K, xt, ldx, y, ldy); break;
                case 3: lattice_tokens<Type, 3>(w, k / QK_K, xt, ldx, y, ldy); break;
                case 4: lattice_tokens<Type, 4>(w, k / QK_K, xt, ldx, y, ldy); break;
                case 5: lattice_tokens<Type, 5>(w, k / QK_K, xt, ldx, y, ldy); break;
                case 6: lattice_tokens<Type, 6>(w, k / QK_K, xt, ldx, y, ldy); break;
                case 7: lattice_tokens<Type, 7>(w, k / QK_K, xt, ldx, y, ldy); break;
                default: lattice_tokens<Type, kLatticeTokens>(w, k / QK_K, xt, ldx, y, ldy); break;
            }
        }
    }
}

// MXFP4: a row stays in L1 while it meets every token.
void mxfp4_gemm(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                size_t ldy) {
    for (int64_t r = r0; r < r1; ++r) {
        const auto* w = reinterpret_cast<const BlockMXFP4*>(static_cast<const uint8_t*>(W) + r * ldw);
        for (int64_t t = 0; t < nt; ++t)
            Y[t * ldy + r] = simd::mxfp4_dot(w, reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(X) + t * ldx), k / QK_MXFP4);
    }
}

constexpr GemmProduct kProducts[] = {
    {Kernel::Mxfp4Blocks, DType::MXFP4, mxfp4_gemm},
    {Kernel::LatticeSubs, DType::IQ1_S, lattice_gemm<simd::IQ1S>},
    {Kernel::LatticeSubs, DType::IQ1_M, lattice_gemm<simd::IQ1M>},
    {Kernel::LatticeSubs, DType::IQ2_XXS, lattice_gemm<simd::IQ2XXS>},
    {Kernel::LatticeSubs, DType::IQ2_XS, lattice_gemm<simd::IQ2XS>},
    {Kernel::LatticeSubs, DType::IQ2_S, lattice_gemm<simd::IQ2S>},
    {Kernel::LatticeSubs, DType::IQ3_XXS, lattice_gemm<simd::IQ3XXS>},
    {Kernel::LatticeSubs, DType::IQ3_S, lattice_gemm<simd::IQ3S>},
};

}  // namespace

void install_lattice_gemm(Table& t) { install_products(t, kProducts); }

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
