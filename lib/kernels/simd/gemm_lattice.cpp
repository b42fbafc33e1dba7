// kernels/simd/gemm_lattice.cpp — MXFP4's and the lattice formats' (IQ1_S..IQ3_S) matrix
// products for one SIMD variant: the kernels gemm_routes.h's rows name (gemm_lattice.h's dots).
#include "kernels/simd/gemm_lattice.h"
#include "kernels/simd/gemm_lattice_panels.h"

#include <algorithm>

#include "kernels/scratch.h"
#include "kernels/simd/isa.h"

namespace strata::kernels::detail::STRATA_SIMD_NS {
namespace {

// Tokens a lattice row meets per pass: each sub-block is decoded (its codebook entries
// gathered, which costs more than a token's products) once for all of them; as many as the
// vector registers hold the sums of.
constexpr int kLatticeTokens = V::kBytes == 64 ? 16 : 4;

template <class Type, int NT>
void lattice_tokens(const uint8_t* w, int64_t blocks, const uint8_t* x, size_t ldx, float* y, size_t ldy) {
    const BlockQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) a[t] = reinterpret_cast<const BlockQ8_K*>(x + t * ldx);
    float out[NT];
    simd::lattice_dots<Type, NT>(reinterpret_cast<const typename Type::Block*>(w), a, blocks, out);
    for (int t = 0; t < NT; ++t) y[t * ldy] = out[t];
}

// lattice_tokens for n (1..NT) tokens.
template <class Type, int NT>
void lattice_upto(int64_t n, const uint8_t* w, int64_t blocks, const uint8_t* x, size_t ldx, float* y, size_t ldy) {
    if constexpr (NT > 1)
        if (n < NT) return lattice_upto<Type, NT - 1>(n, w, blocks, x, ldx, y, ldy);
    lattice_tokens<Type, NT>(w, blocks, x, ldx, y, ldy);
}

// Tokens whose activations stay in L2 while every row of a thread's share meets them: a row
// that met all of a long prompt's tokens in turn would fetch each token's activations (a Q8_K
// row is 1.1 KB per 1024 weights) from L3 or memory again for every row.
constexpr int64_t kTokenTile = 64;

// Every row of [r0, r1) against the tokens, a tile of tokens at a time, kLatticeTokens of them
// per decoded row.
template <class Type>
void lattice_gemm(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                  size_t ldy) {
    const auto* x = static_cast<const uint8_t*>(X);
    if (nt == 1) {  // decode: one token, the shortest path
        for (int64_t r = r0; r < r1; ++r) lattice_tokens<Type, 1>(static_cast<const uint8_t*>(W) + r * ldw, k / QK_K, x, ldx, Y + r, ldy);
        return;
    }
    for (int64_t t0 = 0; t0 < nt; t0 += kTokenTile) {
        const int64_t t1 = std::min(nt, t0 + kTokenTile);
        for (int64_t r = r0; r < r1; ++r) {
            const uint8_t* w = static_cast<const uint8_t*>(W) + r * ldw;
            for (int64_t t = t0; t < t1; t += kLatticeTokens)
                lattice_upto<Type, kLatticeTokens>(std::min<int64_t>(t1 - t, kLatticeTokens), w, k / QK_K, x + t * ldx, ldx,
                                                   Y + t * ldy + r, ldy);
        }
    }
}

#ifdef __AVX512VNNI__
// MXFP4 for n (1..NT) laid-out tokens: each pair of blocks decoded once for all of them.
template <int NT>
void mxfp4_upto(int64_t n, const BlockMXFP4* w, int64_t blocks, const simd::Mxfp4Token* a, float* y, size_t ldy) {
    if constexpr (NT > 1)
        if (n < NT) return mxfp4_upto<NT - 1>(n, w, blocks, a, y, ldy);
    simd::Mxfp4Token tokens[NT];
    for (int t = 0; t < NT; ++t) tokens[t] = a[t];
    float out[NT];
    simd::mxfp4_dots<NT>(w, tokens, blocks, out);
    for (int t = 0; t < NT; ++t) y[t * ldy] = out[t];
}
constexpr int kMxfp4Tokens = 8;

// MXFP4: a tile of tokens laid out once (simd::prepare_mxfp4_token), then every row of
// [r0, r1) against them, 8 tokens per decoded pair of blocks.
void mxfp4_gemm(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                size_t ldy) {
    const auto* x = static_cast<const uint8_t*>(X);
    const int64_t blocks = k / QK_MXFP4;
    uint8_t* laid_out = thread_scratch(size_t(std::min(nt, kTokenTile) * blocks) * simd::kMxfp4TokenBytes);
    simd::Mxfp4Token tokens[kTokenTile];
    for (int64_t t0 = 0; t0 < nt; t0 += kTokenTile) {
        const int64_t t1 = std::min(nt, t0 + kTokenTile);
        for (int64_t t = t0; t < t1; ++t)
            tokens[t - t0] = simd::prepare_mxfp4_token(reinterpret_cast<const BlockQ8_0*>(x + t * ldx), blocks,
                                                       laid_out + size_t((t - t0) * blocks) * simd::kMxfp4TokenBytes);
        for (int64_t r = r0; r < r1; ++r) {
            const auto* w = reinterpret_cast<const BlockMXFP4*>(static_cast<const uint8_t*>(W) + r * ldw);
            for (int64_t t = t0; t < t1; t += kMxfp4Tokens)
                mxfp4_upto<kMxfp4Tokens>(std::min<int64_t>(t1 - t, kMxfp4Tokens), w, blocks, tokens + (t - t0), Y + t * ldy + r, ldy);
        }
    }
}
#else
// MXFP4 (AVX2): each token's row in turn, a tile of tokens at a time.
void mxfp4_gemm(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                size_t ldy) {
    const auto* x = static_cast<const uint8_t*>(X);
    for (int64_t t0 = 0; t0 < nt; t0 += kTokenTile) {
        const int64_t t1 = std::min(nt, t0 + kTokenTile);
        for (int64_t r = r0; r < r1; ++r) {
            const auto* w = reinterpret_cast<const BlockMXFP4*>(static_cast<const uint8_t*>(W) + r * ldw);
            for (int64_t t = t0; t < t1; ++t)
                Y[t * ldy + r] = simd::mxfp4_dot(w, reinterpret_cast<const BlockQ8_0*>(x + t * ldx), k / QK_MXFP4);
        }
    }
}
#endif

constexpr GemmProduct kProducts[] = {
    {Kernel::Mxfp4Blocks, DType::MXFP4, mxfp4_gemm},
    {Kernel::LatticeSubs, DType::IQ1_S, lattice_gemm<simd::IQ1S>},
    {Kernel::LatticePanels, DType::IQ1_S, simd::lattice_panels<simd::IQ1S>},
    {Kernel::LatticeSubs, DType::IQ1_M, lattice_gemm<simd::IQ1M>},
    {Kernel::LatticePanels, DType::IQ1_M, simd::lattice_panels<simd::IQ1M>},
    {Kernel::LatticeSubs, DType::IQ2_XXS, lattice_gemm<simd::IQ2XXS>},
    {Kernel::LatticePanels, DType::IQ2_XXS, simd::lattice_panels<simd::IQ2XXS>},
    {Kernel::LatticeSubs, DType::IQ2_XS, lattice_gemm<simd::IQ2XS>},
    {Kernel::LatticePanels, DType::IQ2_XS, simd::lattice_panels<simd::IQ2XS>},
    {Kernel::LatticeSubs, DType::IQ2_S, lattice_gemm<simd::IQ2S>},
    {Kernel::LatticePanels, DType::IQ2_S, simd::lattice_panels<simd::IQ2S>},
    {Kernel::LatticeSubs, DType::IQ3_XXS, lattice_gemm<simd::IQ3XXS>},
    {Kernel::LatticePanels, DType::IQ3_XXS, simd::lattice_panels<simd::IQ3XXS>},
    {Kernel::LatticeSubs, DType::IQ3_S, lattice_gemm<simd::IQ3S>},
    {Kernel::LatticePanels, DType::IQ3_S, simd::lattice_panels<simd::IQ3S>},
};

}  // namespace

void install_lattice_gemm(Table& t) { install_products(t, kProducts); }

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
