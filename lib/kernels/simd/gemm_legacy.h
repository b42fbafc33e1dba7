// kernels/simd/gemm_legacy.h — the 32-element block formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
// and IQ4_NL against Q8_0 / Q8_1 activations: their unpacking to unsigned integers u (the
// stored quant, Q8_0 shifted by +128; Q4_1/Q5_1 carry their min as m * s from the Q8_1
// block), which the row lanes share, so that per block and token
//     dot = d * da * (sum(u * a) - off * sum(a))  [+ m * s]
// (off = 8, 16, 128, 128 for Q4_0, Q5_0, Q8_0, IQ4_NL).
// Here the activations' copy that the products read (Q8Lane), and Q8_0's products of 1-2
// tokens, the decode path: every (row, token) is two chains of 8-lane FMAs over the blocks
// (even and odd), each lane the exact integer sum of w * a over 4 elements. Every other
// product takes the row lanes
// (gemm_legacy_rows16_avx512.h on AVX-512 up to 8 tokens, the other types' 1-2 tokens a row at a
// time in gemm_legacy_row_avx512.h, then gemm_legacy_x4_avx512.h; gemm_legacy_rows8_avx2.h on AVX2, 8 tokens at
// a time), with their own order.
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

inline float half_f(uint16_t h) { return _cvtsh_ss(h); }

// The block's min (Q4_1, Q5_1), 0 for the others.
template <class Block>
float min_of(const Block& b) {
    if constexpr (requires { b.m; }) return half_f(b.m);
    else return 0.0f;
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

// A token's block as the products read it (Legacy::prepare): the quants, the scale as a
// float, -off times the quants' sum, and Q8_1's s (Q4_1, Q5_1).
struct Q8Lane {
    int8_t q[32];
    float d;
    int32_t off;
    float s;
};

template <class V, class Type>
struct Legacy {
    using Act = std::conditional_t<Type::kMin, strata::BlockQ8_1, strata::BlockQ8_0>;

    // The activations as Q8Lanes, made once per product: token t's block b at
    // lanes[b * nt + t]. They were read in place before (see narrow_row), and once copied
    // into a panel of 128 bytes per 34-byte block (each block's scale and correction
    // repeated over the 8 lanes), which for a row of 8192 (a 1B model's ffn_down) filled
    // Zen 4's L1 beside the weight stream (a third of the speed: tests/bench/HISTORY.md,
    // "Q8_0 activations' copy").
    struct Acts {
        const Q8Lane* lanes = nullptr;
        int64_t nt = 0;
        const Q8Lane& at(int64_t t, int64_t b) const { return lanes[b * nt + t]; }
    };
    static int64_t act_bytes(int64_t k) { return k / 32 * static_cast<int64_t>(sizeof(Q8Lane)); }
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) { return Acts{prepare_lanes(x, ldx, nt, k), nt}; }

    // A token's block as a Q8Lane.
    static Q8Lane lane(const Act& a) {
        Q8Lane o;
        std::memcpy(o.q, a.qs, sizeof o.q);
        o.d = half_f(a.d);
        int32_t sum = 0;
        for (int8_t q : a.qs) sum += q;
        o.off = -Type::kOffset * sum;
        o.s = s_of(a);
        return o;
    }

    // Q8_1's s as a float (Q4_1, Q5_1), else 0.
    static float s_of(const Act& a) {
        if constexpr (Type::kMin) return half_f(a.s);
        else return 0.0f;
    }

    // nt tokens' blocks, token t's block b at [b * nt + t], in per-thread scratch.
    static const Q8Lane* prepare_lanes(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        const int64_t nb = k / 32;
        auto* lanes = static_cast<Q8Lane*>(scratch(static_cast<size_t>(nb * nt) * sizeof(Q8Lane)));
        for (int64_t t = 0; t < nt; ++t) {
            const Act* a = reinterpret_cast<const Act*>(x + t * ldx);
            for (int64_t b = 0; b < nb; ++b) lanes[b * nt + t] = lane(a[b]);
        }
        return lanes;
    }

    // Few tokens: one row after another (one sequential weight stream: see gemm_kquant.h).
    // The row lanes (gemm_legacy_rows16_avx512.h, gemm_legacy_rows8_avx2.h) take Q8_0's products from
    // kLaneTokens on and the other types' from 1, so this path serves Q8_0's 1-2 tokens.
    static constexpr int kFusedTokens = 8;  // as gemm_kquant.h: batched decode of up to 8 sessions
    static constexpr int kFusedRows = 1;
    static constexpr int kLaneTokens = 3;

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        static_assert(std::is_same_v<Type, Q8_0>, "only Q8_0's 1-2 tokens take this path");
        for (int r = 0; r < NR; ++r) narrow_row<NT>(w + r * ldw, k, acts, t0, Y + r, ldy);
    }

    // Per int32 lane, the exact sum of w * a over its 4 elements, for signed weights w and
    // activations |a| <= 127: |w| against a with w's sign, one vpdpbusd when compiled for
    // AVX-512, else intrinsics.h's signed_pairs256 and a vpmaddwd. (The lanes could start
    // from -128 times the activations' sum against u = w + 128, one instruction fewer, but
    // then they hold 128 * |a| where w * a is small, and the float sums round on that.)
    static __m256i lane_dots(__m256i w, const Q8Lane& lane) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lane.q));
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
        return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(w), _mm256_sign_epi8(a, w));
