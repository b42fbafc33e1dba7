// kernels/simd/gemm_kquant_x4.h — AVX-512 only: K-quant products over many tokens with
// 4 rows x 4 tokens in the 16 int32 lanes of each accumulator (lane j: row j / 4 of a
// row group, token j % 4 of a token group).
// Weights are unpacked once per token block into a lane-replicated form (each row's four
// weights at a k position fill the four lanes of its row), activations are interleaved
// once per call (four tokens' four values side by side, broadcast to the four row lanes).
// One maddubs + one vpdpwssd per 4 k positions then does 64 multiply-adds for 16
// (row, token) pairs with the group scale of each lane's row, and everything else — the
// group corrections against the activation bsums, the float scales — is one vector
// operation per 16 pairs and super-block instead of one per pair.
// Few tokens (the fused path) and the AVX2 variant use gemm_kquant.h's layout.
// Must not touch: other weight families.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_kquant.h"

namespace {
namespace simd {

constexpr int kX4Lanes = 16;
constexpr int kX4RowGroups = 4;    // row groups unpacked together (16 rows)
constexpr int kX4TokenGroups = 4;  // token groups per register tile (16 tokens)
constexpr int64_t kX4MaxGroups = 32;  // token groups per block (128 tokens)
// Interleaved activations of a token block: most of L2 (1 MB on Zen 4); measured best
// against 256 KB and 64 tokens (the acc array and unpacked weights stay in L1).
constexpr int64_t kX4ActBudget = 768 * 1024;

// One row group's super-block, replicated for the lanes.
struct X4Weights {
    alignas(64) uint8_t u[64][64];      // per k4: lanes j hold row j / 4's 4 weights
    alignas(64) int16_t scale[16][32];  // per 16-group: lane j holds (s, s) of row j / 4
    alignas(64) int32_t corr[8][16];    // per group pair p: lane j holds row j / 4's (c_2p, c_2p+1)
    alignas(64) float d[16], dc[16];    // lane j: row j / 4's d and dc
};

// One token group's super-block.
struct X4Acts {
    alignas(64) int8_t q[64][16];    // per k4: dword t holds token t's 4 values
    alignas(64) int32_t bsums[8][4];  // per group pair p: token t's (bsum_2p, bsum_2p+1)
    alignas(64) float d[4];
};

// Indices for vpermt2d / vpermt2w over [row 0 | row 1] and [row 2 | row 3]: element q
// (dword) or g (word) of each row, repeated over that row's lanes.
inline __m512i x4_dword_index(int q) {
    return _mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 8, 8, 8, 8, 16, 16, 16, 16, 24, 24, 24, 24), _mm512_set1_epi32(q));
}
inline __m512i x4_word_index(int g) {
    const __m512i rows = _mm512_setr_epi64(0, 0, 0x0010001000100010LL, 0x0010001000100010LL, 0x0020002000200020LL,
                                           0x0020002000200020LL, 0x0030003000300030LL, 0x0030003000300030LL);
    return _mm512_add_epi16(rows, _mm512_set1_epi16(static_cast<int16_t>(g)));
}

// [a | b] as one 512-bit vector.
inline __m512i join(__m256i a, __m256i b) { return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1); }

// Unpacks super-block s of n (1..4) rows into the lane-replicated form; missing rows are zero.
template <class Type>
void x4_unpack(const uint8_t* w, size_t ldw, int n, int64_t s, X4Weights& o) {
    using Block = typename Type::Block;
    __m256i u[4][8], s16[4], corr[4];
    float d[4] = {}, dc[4] = {};
    for (int r = 0; r < 4; ++r) {
        if (r >= n) {
            for (int c = 0; c < 8; ++c) u[r][c] = _mm256_setzero_si256();
            s16[r] = corr[r] = _mm256_setzero_si256();
            continue;
        }
        const Block& x = reinterpret_cast<const Block*>(w + r * ldw)[s];
        const typename Type::Prep p = Type::prep(x);
        for_chunks<8>([&](auto c) { u[r][decltype(c)::value] = Type::template u<decltype(c)::value>(x, p); });
        s16[r] = Type::scales16(p);
        corr[r] = Type::corr(p);
        d[r] = Type::d(x);
        dc[r] = Type::dc(x);
    }
    for (int c = 0; c < 8; ++c) {
        const __m512i ab = join(u[0][c], u[1][c]), cd = join(u[2][c], u[3][c]);
        for (int q = 0; q < 8; ++q) _mm512_store_si512(o.u[8 * c + q], _mm512_permutex2var_epi32(ab, x4_dword_index(q), cd));
    }
    const __m512i sab = join(s16[0], s16[1]), scd = join(s16[2], s16[3]);
    for (int g = 0; g < 16; ++g) _mm512_store_si512(o.scale[g], _mm512_permutex2var_epi16(sab, x4_word_index(g), scd));
    const __m512i cab = join(corr[0], corr[1]), ccd = join(corr[2], corr[3]);
    for (int p = 0; p < 8; ++p) _mm512_store_si512(o.corr[p], _mm512_permutex2var_epi32(cab, x4_dword_index(p), ccd));
    const __m512i rows = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    _mm512_store_ps(o.d, _mm512_permutexvar_ps(rows, _mm512_castps128_ps512(_mm_loadu_ps(d))));
    _mm512_store_ps(o.dc, _mm512_permutexvar_ps(rows, _mm512_castps128_ps512(_mm_loadu_ps(dc))));
}

