// kernels/simd/gemm_legacy_rows8_avx2.h — AVX2 (and on AVX-512 one token of Q8_0_R8 and
// Q4_0_R8): products of 8 rows and up to 8 tokens of the 32-element block types (Q4_0,
// Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL) with a row in each int32
// lane, the AVX2 counterpart of gemm_legacy_rows16_avx512.h. A block's quant dwords are transposed
// across 8 rows (row_lanes8.h) to one vector per position of 4 elements (the nibble types: low
// nibbles of dword j for elements 4j .. 4j + 3, high ones for 16 + 4j ..), so a token's 4
// activations at a position are one dword broadcast to all lanes. AVX2 has no byte dot
// product into int32:
// - Q4_0, Q4_1 (values to 15) and Q5_0, Q5_1 (to 31, the fifth bit from qh bit e for
//   element e): one vpmaddubsw per position, the int16 pair sums of 8 or 4 positions added
//   as int16 (8 x 2 x 15 x 127, 4 x 2 x 31 x 127: no overflow), then one vpmaddwd by ones,
//   and the chain starts from -off times the block's activation sum;
// - Q8_0 and IQ4_NL (signed values, IQ4_NL's looked up in its table): vpmaddubsw of |w|
//   (once per block for every token) against the activations with w's sign (vpsignb), and a
//   vpmaddwd by ones per position (a pair sum reaches 2 x 128 x 127), with no offset.
// One float step per block and token serves the 8 rows (Q4_1, Q5_1: and one for m * s).
// Legacy::narrow_row instead unpacks, multiplies, widens, converts and scales per block,
// row and token, and sums each row and token horizontally.
// Activations: gemm_legacy_lanes.h's copy (Q8Lane).
// Faster than narrow_row from 3 tokens for Q8_0 and from one for the other types
// (tests/bench/HISTORY.md, "legacy rows8 lanes on AVX2").
// Since 2026-11-27 AVX2 takes every product here, in chunks of up to 8 tokens while a tile
// of 8 rows stays in cache (gemm_driver.h's blocks), where gemm_legacy.h had unpacked
// each step of weights once for 64 tokens and taken 8-lane FMA chains per (row, token,
// block), which was slower on every type. Q8_0_R8, Q4_0_R8 and IQ4_NL_R8 (the rows
// interleaved 8 at a time at load) take these lanes for every token count with Interleaved8
// in place of RowSpan8 (gemm_legacy_lanes.h's LegacyR8; on AVX-512 Q8_0_R8's and Q4_0_R8's
// one token), faster than the file's order (tests/bench/HISTORY.md, "legacy rows8 lanes for
// many tokens, and the 8-row layouts on AVX2").
// Must not touch: the 1-2 token Q8_0 path (gemm_legacy.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/simd/gemm_legacy_lanes.h"
#include "kernels/simd/row_lanes8.h"

namespace {
namespace simd {

template <class V, class Type>
struct LegacyRows8 : LegacyLanes<V, Type, LegacyRows8<V, Type>> {
    using Block = typename Type::Block;
    static constexpr bool kFifth = requires(Block b) { b.qh; };
    // Signed values: |w| against the activations with w's sign, one position at a time.
    static constexpr bool kSigned = std::is_same_v<Type, Q8_0> || std::is_same_v<Type, IQ4NL>;
    static constexpr int kSpan = kSigned ? 1 : kFifth ? 4 : 8;
    // Q8_0's 1-2 tokens take Legacy's narrow_row, about twice as quick (tests/bench/HISTORY.md,
    // "legacy rows8 lanes on AVX2").
    static constexpr int kMinTokens = std::is_same_v<Type, Q8_0> ? Legacy<V, Type>::kLaneTokens : 1;
    static constexpr int kFusedRows = 8;

    // The values of a block of 8 rows, position j (elements 4j .. 4j + 3) in u[j]: unsigned,
    // or signed for Q8_0 and IQ4_NL (kSigned).
    template <class Rows>
    static void positions(const uint8_t* block, const Rows& rows, __m256i (&u)[8]) {
        if constexpr (std::is_same_v<Type, Q8_0>) {
            rows.dwords8(block, offsetof(Block, qs), u);
        } else {
            __m256i q[4];
            rows.dwords4(block, offsetof(Block, qs), q);
            for (int j = 0; j < 8; ++j) u[j] = _mm256_and_si256(j < 4 ? q[j] : _mm256_srli_epi32(q[j - 4], 4), _mm256_set1_epi8(0x0F));
            if constexpr (kFifth) add_fifth_bits(block + offsetof(Block, qh), rows, u);
            if constexpr (std::is_same_v<Type, IQ4NL>)
                for (int j = 0; j < 8; ++j) u[j] = kSigned ? iq4_signed(u[j]) : iq4_unsigned(u[j]);
        }
    }