#else
        return _mm256_madd_epi16(signed_pairs256(w, a), _mm256_set1_epi16(1));
#endif
    }

    // One row at 256 bits, two FMA chains per token (even and odd blocks): per block, the
    // lane dots against each token's Q8Lane, converted, times d * da. Until 2026-11-29 this
    // was one chain over the activations read in place, the order of GGML's AVX
    // vec_dot_q8_0, so that one or two tokens reproduced llama.cpp's products bit for bit;
    // that bound the loop to the FMA's latency and the per-block conversion of the
    // activations' F16 scale; two chains read faster in L2 and from DRAM, and the results
    // move in the last bits. Rows past kL1Acts bytes of activations (intrinsics.h; one token:
    // k of 8960 or more, an 8B model's ffn_down) prefetch as gemm_float.h's vec_dot does
    // (tests/bench/HISTORY.md, "Q8_0 narrow_row: two chains, long rows").
    template <int NT>
    static void narrow_row(const uint8_t* w, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        const auto* row = reinterpret_cast<const strata::BlockQ8_0*>(w);
        __m256 even[NT], odd[NT];
        for (int t = 0; t < NT; ++t) even[t] = odd[t] = _mm256_setzero_ps();
        const int64_t blocks = k / 32;
        const bool long_row = NT * act_bytes(k) > kL1Acts;
        int64_t b = 0;
        for (; b + 2 <= blocks; b += 2) {
            if (long_row) {
                prefetch_bytes<2>(reinterpret_cast<const char*>(row + b) + kFarAhead, 2 * sizeof *row);
                prefetch_bytes(reinterpret_cast<const char*>(row + b) + kNearAhead, 2 * sizeof *row);
            }
            add_block<NT>(row[b], acts, t0, b, even);
            add_block<NT>(row[b + 1], acts, t0, b + 1, odd);
        }
        if (b < blocks) add_block<NT>(row[b], acts, t0, b, even);
        for (int t = 0; t < NT; ++t) Y[t * ldy] = hsum256(_mm256_add_ps(even[t], odd[t]));
    }

    // Block b of a row against each token's Q8Lane b, into that token's sum.
    template <int NT>
    static void add_block(const strata::BlockQ8_0& x, const Acts& acts, int64_t t0, int64_t b, __m256 (&sum)[NT]) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
        const float d = half_f(x.d);
        for (int t = 0; t < NT; ++t) {
            const Q8Lane& a = acts.at(t0 + t, b);
            sum[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lane_dots(q, a)), _mm256_set1_ps(d * a.d), sum[t]);
        }
    }
};

}  // namespace simd
}  // namespace
