// kernels/simd/gemm_legacy_rows8.h — AVX2 only: Q8_0 products of 8 rows and 3..8 tokens
// (batched decode) with a row in each int32 lane, the AVX2 counterpart of
// gemm_legacy_rows16.h. A block's 8 quant dwords are transposed across 8 rows (rows8.h), so
// a token's 4 activations at a position are one dword broadcast to all lanes. AVX2 has no
// byte dot product into int32 and the weights are signed, so each position takes
// vpmaddubsw of |w| against the activations with w's sign (vpsignb; |w| once per block for
// every token), and a vpmaddwd by ones to int32 (a pair sum reaches 2 x 128 x 127, so two
// positions cannot share an int16). One float step per block and token serves the 8 rows.
// Legacy::narrow_row instead unpacks, multiplies, widens, converts and scales per block,
// row and token, and sums each row and token horizontally.
// Activations: the Q8_0 blocks as they come (token t's block b at x + t * ldx, b).
// Measured (Zen 4 run as AVX2, kernel_bench --type Q8_0 --isa avx2, three alternating runs
// against narrow_row): 4096x2048 in cache, 1 thread, 3 tokens 74-76 -> 76-81 GFLOP/s, 4
// tokens 64-69 -> 70-87, 8 tokens 61-65 -> 95-103; 8 sessions of 1B Q8_0 decoding
// (strata-bench --sessions 8, STRATA_ISA=avx2) 42-52 -> 77-84 tok/s.
// Must not touch: the other 32-element block types (gemm_legacy.h's paths).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/gemm_legacy.h"
#include "kernels/simd/rows8.h"

namespace {
namespace simd {

template <class V, class Type>
struct LegacyRows8 : Legacy<V, Type> {
    static_assert(std::is_same_v<Type, Q8_0>);
    using Base = Legacy<V, Type>;
    using Block = typename Type::Block;
    using Act = typename Base::Act;
    // 1-2 tokens keep llama.cpp's rounding.
    static constexpr int kMinTokens = Base::kLaneTokens;
    static constexpr int kFusedRows = 8;

    // Legacy's panel, or (from kMinTokens) the activation rows as they come.
    struct Acts : Base::Acts {
        const uint8_t* x = nullptr;
        size_t ldx = 0;
    };
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) { return Acts{Base::prepare(x, ldx, nt, k)}; }
    static Acts prepare_fused(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if (nt < kMinTokens) return prepare(x, ldx, nt, k);
        Acts acts{};
        acts.x = x;
        acts.ldx = ldx;
        return acts;
    }

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (NT >= kMinTokens) tile<NT>(w, ldw, NR, k / 32, acts.x + t0 * acts.ldx, acts.ldx, Y, ldy);
        else Base::template fused<NR, NT>(w, ldw, k, acts, t0, Y, ldy);
    }

    // Rows w .. w + nr - 1 (nr <= 8, ldw apart, `blocks` blocks each) against NT tokens
    // (token t's block b at x + t * ldx, b), stored to Y. The rows are taken whole, and the
    // next 8 rows' run comes into L2 in equal shares, one per 8 blocks.
    template <int NT>
    static void tile(const uint8_t* w, size_t ldw, int nr, int64_t blocks, const uint8_t* x, size_t ldx, float* Y, size_t ldy) {
        const RowSpan8 rows(ldw, nr);
        const int64_t parts = (blocks + kLegacyBlocks - 1) / kLegacyBlocks;
        const Act* a[NT];
        __m256 acc[NT];
        for (int t = 0; t < NT; ++t) {
            a[t] = reinterpret_cast<const Act*>(x + t * ldx);
            acc[t] = _mm256_setzero_ps();
        }
        const __m256i ones = _mm256_set1_epi16(1);
        for (int64_t b = 0; b < blocks; ++b) {
            const uint8_t* block = w + b * sizeof(Block);
            if (b % kLegacyBlocks == 0) prefetch_rows_share<8>(w + 8 * ldw, ldw, blocks * sizeof(Block), b / kLegacyBlocks, parts);
            __m256i v[8], m[8];
            transpose8x8(block + offsetof(Block, qs), rows, v);
            for (int j = 0; j < 8; ++j) m[j] = _mm256_abs_epi8(v[j]);
            const __m256 d = halves8(block + offsetof(Block, d), rows);
            for (int t = 0; t < NT; ++t) {
                __m256i dot = _mm256_setzero_si256();
                for (int j = 0; j < 8; ++j) {
                    const __m256i signed_a = _mm256_sign_epi8(dword8(a[t][b].qs + 4 * j), v[j]);
                    dot = _mm256_add_epi32(dot, _mm256_madd_epi16(_mm256_maddubs_epi16(m[j], signed_a), ones));
                }
                acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(d, _mm256_set1_ps(half_f(a[t][b].d))), acc[t]);
            }
        }
        for (int t = 0; t < NT; ++t) {
            alignas(32) float out[8];
            _mm256_store_ps(out, acc[t]);
            for (int r = 0; r < nr; ++r) Y[t * ldy + r] = out[r];
        }
    }
};

}  // namespace simd
}  // namespace
