// kernels/simd/gemm_legacy_x4_avx512.h — AVX-512 only: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL products
// over many tokens in the 4 rows x 4 tokens lane layout of gemm_x4_driver.h. Per 4 k positions
// one vpdpbusd (unsigned weights u, signed activations; the accumulator starts at each
// lane token's -off * sum(a) of the block); per block of 32 the float scales (and Q4_1 /
// Q5_1's m * s), once per 16 (row, token) pairs.
// Not llama.cpp's summation order (its tinyBLAS keeps 8 float lanes per pair and block,
// at four times the float work): prefill results differ from it in the last bits, while
// Q8_0's 1-2 tokens (gemm_legacy.h's fused path, used here too) keep it. Fewer tokens
// take the 16-row lanes (gemm_routes.h).
// Must not touch: other weight families.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_legacy.h"
#include "kernels/simd/gemm_legacy_rows16_avx512.h"
#include "kernels/simd/gemm_x4_driver.h"

namespace {
namespace simd {

// One row group's step of 8 blocks, replicated for the lanes.
struct X4LWeights {
    alignas(64) uint8_t u[64][64];  // per k4: lanes j hold row j / 4's 4 values
    alignas(64) float d[8][16];     // per block: lane j holds row j / 4's d
    alignas(64) float m[8][16];     // per block: lane j holds row j / 4's m (Q4_1, Q5_1)
};

// One token group's step of 8 blocks.
struct X4LActs {
    alignas(64) int8_t q[64][16];    // per k4: dword t holds token t's 4 values
    alignas(64) int32_t corr[8][4];  // per block: token t's -off * sum(a)
    alignas(64) float d[8][4];       // per block: token t's d
    alignas(64) float s[8][4];       // per block: token t's s (Q8_1)
};

template <class V, class Type>
struct LegacyX4 {
    using Weights = X4LWeights;
    using Acts = X4LActs;
    using Act = typename LegacyRows16<V, Type>::Act;

    // Blocks of step s that exist in a row of k.
    static int blocks_in(int64_t k, int64_t s) { return static_cast<int>(min64(kLegacyBlocks, k / 32 - s * kLegacyBlocks)); }

    static void unpack(const uint8_t* w, size_t ldw, int n, int64_t k, int64_t s, Weights& o) {
        using Block = typename Type::Block;
        const int nb = blocks_in(k, s);
        for (int b = 0; b < kLegacyBlocks; ++b) {
            __m256i u[4];
            float d[4] = {}, m[4] = {};
            for (int r = 0; r < 4; ++r) {
                if (r >= n || b >= nb) {
                    u[r] = _mm256_setzero_si256();
                    continue;
                }
                const Block& x = reinterpret_cast<const Block*>(w + r * ldw)[s * kLegacyBlocks + b];
                u[r] = Type::values(x);
                d[r] = half_f(x.d);
                m[r] = min_of(x);
            }
            replicate_rows(u, o.u + 8 * b);
            _mm512_store_ps(o.d[b], by_row(d));
            if constexpr (Type::kMin) _mm512_store_ps(o.m[b], by_row(m));
        }
    }

    static void interleave(const uint8_t* x, size_t ldx, int n, int64_t k, int64_t s, Acts& o) {
        const int nb = blocks_in(k, s);
        std::memset(o.corr, 0, sizeof o.corr);
        std::memset(o.d, 0, sizeof o.d);
        std::memset(o.s, 0, sizeof o.s);
        for (int b = 0; b < kLegacyBlocks; b += 2) {  // two blocks: 16 k4 positions
            __m512i tok[4];
            for (int t = 0; t < 4; ++t) {
                tok[t] = _mm512_setzero_si512();
                if (t >= n) continue;
                const Act* a = reinterpret_cast<const Act*>(x + t * ldx) + s * kLegacyBlocks + b;
                __m256i q[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
                for (int i = 0; i < 2 && b + i < nb; ++i) {
                    q[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].qs));
                    o.corr[b + i][t] = -Type::kOffset * sum_i8(q[i]);
                    o.d[b + i][t] = half_f(a[i].d);
                    if constexpr (Type::kMin) o.s[b + i][t] = half_f(a[i].s);
                }
                tok[t] = join(q[0], q[1]);
            }
            interleave_tokens(tok, o.q + 8 * b);
        }
    }

    static int sum_i8(__m256i q) {
        const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
        __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        t = _mm_add_epi32(t, _mm_unpackhi_epi64(t, t));
        t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 1));
        return _mm_cvtsi128_si32(t);
    }

    // Integer sums per block and float accumulators are both in registers, so row groups
    // go two at a time.
    template <int MR, int MT>
    static void step(const Weights* w, const Acts* const* a, __m512* acc, int64_t stride) {
        if constexpr (MR > 2) {
            step<2, MT>(w, a, acc, stride);
            step<MR - 2, MT>(w + 2, a, acc + 2 * stride, stride);
        } else {
            __m512 out[MR][MT];
            for (int mr = 0; mr < MR; ++mr)
                for (int mt = 0; mt < MT; ++mt) out[mr][mt] = acc[mr * stride + mt];
            for (int b = 0; b < kLegacyBlocks; ++b) {
                __m512i sum[MR][MT];
                for (int mt = 0; mt < MT; ++mt) {
                    const __m512i corr = by_token(a[mt]->corr[b]);
                    for (int mr = 0; mr < MR; ++mr) sum[mr][mt] = corr;
                }
                for (int q = 8 * b; q < 8 * b + 8; ++q) {
                    __m512i u[MR];
                    for (int mr = 0; mr < MR; ++mr) u[mr] = _mm512_load_si512(w[mr].u[q]);
                    for (int mt = 0; mt < MT; ++mt) {
                        const __m512i v = by_token(a[mt]->q[q]);
                        for (int mr = 0; mr < MR; ++mr) sum[mr][mt] = _mm512_dpbusd_epi32(sum[mr][mt], u[mr], v);
                    }
                }
                for (int mt = 0; mt < MT; ++mt) {
                    const __m512 da = by_token(a[mt]->d[b]);
                    for (int mr = 0; mr < MR; ++mr) {
                        const __m512 dd = _mm512_mul_ps(_mm512_load_ps(w[mr].d[b]), da);
                        out[mr][mt] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[mr][mt]), dd, out[mr][mt]);
                        if constexpr (Type::kMin)
                            out[mr][mt] = _mm512_fmadd_ps(_mm512_load_ps(w[mr].m[b]), by_token(a[mt]->s[b]), out[mr][mt]);
                    }
                }
            }
            for (int mr = 0; mr < MR; ++mr)
                for (int mt = 0; mt < MT; ++mt) acc[mr * stride + mt] = out[mr][mt];
        }
    }
};

}  // namespace simd
}  // namespace