// Interleaves n (1..4) tokens' super-block s; missing tokens are zero.
inline void x4_interleave(const uint8_t* x, size_t ldx, int n, int64_t s, X4Acts& o) {
    const strata::BlockQ8_K* a[4];
    for (int t = 0; t < 4; ++t) a[t] = t < n ? reinterpret_cast<const strata::BlockQ8_K*>(x + t * ldx) + s : nullptr;
    auto row = [&](int t, int off) {
        return a[t] ? _mm512_loadu_si512(a[t]->qs + off) : _mm512_setzero_si512();
    };
    for (int off = 0; off < 256; off += 64) {  // 16 k4 positions at a time: a 4 x 4 dword transpose per lane
        const __m512i t0 = row(0, off), t1 = row(1, off), t2 = row(2, off), t3 = row(3, off);
        const __m512i lo01 = _mm512_unpacklo_epi32(t0, t1), hi01 = _mm512_unpackhi_epi32(t0, t1);
        const __m512i lo23 = _mm512_unpacklo_epi32(t2, t3), hi23 = _mm512_unpackhi_epi32(t2, t3);
        // k4 = 4L + i of this slice sits in 128-bit lane L of by_k4[i].
        const __m512i by_k4[4] = {_mm512_unpacklo_epi64(lo01, lo23), _mm512_unpackhi_epi64(lo01, lo23),
                                  _mm512_unpacklo_epi64(hi01, hi23), _mm512_unpackhi_epi64(hi01, hi23)};
        for (int i = 0; i < 4; ++i)
            for (int l = 0; l < 4; ++l)
                std::memcpy(o.q[off / 4 + 4 * l + i], reinterpret_cast<const char*>(&by_k4[i]) + 16 * l, 16);
    }
    for (int t = 0; t < 4; ++t) {
        o.d[t] = a[t] ? a[t]->d : 0.0f;
        for (int p = 0; p < 8; ++p) {
            int32_t pair = 0;
            if (a[t]) std::memcpy(&pair, a[t]->bsums + 2 * p, sizeof pair);
            o.bsums[p][t] = pair;
        }
    }
}

// Adds super-block s of MR row groups x MT token groups into acc[mr * stride + mt].
template <class Type, int MR, int MT>
void x4_step(const X4Weights* w, const X4Acts* const* a, __m512* acc, int64_t stride) {
    __m512i sum[MR][MT];
    for (int mr = 0; mr < MR; ++mr)
        for (int mt = 0; mt < MT; ++mt) sum[mr][mt] = _mm512_setzero_si512();
    for (int g = 0; g < 16; ++g) {
        __m512i sc[MR];
        for (int mr = 0; mr < MR; ++mr) sc[mr] = _mm512_load_si512(w[mr].scale[g]);
        for (int q = 4 * g; q < 4 * g + 4; ++q) {
            __m512i u[MR];
            for (int mr = 0; mr < MR; ++mr) u[mr] = _mm512_load_si512(w[mr].u[q]);
            for (int mt = 0; mt < MT; ++mt) {
                const __m512i v = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(a[mt]->q[q])));
                for (int mr = 0; mr < MR; ++mr)
                    sum[mr][mt] = _mm512_dpwssd_epi32(sum[mr][mt], _mm512_maddubs_epi16(u[mr], v), sc[mr]);
            }
        }
    }
    for (int mt = 0; mt < MT; ++mt) {
        const __m512 da = _mm512_broadcast_f32x4(_mm_load_ps(a[mt]->d));
        for (int mr = 0; mr < MR; ++mr) {
            __m512i corr = _mm512_setzero_si512();
            for (int p = 0; p < 8; ++p)
                corr = _mm512_dpwssd_epi32(corr, _mm512_load_si512(w[mr].corr[p]),
                                           _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(a[mt]->bsums[p]))));
            __m512& out = acc[mr * stride + mt];
            const __m512 dd = _mm512_mul_ps(_mm512_load_ps(w[mr].d), da);
            if constexpr (Type::kOffset) {
                out = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sum[mr][mt], corr)), dd, out);
            } else {
                out = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[mr][mt]), dd, out);
                out = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(corr), _mm512_mul_ps(_mm512_load_ps(w[mr].dc), da), out);
            }
        }
    }
}

