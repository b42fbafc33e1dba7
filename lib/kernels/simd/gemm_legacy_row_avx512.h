// kernels/simd/gemm_legacy_row_avx512.h — AVX-512 only: products of one or two tokens of the nibble
// block types (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL), a row at a time, four blocks to a 512-bit
// vector.
// Two 64-byte loads cover four blocks (72-96 bytes), and one word permutation picks their
// quant bytes so that dword lane L holds bytes 4g .. 4g + 3 of block L % 4 (g = L / 4):
// low nibbles are elements 4g .. 4g + 3, high ones 16 + 4g ... The activations are copied
// once per product into the same order (Q8Quad), so two vpdpbusd take the four blocks'
// integer dots, starting from -off times each block's activation sum (off = 8, 16, 128 for
// Q4_0, Q5_0, IQ4_NL) in the block's first lane. The block scales come out of the same two
// loads by a second word permutation, as F16 words in lane order, so the float step of
// four blocks is one conversion, one multiply by the activations' scales (one 128-bit
// broadcast) and one FMA (Q4_1, Q5_1: and one for m * s). A row is one sequential stream;
// the last 1-3 blocks are read with masked loads against zeroed activations.
// Only AVX-512BW permutations (no VBMI), so every CPU the AVX-512 variant runs on takes it.
// The path before (gemm_legacy_rows8_avx2.h's 8-row lanes, twice per 16 rows) transposed 8 rows'
// quant dwords per block and gathered the 8 scales through memory; this one is faster for
// one token in cache and from DRAM, and for two tokens than the 16-row lanes' tile<2>
// (tests/bench/HISTORY.md, "legacy row kernel").
// Must not touch: the few-token lanes (gemm_legacy_rows16_avx512.h), Q8_0 (gemm_legacy.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/gemm_legacy_lanes.h"
#include "kernels/simd/row_lanes16.h"

namespace {
namespace simd {

template <class Type>
struct LegacyRow {
    using Block = typename Type::Block;
    static constexpr int kBlock = sizeof(Block);
    static constexpr int kQuad = 4 * kBlock;
    static constexpr int kSecond = kQuad - 64;  // where the second 64-byte load starts
    static constexpr bool kFifth = requires(Block b) { b.qh; };
    static_assert(kBlock % 2 == 0 && kQuad <= 128);

    // The word at byte `at` of a quad (even) as an index into the two loads' 64 words.
    static constexpr int16_t word(int at) { return static_cast<int16_t>(at + 2 <= 64 ? at / 2 : 32 + (at - kSecond) / 2); }
    template <class T, class F>
    static constexpr std::array<T, 64 / sizeof(T)> table(F entry) {
        std::array<T, 64 / sizeof(T)> out{};
        for (int i = 0; i < static_cast<int>(out.size()); ++i) out[i] = static_cast<T>(entry(i));
        return out;
    }
    template <class T, size_t N>
    static __m512i load(const std::array<T, N>& t) { return _mm512_load_si512(t.data()); }

    // Word permutations of the two loads. kQs: dword lane L gets quant bytes 4g .. 4g + 3
    // of block L % 4. kScales: words 0..15 d of block i % 4, words 16..31 m of it (Q4_1,
    // Q5_1). kQh: every 128-bit lane the four blocks' qh dwords (Q5_0, Q5_1).
    alignas(64) static constexpr auto kQs =
        table<int16_t>([](int i) { return word(kBlock * (i / 2 % 4) + offsetof(Block, qs) + 4 * (i / 8) + 2 * (i % 2)); });
    alignas(64) static constexpr auto kScales = table<int16_t>([](int i) {
        if constexpr (Type::kMin)
            if (i >= 16) return word(kBlock * (i % 4) + offsetof(Block, m));
        return word(kBlock * (i % 4) + offsetof(Block, d));
    });
    alignas(64) static constexpr auto kQh = table<int16_t>([](int i) {
        if constexpr (kFifth) return word(kBlock * (i / 2 % 4) + offsetof(Block, qh) + 2 * (i % 2));
        else return 0;
    });
    // Fifth bits: byte 4i + e of 128-bit lane g takes byte g / 2 (elements 0..15: kLow) or
    // 2 + g / 2 (16..31: kHigh) of block i's qh dword and tests bit 4 (g % 2) + e (kBit).
    alignas(64) static constexpr auto kLow = table<int8_t>([](int p) { return 4 * (p % 16 / 4) + p / 32; });
    alignas(64) static constexpr auto kHigh = table<int8_t>([](int p) { return 4 * (p % 16 / 4) + 2 + p / 32; });
    alignas(64) static constexpr auto kBit = table<uint8_t>([](int p) { return 1u << (4 * (p / 16 % 2) + p % 4); });

    // Up to kTokens tokens take this path (each quad unpacked once for all of them); from 3
    // the 16-row lanes are quicker.
    static constexpr int kTokens = 2;

