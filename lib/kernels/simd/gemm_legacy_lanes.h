// kernels/simd/gemm_legacy_lanes.h — what the row-lane products of the 32-element block types
// share (gemm_legacy_rows16_avx512.h on AVX-512, gemm_legacy_rows8_avx2.h on AVX2): the activations'
// copy, made once per product (Legacy's Q8Lanes; for AVX-512's 1-2 tokens, four blocks at a
// time in gemm_legacy_row_avx512.h's order), and the choice by token count between
// the lanes' tile, the row (gemm_legacy_row_avx512.h) and Legacy's narrow_row.
// Must not touch: the lanes' tiles, Legacy's paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/simd/gemm_legacy.h"
#include "kernels/simd/row_lanes8.h"

namespace {
namespace simd {

// Four of the token's blocks in the row quads' order: dword lane L of lo holds elements
// 4g .. 4g + 3 of block L % 4 (g = L / 4), of hi elements 16 + 4g .., and off[L] is -off
// times the sum of those 8 quants (so that each lane ends with an exact sum of w * a);
// then per block its scale and Q8_1's s (Q4_1, Q5_1). Blocks past k are zero.
struct alignas(64) Q8Quad {
    int8_t lo[64], hi[64];
    int32_t off[16];
    float d[4];
    float s[4];
};

// The Q8Quads that hold `blocks` blocks: one token's share of a copy.
inline int64_t quads_of(int64_t blocks) { return (blocks + 3) / 4; }

// Legacy, with products of Tiles::kMinTokens..8 tokens in Tiles::tile<NT>(w, ldw, nr, blocks,
// lanes, nt, Y, ldy) (token t's block b at lanes[b * nt + t]).
template <class V, class Type, class Tiles>
struct LegacyLanes : Legacy<V, Type> {
    using Base = Legacy<V, Type>;
    using Act = typename Base::Act;

    // Legacy's Q8Lanes (all but the row's tokens), or (up to row_tokens()) the row's quads,
    // token t's at quads + t * quads_of(k / 32).
    struct Acts : Base::Acts {
        const Q8Quad* quads = nullptr;
    };
    // How many tokens go through Tiles::Row: up to its kTokens where the tiles have one
    // (AVX-512: gemm_legacy_row_avx512.h) and take one token at all (not Q8_0), else none.
    static constexpr int row_tokens() {
        if constexpr (requires { typename Tiles::Row; }) {
            if constexpr (Tiles::kMinTokens == 1) return Tiles::Row::kTokens;
        }
        return 0;
    }
    // The lanes take every product the driver's blocks hand them (gemm_driver.h), in chunks
    // of up to 8 tokens: on AVX2 all of them, on AVX-512 those gemm_routes.h gives them.
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if constexpr (row_tokens() > 0) {
            if (nt <= row_tokens()) {
                Acts acts{};
                acts.quads = prepare_quads(x, ldx, nt, k);
                return acts;
            }
        }
        return Acts{Base::prepare(x, ldx, nt, k)};
    }

    // nt tokens' blocks (k / 32 each) as Q8Quads, token t's from [t * quads], in per-thread
    // scratch (AVX-512 only).
    static const Q8Quad* prepare_quads(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        const int64_t nb = k / 32, quads = quads_of(nb);
        auto* out = static_cast<Q8Quad*>(scratch(static_cast<size_t>(nt * quads) * sizeof(Q8Quad)));
        for (int64_t t = 0; t < nt; ++t) {
            const Act* a = reinterpret_cast<const Act*>(x + t * ldx);
            Q8Quad* o = out + t * quads;
            for (int64_t q = 0; q < nb / 4; ++q) quad(a + 4 * q, o[q]);
            if (nb % 4) {
                Act last[4] = {};  // zero blocks (d = 0) past k
                std::memcpy(last, a + nb / 4 * 4, static_cast<size_t>(nb % 4) * sizeof(Act));
                quad(last, o[nb / 4]);
            }
        }
        return out;
    }

    // Blocks a[0..3] as a Q8Quad: their 16-byte halves side by side, each 4 x 4 dwords
    // transposed (dword g of block i to lane 4g + i), and the lanes' offsets from one
    // vpdpbusd of off (unsigned) against each half.
    template <class I = __m512i>
    static void quad(const Act* a, Q8Quad& o) {
        auto halves = [&](int at) {
            I v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a[0].qs + at)));
            v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[1].qs + at)), 1);
            v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[2].qs + at)), 2);
            v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[3].qs + at)), 3);
            return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), v);
        };
        const I lo = halves(0), hi = halves(16);
        _mm512_store_si512(o.lo, lo);
        _mm512_store_si512(o.hi, hi);
        const I off = _mm512_set1_epi8(static_cast<char>(Type::kOffset));
        const I sums = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), off, lo), off, hi);
        _mm512_store_si512(o.off, _mm512_sub_epi32(_mm512_setzero_si512(), sums));
        for (int i = 0; i < 4; ++i) {
            o.d[i] = half_f(a[i].d);
            o.s[i] = Base::s_of(a[i]);
        }
    }

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (NT <= row_tokens())
            Tiles::Row::template rows<NT>(w, ldw, NR, k / 32, acts.quads + t0 * quads_of(k / 32), Y, ldy);
        else if constexpr (NT >= Tiles::kMinTokens) Tiles::template tile<NT>(w, ldw, NR, k / 32, acts.lanes + t0, acts.nt, Y, ldy);
        else Base::template fused<NR, NT>(w, ldw, k, acts, t0, Y, ldy);
    }
};

// An 8-row layout of a 32-element type (tensor/repack.h: Q8_0_R8, Q4_0_R8, IQ4_NL_R8) in
// Tiles' lanes for every token count, Rows: Interleaved8 or Interleaved16 (whole groups;
// GemmGroups cuts the ranges). The lanes read a group as one stream where the file's order
// takes Legacy's narrow_row (Q8_0) or a row at a time (AVX-512) for 1-2 tokens. One token
// takes Tiles8 where one is given (AVX-512: AVX2's 8-row lanes, gemm_legacy_rows8_avx2.h), a
// group after the other, as gemm_kquant_r8.h's Lanes16 does and for the same reason: from
// DRAM one stream at a time reads the bus better, though slower in L3; IQ4_NL_R8's AVX2
// form is slower than the bus, so it takes none (tests/bench/HISTORY.md, "legacy 8-row
// layouts, one token on AVX-512").
template <class V, class Type, class Tiles, class Rows, class Tiles8 = void>
struct LegacyR8 : Legacy<V, Type> {
    using Acts = typename Legacy<V, Type>::Acts;
    static constexpr int kFusedRows = Tiles::kFusedRows;
    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (!std::is_void_v<Tiles8> && NT == 1) {
            for (int g = 0; g < NR; g += 8)
                Tiles8::template tile<1, Interleaved8>(w + g * ldw, ldw, NR - g < 8 ? NR - g : 8, k / 32, acts.lanes + t0, acts.nt, Y + g,
                                                       ldy);
        } else {
            Tiles::template tile<NT, Rows>(w, ldw, NR, k / 32, acts.lanes + t0, acts.nt, Y, ldy);
        }
    }
};

}  // namespace simd
}  // namespace