template <class V, class Type>
struct KQuantX4 {
    static constexpr int64_t kMaxGroups = kX4MaxGroups;

    static void run(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx,
                    int64_t nt, float* Y, size_t ldy) {
        using Small = KQuant<V, Type>;
        if (nt <= Small::kFusedTokens) return Gemm<V, Small>::run(k, W, ldw, r0, r1, X, ldx, nt, Y, ldy);
        const int64_t ns = k / 256;
        // Token blocks whose interleaved activations stay within the L2 budget.
        int64_t groups = min64(kMaxGroups, kX4ActBudget / (ns * static_cast<int64_t>(sizeof(X4Acts))));
        if (groups < 1) groups = 1;
        auto* w = static_cast<const uint8_t*>(W);
        auto* x = static_cast<const uint8_t*>(X);
        for (int64_t t0 = 0; t0 < nt; t0 += 4 * groups) {
            const int64_t tb = min64(4 * groups, nt - t0), ng = (tb + 3) / 4;
            auto* panel = static_cast<X4Acts*>(scratch(static_cast<size_t>(ng * ns) * sizeof(X4Acts)));
            for (int64_t g = 0; g < ng; ++g)
                for (int64_t s = 0; s < ns; ++s)
                    x4_interleave(x + (t0 + 4 * g) * ldx, ldx, static_cast<int>(min64(4, tb - 4 * g)), s, panel[g * ns + s]);
            for (int64_t r = r0; r < r1; r += 4 * kX4RowGroups) {
                const int64_t nr = min64(4 * kX4RowGroups, r1 - r);
                with_count<kX4RowGroups>(static_cast<int>((nr + 3) / 4), [&](auto mr) {
                    row_panel<decltype(mr)::value>(w + r * ldw, ldw, static_cast<int>(nr), ns, panel, ng, tb,
                                                   Y + t0 * ldy + r, ldy);
                });
            }
        }
    }

    // nr rows (in MR groups of 4) against ng token groups of the panel.
    template <int MR>
    static void row_panel(const uint8_t* w, size_t ldw, int nr, int64_t ns, const X4Acts* panel, int64_t ng, int64_t tb,
                          float* Y, size_t ldy) {
        alignas(64) __m512 acc[MR * kMaxGroups];
        for (int mr = 0; mr < MR; ++mr)
            for (int64_t g = 0; g < ng; ++g) acc[mr * kMaxGroups + g] = _mm512_setzero_ps();
        alignas(64) X4Weights wb[MR];
        const int64_t full = ng / kX4TokenGroups * kX4TokenGroups;
        for (int64_t s = 0; s < ns; ++s) {
            for (int mr = 0; mr < MR; ++mr) x4_unpack<Type>(w + 4 * mr * ldw, ldw, nr - 4 * mr < 4 ? nr - 4 * mr : 4, s, wb[mr]);
            for (int64_t g = 0; g < ng; g += kX4TokenGroups) {
                const X4Acts* a[kX4TokenGroups];
                for (int i = 0; i < kX4TokenGroups; ++i) a[i] = panel + min64(g + i, ng - 1) * ns + s;
                if (g < full) {
                    x4_step<Type, MR, kX4TokenGroups>(wb, a, acc + g, kMaxGroups);
                } else {
                    with_count<kX4TokenGroups - 1>(static_cast<int>(ng - g), [&](auto mt) {
                        x4_step<Type, MR, decltype(mt)::value>(wb, a, acc + g, kMaxGroups);
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
