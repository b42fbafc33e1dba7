// kernels/simd/gemm_legacy.h — the 32-element block formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
// and IQ4_NL against Q8_0 / Q8_1 activations.
// Weights unpack to unsigned integers u (the stored quant, Q8_0 shifted by +128) and
// activations are prepared once per token block: the int8 values contiguous, each block's
// scale repeated over its eight int32 lanes, and the offset correction -off * sum(a) per
// lane (off = 8, 16, 128, 128 for Q4_0, Q5_0, Q8_0, IQ4_NL; Q4_1/Q5_1 carry their min instead, as m * s
// from the Q8_1 block). Per block and token:
//     dot = d * da * (sum(u * a) - off * sum(a))  [+ m * s]
// Here (Q8_0's products of 1-2 tokens, the decode path) every (row, token) is one chain of
// 8-lane FMAs over the blocks, the order of GGML's AVX vec_dot_q8_0 (and of llama.cpp's
// tinyBLAS Q8_0 kernel). Every other product takes the row lanes (gemm_legacy_rows16.h on
// AVX-512 up to 8 tokens, then gemm_legacy_x4.h; gemm_legacy_rows8.h on AVX2, 8 tokens at a
// time), with their own order.
// Must not touch: other weight families.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/intrinsics.h"
#include "kernels/simd/nibbles.h"
#include "tensor/blocks.h"

namespace {
namespace simd {

constexpr int kLegacyBlocks = kStep / 32;

// One token's step of 8 Q8_0 / Q8_1 blocks.
struct LActs {
    alignas(64) int8_t q[kStep];
    alignas(64) float d[kStep / 4];
    alignas(64) int32_t corr[kStep / 4];  // per lane: -off * the sum of its 4 values
    alignas(64) float s[kStep / 4];       // Q8_1's s in the block's first lane
};

inline float half_f(uint16_t h) { return _cvtsh_ss(h); }

// The block's min (Q4_1, Q5_1), 0 for the others.
template <class Block>
float min_of(const Block& b) {
    if constexpr (requires { b.m; }) return half_f(b.m);
    else return 0.0f;
}

inline void fill_lanes(float* lanes, float v) {
    for (int i = 0; i < 8; ++i) lanes[i] = v;
}

inline __m256i fifth_bits(const uint8_t* qh_bytes) {
    uint32_t qh;
    std::memcpy(&qh, qh_bytes, sizeof qh);
    // Byte i gets bit i of qh: spread each byte of qh over 8 bytes, then test one bit each.
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)),
                                               _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
                                                                  0x0303030303030303));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

struct Q4_0 {
    using Block = strata::BlockQ4_0;
    static constexpr int kOffset = 8;
    static constexpr bool kMin = false, kWide = false;
    static __m256i values(const Block& b) { return nibbles(b.qs); }
};
struct Q4_1 {
    using Block = strata::BlockQ4_1;
    static constexpr int kOffset = 0;
    static constexpr bool kMin = true, kWide = false;
    static __m256i values(const Block& b) { return nibbles(b.qs); }
};
struct Q5_0 {
    using Block = strata::BlockQ5_0;
    static constexpr int kOffset = 16;
    static constexpr bool kMin = false, kWide = false;
    static __m256i values(const Block& b) { return _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh)); }
};
struct Q5_1 {
    using Block = strata::BlockQ5_1;
    static constexpr int kOffset = 0;
    static constexpr bool kMin = true, kWide = false;
    static __m256i values(const Block& b) { return _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh)); }
};
struct Q8_0 {
    using Block = strata::BlockQ8_0;
    static constexpr int kOffset = 128;
    static constexpr bool kMin = false, kWide = true;  // u spans 0..255
    static __m256i values(const Block& b) {
        return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)), _mm256_set1_epi8(-128));
    }
};

struct IQ4NL {
    using Block = strata::BlockIQ4_NL;
    static constexpr int kOffset = 128;
    static constexpr bool kMin = false, kWide = true;  // u = table value + 128 spans 1..241
    static __m256i values(const Block& b) { return iq4_unsigned(nibbles(b.qs)); }
};

template <class V, class Type>
struct Legacy {
    using Act = std::conditional_t<Type::kMin, strata::BlockQ8_1, strata::BlockQ8_0>;

