// kernels/simd/gemm_kquant_x4_avx512.h — AVX-512 only: Q2_K..Q6_K, IQ4_XS products over many tokens in
// the 4 rows x 4 tokens lane layout of gemm_x4_driver.h. Per 4 k positions one vpdpbusd into a
// group sum; per group (16 or 32 elements) one vpmulld by each lane's row scale; per
// super-block the group corrections against the activation bsums and the float scales —
// all once per 16 (row, token) pairs.
// Fewer tokens take gemm_kquant_quads_avx512.h's products (gemm_routes.h).
// Must not touch: other weight families.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/gemm_kquant_quads_avx512.h"
#include "kernels/simd/gemm_x4_driver.h"

namespace {
namespace simd {

// One row group's super-block, replicated for the lanes.
struct X4KWeights {
    alignas(64) uint8_t u[64][64];      // per k4: lanes j hold row j / 4's 4 weights
    alignas(64) int32_t scale[16][16];  // per scale group: lane j holds row j / 4's scale
    alignas(64) int32_t corr[8][16];    // per group pair p: lane j holds row j / 4's (c_2p, c_2p+1)
    alignas(64) float d[16], dc[16];    // lane j: row j / 4's d and dc
};

// One token group's super-block.
struct X4KActs {
    alignas(64) int8_t q[64][16];    // per k4: dword t holds token t's 4 values
    alignas(64) int32_t bsums[8][4];  // per group pair p: token t's (bsum_2p, bsum_2p+1)
    alignas(64) float d[4];
};

// Index for vpermt2w over [row 0 | row 1] and [row 2 | row 3] (16 words each): in the
// low 16 words, word g of each row repeated four times.
inline __m512i x4_word_index(int g) {
    const __m512i rows = _mm512_setr_epi64(0, 0x0010001000100010LL, 0x0020002000200020LL, 0x0030003000300030LL, 0, 0, 0, 0);
    return _mm512_add_epi16(rows, _mm512_set1_epi16(static_cast<int16_t>(g)));
}

template <class V, class Type>
struct KQuantX4 {
    using Weights = X4KWeights;
    using Acts = X4KActs;
    static constexpr int kGroups = 256 / Type::kGroup;   // scale groups per super-block
    static constexpr int kGroupK4 = Type::kGroup / 4;    // k4 positions per group

    static void unpack(const uint8_t* w, size_t ldw, int n, int64_t, int64_t s, Weights& o) {
        using Block = typename Type::Block;
        __m256i u[8][4], s16[4], corr[4];
        float d[4] = {}, dc[4] = {};
        for (int r = 0; r < 4; ++r) {
            if (r >= n) {
                for (int c = 0; c < 8; ++c) u[c][r] = _mm256_setzero_si256();
                s16[r] = corr[r] = _mm256_setzero_si256();
                continue;
            }
            const Block& x = reinterpret_cast<const Block*>(w + r * ldw)[s];
            const typename Type::Prep p = Type::prep(x);
            for_chunks<8>([&](auto c) { u[decltype(c)::value][r] = Type::template u<decltype(c)::value>(x, p); });
            s16[r] = Type::scales16(p);
            corr[r] = Type::corr(p);
            d[r] = Type::d(x);
            dc[r] = Type::dc(x);
        }
        for (int c = 0; c < 8; ++c) replicate_rows(u[c], o.u + 8 * c);
        const __m512i sab = join(s16[0], s16[1]), scd = join(s16[2], s16[3]);
        for (int g = 0; g < kGroups; ++g) {
            const __m512i words = _mm512_permutex2var_epi16(sab, x4_word_index(g * Type::kGroup / 16), scd);
            _mm512_store_si512(o.scale[g], _mm512_cvtepi16_epi32(_mm512_castsi512_si256(words)));
        }
        const __m512i cab = join(corr[0], corr[1]), ccd = join(corr[2], corr[3]);
        for (int p = 0; p < 8; ++p) _mm512_store_si512(o.corr[p], _mm512_permutex2var_epi32(cab, x4_dword_index(p), ccd));
        _mm512_store_ps(o.d, by_row(d));
        _mm512_store_ps(o.dc, by_row(dc));
    }

    static void interleave(const uint8_t* x, size_t ldx, int n, int64_t, int64_t s, Acts& o) {
        const strata::BlockQ8_K* a[4];
        for (int t = 0; t < 4; ++t) a[t] = t < n ? reinterpret_cast<const strata::BlockQ8_K*>(x + t * ldx) + s : nullptr;
        for (int off = 0; off < 256; off += 64) {
            __m512i tok[4];
            for (int t = 0; t < 4; ++t) tok[t] = a[t] ? _mm512_loadu_si512(a[t]->qs + off) : _mm512_setzero_si512();
            interleave_tokens(tok, o.q + off / 4);
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

    // Group sums and totals are both in registers, so row groups go two at a time.
    template <int MR, int MT>
    static void step(const Weights* w, const Acts* const* a, __m512* acc, int64_t stride) {
        if constexpr (MR > 2) {
            step<2, MT>(w, a, acc, stride);
            step<MR - 2, MT>(w + 2, a, acc + 2 * stride, stride);
        } else {
            __m512i sum[MR][MT];
            for (int mr = 0; mr < MR; ++mr)
                for (int mt = 0; mt < MT; ++mt) sum[mr][mt] = _mm512_setzero_si512();
            for (int g = 0; g < kGroups; ++g) {
                __m512i group[MR][MT];
                for (int mr = 0; mr < MR; ++mr)
                    for (int mt = 0; mt < MT; ++mt) group[mr][mt] = _mm512_setzero_si512();
                for (int q = kGroupK4 * g; q < kGroupK4 * (g + 1); ++q) {
                    __m512i u[MR];
                    for (int mr = 0; mr < MR; ++mr) u[mr] = _mm512_load_si512(w[mr].u[q]);
                    for (int mt = 0; mt < MT; ++mt) {
                        const __m512i v = by_token(a[mt]->q[q]);
                        for (int mr = 0; mr < MR; ++mr) group[mr][mt] = _mm512_dpbusd_epi32(group[mr][mt], u[mr], v);
                    }
                }
                for (int mr = 0; mr < MR; ++mr) {
                    const __m512i sc = _mm512_load_si512(w[mr].scale[g]);
                    for (int mt = 0; mt < MT; ++mt)
                        sum[mr][mt] = _mm512_add_epi32(sum[mr][mt], _mm512_mullo_epi32(group[mr][mt], sc));
                }
            }
            fold(w, a, sum, acc, stride);
        }
    }

    // Adds the super-block's integer sums, less the group corrections, to the float totals.
    template <int MR, int MT>
    static void fold(const Weights* w, const Acts* const* a, const __m512i (&sum)[MR][MT], __m512* acc, int64_t stride) {
        for (int mt = 0; mt < MT; ++mt) {
            const __m512 da = by_token(a[mt]->d);
            for (int mr = 0; mr < MR; ++mr) {
                __m512i corr = _mm512_setzero_si512();
                for (int p = 0; p < 8; ++p) corr = _mm512_dpwssd_epi32(corr, _mm512_load_si512(w[mr].corr[p]), by_token(a[mt]->bsums[p]));
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
};

}  // namespace simd
}  // namespace
