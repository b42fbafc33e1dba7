// kernels/simd/gemm_legacy_rows16_avx512.h — AVX-512 only: products of 16 rows and up to 8 tokens
// (decode and batched decode) of the 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// IQ4_NL) with a row in each int32 lane, as gemm_kquant_rows16_avx512.h does for the K-quants. A block's
// quant dwords are transposed across 16 rows (row_lanes16.h) and made unsigned values u, one
// vector per position of 4 elements: Q8_0's bytes + 128; the nibble types' low nibbles of
// dword j (elements 4j .. 4j + 3) and high ones (elements 16 + 4j ..), with Q5_0 / Q5_1's
// fifth bit from qh bit e for element e, and IQ4_NL's codes looked up as table value + 128.
// A token's 4 activations at a position are then one dword that vpdpbusd broadcasts from
// memory. Each token's chain starts from -off times the block's activation sum (off = 8,
// 16, 128, 128 for Q4_0, Q5_0, Q8_0, IQ4_NL), so every lane ends with its row's exact integer
// dot; one float step per block and token serves the 16 rows (Q4_1 / Q5_1: and one for m *
// s), whose block scales are gathered once per block.
// The path before (Legacy::wide_row, removed with the nibble types' move here) took a
// 512-bit product, three 64-byte loads of the prepared activations and three float
// instructions per two blocks, row and token.
// Activations: gemm_legacy_lanes.h's copy (Q8Lane).
// Faster than wide_row from 3 tokens for every type, and than narrow_row for one token of
// the nibble types (tests/bench/HISTORY.md, "legacy rows16 lanes").
// Q8_0_R8, Q4_0_R8 and IQ4_NL_R8 take these lanes with Interleaved16 in place of RowSpan
// (gemm_legacy_lanes.h's LegacyR8), for every token count but Q8_0_R8's and Q4_0_R8's one
// token (which reads DRAM better in gemm_legacy_rows8_avx2.h's lanes): about twice as fast as the
// file's order in cache (tests/bench/HISTORY.md, "legacy 8-row layouts on AVX-512").
// Must not touch: the many-token paths (gemm_legacy_x4_avx512.h), the 1-2 token ones (gemm_legacy.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/gemm_legacy_lanes.h"
#include "kernels/simd/gemm_legacy_row_avx512.h"
#include "kernels/simd/row_lanes16.h"

namespace {
namespace simd {

template <class V, class Type>
struct LegacyRows16 : LegacyLanes<V, Type, LegacyRows16<V, Type>> {
    using Block = typename Type::Block;
    // The lanes take every type from 3 tokens. Q8_0's 1-2 go to Legacy's narrow_row (one
    // sequential weight stream; its 34-byte blocks do not fit gemm_legacy_row_avx512.h's quads), the
    // other types' to Row (below), so kMinTokens is 1 for them.
    static constexpr int kMinTokens = std::is_same_v<Type, Q8_0> ? Legacy<V, Type>::kLaneTokens : 1;
    static constexpr int kFusedRows = 16;
    // One or two tokens of every type but Q8_0 take a row at a time instead
    // (gemm_legacy_row_avx512.h).
    using Row = LegacyRow<Type>;

    // The unsigned values of a block of 16 rows, position j (elements 4j .. 4j + 3) in u[j].
    template <class Rows>
    static void positions(const uint8_t* block, const Rows& rows, __m512i (&u)[8]) {
        if constexpr (std::is_same_v<Type, Q8_0>) {
            rows.dwords8(block, offsetof(Block, qs), u);
            for (int j = 0; j < 8; ++j) u[j] = _mm512_xor_si512(u[j], _mm512_set1_epi8(-128));
        } else {
            __m512i q[4];
            rows.dwords4(block, offsetof(Block, qs), q);
            for (int j = 0; j < 8; ++j) u[j] = _mm512_and_si512(j < 4 ? q[j] : _mm512_srli_epi32(q[j - 4], 4), _mm512_set1_epi8(0x0F));
            if constexpr (requires(Block b) { b.qh; }) add_fifth_bits(block + offsetof(Block, qh), rows, u);
            if constexpr (std::is_same_v<Type, IQ4NL>)
                for (int j = 0; j < 8; ++j) u[j] = iq4_unsigned16(u[j]);
        }
    }

    // Q5_0 / Q5_1: bit e of the rows' qh (element e) as 16 in byte e % 4 of position e / 4.
    static void add_fifth_bits(const uint8_t* qh, const RowSpan& rows, __m512i (&u)[8]) {
        const __m512i bits = _mm512_i32gather_epi32(rows.lanes, qh, 1);
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
            // Byte j / 2 of each dword in all four of its bytes, byte i tested for bit 4 (j % 2) + i.
            const int at = (j / 2) * 0x01010101;
            const __m512i spread = _mm512_shuffle_epi8(bits, _mm512_set4_epi32(0x0C0C0C0C + at, 0x08080808 + at, 0x04040404 + at, at));
            const __mmask64 set = _mm512_test_epi8_mask(spread, _mm512_set1_epi32(static_cast<int>(0x08040201u << 4 * (j % 2))));
            u[j] = _mm512_mask_add_epi8(u[j], set, u[j], _mm512_set1_epi8(0x10));
        }
    }

    // Rows w .. w + nr - 1 (nr <= 16, ldw apart, `blocks` blocks each) against NT tokens
    // (token t's block b at x[b * nt + t]), stored to Y. The rows are taken whole, and the
    // next 16 rows' run comes into L2 in equal shares, one per 8 blocks. Rows: RowSpan, or
    // Interleaved16 for two 8-row groups (an 8-row layout: w the first's start, block b 8
    // blocks on in each; their streams prefetched ahead as the K-quants' groups are).
    template <int NT, class Rows = RowSpan>
    static void tile(const uint8_t* w, size_t ldw, int nr, int64_t blocks, const Q8Lane* x, int64_t nt, float* Y, size_t ldy) {
        const Rows rows(ldw, nr);
        constexpr size_t kStride = Rows::kInterleave * sizeof(Block);
        const int64_t parts = (blocks + kLegacyBlocks - 1) / kLegacyBlocks;
        __m512 acc[NT];
        for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
        for (int64_t b = 0; b < blocks; ++b) {
            const uint8_t* block = w + b * kStride;
            if constexpr (Rows::kInterleave > 1) {
                prefetch_group_ahead<Block>(w, b, blocks, 16 * ldw);
                if (rows.second) prefetch_group_ahead<Block>(w + rows.second, b, blocks, 16 * ldw);
            } else if (b % kLegacyBlocks == 0) {
                prefetch_rows_share<16>(w + 16 * ldw, ldw, blocks * sizeof(Block), b / kLegacyBlocks, parts);
            }
            __m512i u[8];
            positions(block, rows, u);
            const __m512 d = rows.leading_halves(block, offsetof(Block, d));
            __m512 m = d;
            if constexpr (Type::kMin) m = rows.leading_halves(block, offsetof(Block, m));
            const Q8Lane* a = x + b * nt;
            for (int t = 0; t < NT; ++t) {
                __m512i dot = _mm512_set1_epi32(a[t].off);
                for (int j = 0; j < 8; ++j) dot = _mm512_dpbusd_epi32(dot, u[j], dword16(a[t].q + 4 * j));
                acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, _mm512_set1_ps(a[t].d)), acc[t]);
                if constexpr (Type::kMin) acc[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(a[t].s), acc[t]);
            }
        }
        const auto stored = static_cast<__mmask16>((1u << nr) - 1);
        for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(Y + t * ldy, stored, Rows::by_row(acc[t]));
    }
};

}  // namespace simd
}  // namespace
