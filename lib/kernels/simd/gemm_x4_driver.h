// kernels/simd/gemm_x4_driver.h — AVX-512 only: the driver of the products over many tokens
// (from gemm_routes.h's kX4FromTokens) that hold 4 rows x 4 tokens in the 16 int32 lanes of
// each accumulator (lane j: row j / 4 of a row group, token j % 4 of a token group), and the
// helpers that build those lanes.
// Weights are unpacked once per token block into a lane-replicated form (each row's four
// values at a k position fill the four lanes of its row), activations are interleaved
// once per call (four tokens' four values side by side, broadcast to the four row lanes).
// One integer dot instruction per 4 k positions then does 64 multiply-adds for 16
// (row, token) pairs, and everything per block or super-block — scales, offsets, mins —
// is one vector operation per 16 pairs instead of one per pair.
// A family (gemm_kquant_x4_avx512.h, gemm_legacy_x4_avx512.h) supplies:
//   Weights, Acts                one row group's / token group's step of 256 elements
//   unpack(w, ldw, n, k, s, Weights&)     n (1..4) rows, missing rows zero
//   interleave(x, ldx, n, k, s, Acts&)    n (1..4) tokens, missing tokens zero
//   step<MR, MT>(Weights*, Acts* const*, acc, stride)
//                                adds step s of MR row groups x MT token groups into
//                                acc[mr * stride + mt]
// Must not touch: type-specific arithmetic.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/intrinsics.h"

namespace {
namespace simd {

constexpr int kX4Lanes = 16;
constexpr int kX4RowGroups = 4;    // row groups unpacked together (16 rows)
constexpr int kX4TokenGroups = 4;  // token groups per register tile (16 tokens)
constexpr int64_t kX4MaxGroups = 32;  // token groups per block (128 tokens)
// Interleaved activations of a token block: most of L2 (1 MB on Zen 4); measured best
// against 256 KB and 64 tokens (the acc array and unpacked weights stay in L1).
constexpr int64_t kX4ActBudget = 768 * 1024;

// [a | b] as one 512-bit vector.
inline __m512i join(__m256i a, __m256i b) { return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1); }

// Index for vpermt2d over [row 0 | row 1] and [row 2 | row 3] (8 dwords each): dword q of
// each row, repeated over that row's four lanes.
inline __m512i x4_dword_index(int q) {
    return _mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 8, 8, 8, 8, 16, 16, 16, 16, 24, 24, 24, 24), _mm512_set1_epi32(q));
}

// 32 bytes (8 dwords) of each of 4 rows, as the 8 lane-replicated vectors of their k4
// positions: out[q] lane j = row j / 4's dword q.
inline void replicate_rows(const __m256i (&rows)[4], uint8_t (*out)[64]) {
    const __m512i ab = join(rows[0], rows[1]), cd = join(rows[2], rows[3]);
    for (int q = 0; q < 8; ++q) _mm512_store_si512(out[q], _mm512_permutex2var_epi32(ab, x4_dword_index(q), cd));
}

// 64 bytes (16 dwords) of each of 4 tokens, interleaved: out[q] dword t = token t's dword q.
inline void interleave_tokens(const __m512i (&tok)[4], int8_t (*out)[16]) {
    const __m512i lo01 = _mm512_unpacklo_epi32(tok[0], tok[1]), hi01 = _mm512_unpackhi_epi32(tok[0], tok[1]);
    const __m512i lo23 = _mm512_unpacklo_epi32(tok[2], tok[3]), hi23 = _mm512_unpackhi_epi32(tok[2], tok[3]);
    // Dword 4L + i of each token sits in 128-bit lane L of by_dword[i].
    const __m512i by_dword[4] = {_mm512_unpacklo_epi64(lo01, lo23), _mm512_unpackhi_epi64(lo01, lo23),
                                 _mm512_unpacklo_epi64(hi01, hi23), _mm512_unpackhi_epi64(hi01, hi23)};
    for (int i = 0; i < 4; ++i)
        for (int l = 0; l < 4; ++l) std::memcpy(out[4 * l + i], reinterpret_cast<const char*>(&by_dword[i]) + 16 * l, 16);
}