    struct Acts {
        const LActs* panel;
        int64_t steps;
        const LActs* step(int64_t t, int64_t s) const { return panel + t * steps + s; }
    };

    // Lane j of a block's int32 products covers its elements 4j..4j+3, and its correction
    // is -off times their sum, so every lane holds exactly sum(w * a) of its four elements
    // (the lanes, and so the float rounding, of llama.cpp's tinyBLAS Q8_0 kernel).
    static void prepare_block(const Act& a, LActs& p, int i) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs));
        _mm256_store_si256(reinterpret_cast<__m256i*>(p.q + 32 * i), q);
        const __m256i sums = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
        _mm256_store_si256(reinterpret_cast<__m256i*>(p.corr + 8 * i), _mm256_mullo_epi32(sums, _mm256_set1_epi32(-Type::kOffset)));
        fill_lanes(p.d + 8 * i, half_f(a.d));
        if constexpr (Type::kMin) p.s[8 * i] = half_f(a.s);
    }

    static Acts prepare(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        const int64_t ns = steps(k), nb = k / 32;
        auto* panel = static_cast<LActs*>(scratch(static_cast<size_t>(nt * ns) * sizeof(LActs)));
        for (int64_t t = 0; t < nt; ++t) {
            const Act* a = reinterpret_cast<const Act*>(x + t * ldx);
            for (int64_t s = 0; s < ns; ++s) {
                LActs& p = panel[t * ns + s];
                std::memset(&p, 0, sizeof p);
                for (int i = 0; i < kLegacyBlocks && s * kLegacyBlocks + i < nb; ++i)
                    prepare_block(a[s * kLegacyBlocks + i], p, i);
            }
        }
        return {panel, ns};
    }

    // Few tokens: each block unpacked in registers (256 bits, one block per vector) and
    // applied at once, one row after another (one sequential weight stream: see
    // gemm_kquant.h). The row lanes (gemm_legacy_rows16.h, gemm_legacy_rows8.h) take Q8_0's
    // products instead from kLaneTokens on, the other types' from 1: this path serves Q8_0's
    // 1-2 tokens.
    static constexpr int kFusedTokens = 8;  // as gemm_kquant.h: batched decode of up to 8 sessions
    static constexpr int kFusedRows = 1;
    static constexpr int kLaneTokens = 3;  // Q8_0 with up to 2 tokens keeps llama.cpp's rounding

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        for (int r = 0; r < NR; ++r) narrow_row<NT>(w + r * ldw, k, acts, t0, Y + r, ldy);
    }

    // One row at 256 bits, one FMA chain per token (and one for the mins): per block, its
    // unsigned values u and scale d against each token's prepared block.
    template <int NT>
    static void narrow_row(const uint8_t* w, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        const auto* row = reinterpret_cast<const typename Type::Block*>(w);
        // Q4_1/Q5_1's min terms in their own sums: two FMA chains instead of one.
        __m256 sum[NT], msum[NT];
        for (int t = 0; t < NT; ++t) sum[t] = msum[t] = _mm256_setzero_ps();
        for (int64_t b = 0; b < k / 32; ++b) {
            const int64_t s = b / kLegacyBlocks, i = b % kLegacyBlocks;
            const __m256i u = Type::values(row[b]);
            const __m256 d = _mm256_set1_ps(half_f(row[b].d));
            for (int t = 0; t < NT; ++t) {
                const LActs* a = acts.step(t0 + t, s);
                const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(a->q + 32 * i));
                const __m256i corr = _mm256_load_si256(reinterpret_cast<const __m256i*>(a->corr + 8 * i));
                const __m256 da = _mm256_load_ps(a->d + 8 * i);
                const __m256i dot = V::template dot_u8s8_256<Type::kWide>(u, q, corr);
                sum[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(d, da), sum[t]);
                if constexpr (Type::kMin)
                    msum[t] = _mm256_fmadd_ps(_mm256_set1_ps(min_of(row[b])), _mm256_load_ps(a->s + 8 * i), msum[t]);
            }
        }
        for (int t = 0; t < NT; ++t) Y[t * ldy] = hsum256(Type::kMin ? _mm256_add_ps(sum[t], msum[t]) : sum[t]);
    }
};

}  // namespace simd
}  // namespace