    // Rows w .. w + nr - 1 (ldw apart, `blocks` blocks each) against NT tokens (token t's
    // quads at a + t * quads_of(blocks)), to Y[t * ldy + r].
    template <int NT>
    static void rows(const uint8_t* w, size_t ldw, int nr, int64_t blocks, const Q8Quad* a, float* Y, size_t ldy) {
        const int64_t stride = quads_of(blocks);
        const bool long_row = NT * stride * static_cast<int64_t>(sizeof(Q8Quad)) > kL1Acts;
        for (int r = 0; r < nr; ++r) {
            if (long_row) row<NT, true>(w + r * ldw, blocks, a, stride, Y + r, ldy);
            else row<NT, false>(w + r * ldw, blocks, a, stride, Y + r, ldy);
        }
    }

    // Rows whose activations pass kL1Acts bring the weights far ahead into L2 and just before
    // use into L1 (as gemm_legacy.h's narrow_row); shorter ones leave it to the hardware.
    template <int NT, bool kLong>
    static void row(const uint8_t* w, int64_t blocks, const Q8Quad* a, int64_t stride, float* Y, size_t ldy) {
        // Two accumulators per token, quads alternating between them.
        __m512 even[NT], odd[NT];
        for (int t = 0; t < NT; ++t) even[t] = odd[t] = _mm512_setzero_ps();
        const int64_t full = blocks / 4;
        auto next = [&](int64_t q, __m512 (&acc)[NT]) {
            const uint8_t* p = w + q * kQuad;
            if constexpr (kLong) {
                prefetch_bytes<2>(p + kFarAhead, kQuad);
                prefetch_bytes(p + kNearAhead, kQuad);
            }
            quad<NT>(_mm512_loadu_si512(p), _mm512_loadu_si512(p + kSecond), a + q, stride, acc);
        };
        int64_t q = 0;
        for (; q + 1 < full; q += 2) {
            next(q, even);
            next(q + 1, odd);
        }
        if (q < full) next(q, even);
        if (const int64_t bytes = blocks % 4 * kBlock) {
            const uint8_t* p = w + full * kQuad;
            const __mmask64 first = bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
            const __mmask64 second = bytes > kSecond ? (__mmask64{1} << (bytes - kSecond)) - 1 : 0;
            quad<NT>(_mm512_maskz_loadu_epi8(first, p), _mm512_maskz_loadu_epi8(second, p + kSecond), a + full, stride, odd);
        }
        for (int t = 0; t < NT; ++t) Y[t * ldy] = _mm512_reduce_add_ps(_mm512_add_ps(even[t], odd[t]));
    }

    // acc[t] plus four blocks (b0: the quad's first 64 bytes, b1: its last 64) against token
    // t's quad a[t * stride].
    template <int NT>
    static void quad(__m512i b0, __m512i b1, const Q8Quad* a, int64_t stride, __m512 (&acc)[NT]) {
        const __m512i q = _mm512_permutex2var_epi16(b0, load(kQs), b1);
        __m512i lo = _mm512_and_si512(q, _mm512_set1_epi8(0x0F));
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), _mm512_set1_epi8(0x0F));
        if constexpr (kFifth) add_fifth_bits(b0, b1, lo, hi);
        if constexpr (std::is_same_v<Type, IQ4NL>) {
            lo = iq4_unsigned16(lo);
            hi = iq4_unsigned16(hi);
        }
        const __m512i scales = _mm512_permutex2var_epi16(b0, load(kScales), b1);
        const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(scales));
        for (int t = 0; t < NT; ++t) {
            const Q8Quad& at = a[t * stride];
            __m512i dot = _mm512_load_si512(at.off);
            dot = _mm512_dpbusd_epi32(dot, lo, _mm512_load_si512(at.lo));
            dot = _mm512_dpbusd_epi32(dot, hi, _mm512_load_si512(at.hi));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, _mm512_broadcast_f32x4(_mm_load_ps(at.d))), acc[t]);
            if constexpr (Type::kMin)
                acc[t] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(scales, 1)), _mm512_zextps128_ps512(_mm_load_ps(at.s)),
                                         acc[t]);
        }
    }

    // Q5_0 / Q5_1: bit e of block i's qh (element e) as 16 added to the byte of element e.
    static void add_fifth_bits(__m512i b0, __m512i b1, __m512i& lo, __m512i& hi) {
        const __m512i qh = _mm512_permutex2var_epi16(b0, load(kQh), b1);
        const __m512i sixteen = _mm512_set1_epi8(0x10);
        lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(_mm512_shuffle_epi8(qh, load(kLow)), load(kBit)), lo, sixteen);
        hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(_mm512_shuffle_epi8(qh, load(kHigh)), load(kBit)), hi, sixteen);
    }
};

}  // namespace simd
}  // namespace