// The four values of a row group (lane j: v[j / 4]) or a token group (lane j: v[j % 4]).
inline __m512 by_row(const float (&v)[4]) {
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                                 _mm512_castps128_ps512(_mm_loadu_ps(v)));
}
inline __m512 by_token(const float* v) { return _mm512_broadcast_f32x4(_mm_load_ps(v)); }
inline __m512i by_token(const int32_t* v) { return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(v))); }
inline __m512i by_token(const int8_t* v) { return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(v))); }

template <class V, class F>
struct GemmX4 {
    static constexpr int64_t kMaxGroups = kX4MaxGroups;
    using Weights = typename F::Weights;
    using Acts = typename F::Acts;

    static void run(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx,
                    int64_t nt, float* Y, size_t ldy) {
        auto* w = static_cast<const uint8_t*>(W);
        auto* x = static_cast<const uint8_t*>(X);
        const int64_t ns = steps(k);
        // Token blocks whose interleaved activations stay within the L2 budget.
        int64_t groups = min64(kMaxGroups, kX4ActBudget / (ns * static_cast<int64_t>(sizeof(Acts))));
        if (groups < 1) groups = 1;
        for (int64_t t0 = 0; t0 < nt; t0 += 4 * groups) {
            const int64_t tb = min64(4 * groups, nt - t0), ng = (tb + 3) / 4;
            auto* panel = static_cast<Acts*>(scratch(static_cast<size_t>(ng * ns) * sizeof(Acts)));
            for (int64_t g = 0; g < ng; ++g)
                for (int64_t s = 0; s < ns; ++s)
                    F::interleave(x + (t0 + 4 * g) * ldx, ldx, static_cast<int>(min64(4, tb - 4 * g)), k, s, panel[g * ns + s]);
            for (int64_t r = r0; r < r1; r += 4 * kX4RowGroups) {
                const int64_t nr = min64(4 * kX4RowGroups, r1 - r);
                with_count<kX4RowGroups>(static_cast<int>((nr + 3) / 4), [&](auto mr) {
                    row_panel<decltype(mr)::value>(w + r * ldw, ldw, static_cast<int>(nr), k, panel, ng, tb,
                                                   Y + t0 * ldy + r, ldy);
                });
            }
        }
    }

    // nr rows (in MR groups of 4) against ng token groups of the panel.
    template <int MR>
    static void row_panel(const uint8_t* w, size_t ldw, int nr, int64_t k, const Acts* panel, int64_t ng, int64_t tb,
                          float* Y, size_t ldy) {
        const int64_t ns = steps(k);
        alignas(64) __m512 acc[MR * kMaxGroups];
        for (int mr = 0; mr < MR; ++mr)
            for (int64_t g = 0; g < ng; ++g) acc[mr * kMaxGroups + g] = _mm512_setzero_ps();
        alignas(64) Weights wb[MR];
        const int64_t full = ng / kX4TokenGroups * kX4TokenGroups;
        for (int64_t s = 0; s < ns; ++s) {
            for (int mr = 0; mr < MR; ++mr)
                F::unpack(w + 4 * mr * ldw, ldw, nr - 4 * mr < 4 ? nr - 4 * mr : 4, k, s, wb[mr]);
            for (int64_t g = 0; g < ng; g += kX4TokenGroups) {
                const Acts* a[kX4TokenGroups];
                for (int i = 0; i < kX4TokenGroups; ++i) a[i] = panel + min64(g + i, ng - 1) * ns + s;
                if (g < full) {
                    F::template step<MR, kX4TokenGroups>(wb, a, acc + g, kMaxGroups);
                } else {
                    with_count<kX4TokenGroups - 1>(static_cast<int>(ng - g), [&](auto mt) {
                        F::template step<MR, decltype(mt)::value>(wb, a, acc + g, kMaxGroups);
                    });
                }
            }
        }
        // Lane j of acc[mr][g]: row 4 mr + j / 4, token 4 g + j % 4.
        for (int mr = 0; mr < MR; ++mr) {
            for (int64_t g = 0; g < ng; ++g) {
                alignas(64) float lanes[kX4Lanes];
                _mm512_store_ps(lanes, acc[mr * kMaxGroups + g]);
                for (int j = 0; j < kX4Lanes; ++j) {
                    const int row = 4 * mr + j / 4;
                    const int64_t tok = 4 * g + j % 4;
                    if (row < nr && tok < tb) Y[tok * ldy + row] = lanes[j];
                }
            }
        }
    }
};

}  // namespace simd
}  // namespace