    // Q5_0 / Q5_1: bit e of the rows' qh (element e) as 16 in byte e % 4 of position e / 4.
    static void add_fifth_bits(const uint8_t* qh, const RowSpan8& rows, __m256i (&u)[8]) {
        uint32_t h[8];
        for (int r = 0; r < 8; ++r) std::memcpy(&h[r], qh + rows.at[r], sizeof h[r]);
        const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h));
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
            // Byte j / 2 of each dword in all four of its bytes, byte i tested for bit 4 (j % 2) + i.
            const int at = (j / 2) * 0x01010101;
            const __m256i index = _mm256_setr_epi32(at, 0x04040404 + at, 0x08080808 + at, 0x0C0C0C0C + at, at, 0x04040404 + at,
                                                    0x08080808 + at, 0x0C0C0C0C + at);
            const __m256i test = _mm256_set1_epi32(static_cast<int>(0x08040201u << 4 * (j % 2)));
            const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(bits, index), test), test);
            u[j] = _mm256_or_si256(u[j], _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
        }
    }

    // The int32 dot of a token's block (a) with the 8 rows' values u (and |u| in m, signed).
    static __m256i dot(const __m256i (&u)[8], const __m256i (&m)[8], const Q8Lane& a) {
        const __m256i ones = _mm256_set1_epi16(1);
        __m256i dot = kSigned ? _mm256_setzero_si256() : _mm256_set1_epi32(a.off);  // signed values need no offset
        for (int j0 = 0; j0 < 8; j0 += kSpan) {
            __m256i pairs;
            if constexpr (kSigned) {
                pairs = _mm256_maddubs_epi16(m[j0], _mm256_sign_epi8(dword8(a.q + 4 * j0), u[j0]));
            } else {
                pairs = _mm256_maddubs_epi16(u[j0], dword8(a.q + 4 * j0));
                for (int j = j0 + 1; j < j0 + kSpan; ++j) pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(u[j], dword8(a.q + 4 * j)));
            }
            dot = _mm256_add_epi32(dot, _mm256_madd_epi16(pairs, ones));
        }
        return dot;
    }

    // Rows w .. w + nr - 1 (nr <= 8, ldw apart, `blocks` blocks each) against NT tokens
    // (token t's block b at x[b * nt + t]), stored to Y. The rows are taken whole, and the
    // next 8 rows' run comes into L2 in equal shares, one per 8 blocks. Rows: RowSpan8, or
    // Interleaved8 for an 8-row group (an 8-row layout: w its start, block b 8 blocks on; its
    // stream prefetched ahead as the K-quants' groups are).
    template <int NT, class Rows = RowSpan8>
    static void tile(const uint8_t* w, size_t ldw, int nr, int64_t blocks, const Q8Lane* x, int64_t nt, float* Y, size_t ldy) {
        const Rows rows(ldw, nr);
        constexpr size_t kStride = Rows::kInterleave * sizeof(Block);
        const int64_t parts = (blocks + kLegacyBlocks - 1) / kLegacyBlocks;
        __m256 acc[NT];
        for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
        for (int64_t b = 0; b < blocks; ++b) {
            const uint8_t* block = w + b * kStride;
            if constexpr (Rows::kInterleave > 1) prefetch_group_ahead<Block>(w, b, blocks, 8 * ldw);
            else if (b % kLegacyBlocks == 0) prefetch_rows_share<8>(w + 8 * ldw, ldw, blocks * sizeof(Block), b / kLegacyBlocks, parts);
            __m256i u[8], m[8];
            positions(block, rows, u);
            for (int j = 0; j < 8; ++j) m[j] = kSigned ? _mm256_abs_epi8(u[j]) : u[j];
            const __m256 d = rows.halves(block, offsetof(Block, d));
            __m256 mins = d;
            if constexpr (Type::kMin) mins = rows.halves(block, offsetof(Block, m));
            const Q8Lane* a = x + b * nt;
            for (int t = 0; t < NT; ++t) {
                acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot(u, m, a[t])), _mm256_mul_ps(d, _mm256_set1_ps(a[t].d)), acc[t]);
                if constexpr (Type::kMin) acc[t] = _mm256_fmadd_ps(mins, _mm256_set1_ps(a[t].s), acc[t]);
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
