// kernels/simd/gemm_legacy.h — the 32-element block formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
// and IQ4_NL against Q8_0 / Q8_1 activations: their unpacking to unsigned integers u (the
// stored quant, Q8_0 shifted by +128; Q4_1/Q5_1 carry their min as m * s from the Q8_1
// block), which the row lanes share, so that per block and token
//     dot = d * da * (sum(u * a) - off * sum(a))  [+ m * s]
// (off = 8, 16, 128, 128 for Q4_0, Q5_0, Q8_0, IQ4_NL).
// Here only Q8_0's products of 1-2 tokens, the decode path: every (row, token) is one chain
// of 8-lane FMAs over the blocks, each lane the exact integer sum of w * a over 4 elements,
// the order of GGML's AVX vec_dot_q8_0 (and of llama.cpp's tinyBLAS Q8_0 kernel), with the
// activation blocks read where they are. Every other product takes the row lanes
// (gemm_legacy_rows16.h on AVX-512 up to 8 tokens, the other types' 1-2 tokens a row at a
// time in gemm_legacy_row.h, then gemm_legacy_x4.h; gemm_legacy_rows8.h on AVX2, 8 tokens at
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

template <class V, class Type>
struct Legacy {
    using Act = std::conditional_t<Type::kMin, strata::BlockQ8_1, strata::BlockQ8_0>;

    // The activation rows as they come. They were copied into a panel of 128 bytes per
    // 34-byte block (each block's scale and correction repeated over the 8 lanes), which for
    // a row of 8192 (a 1B model's ffn_down) filled Zen 4's L1 beside the weight stream: one
    // token of kernel_bench --type Q8_0 --shape 2048x8192 read 7.5-8.9 GB/s against 23-27
    // for 8192x2048 (see narrow_row).
    struct Acts {
        const uint8_t* x;
        size_t ldx;
        const Act* row(int64_t t) const { return reinterpret_cast<const Act*>(x + t * ldx); }
    };
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t, int64_t) { return {x, ldx}; }

    // Few tokens: one row after another (one sequential weight stream: see gemm_kquant.h).
    // The row lanes (gemm_legacy_rows16.h, gemm_legacy_rows8.h) take Q8_0's products from
    // kLaneTokens on and the other types' from 1, so this path serves Q8_0's 1-2 tokens.
    static constexpr int kFusedTokens = 8;  // as gemm_kquant.h: batched decode of up to 8 sessions
    static constexpr int kFusedRows = 1;
    static constexpr int kLaneTokens = 3;  // Q8_0 with up to 2 tokens keeps llama.cpp's rounding

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        static_assert(std::is_same_v<Type, Q8_0>, "only Q8_0's 1-2 tokens take this path");
        for (int r = 0; r < NR; ++r) narrow_row<NT>(w + r * ldw, k, acts, t0, Y + r, ldy);
    }

    // Per int32 lane, the exact sum of w * a over its 4 elements, for signed weights w and
    // activations |a| <= 127: |w| against a with w's sign, one vpdpbusd when compiled for
    // AVX-512, else intrinsics.h's signed_pairs256 and a vpmaddwd.
    static __m256i lane_dots(__m256i w, __m256i a) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
        return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(w), _mm256_sign_epi8(a, w));
#else
        return _mm256_madd_epi16(signed_pairs256(w, a), _mm256_set1_epi16(1));
#endif
    }

    // One row at 256 bits, one FMA chain per token: per block, the lane dots against each
    // token's block, converted, times d * da. With the activations read in place (three
    // alternating runs of kernel_bench --type Q8_0 --nt 1, GB/s): 2048x8192, 1 thread,
    // 7.4-8.6 -> 17.5-25.8 (AVX2 6.8-7.7 -> 15.3-25.3); 2 threads 12.5-15.5 -> 31.2-36.1
    // (AVX2 12.8-15.0 -> 18.6-28.1); 4096x14336 (8B), 2 threads, 12.5-15.9 -> 29.5-34.2
    // (AVX2 11.9-14.8 -> 21.0-27.3); in cache (4096x2048 --cache-mb 0) the same as before.
    // Rows past kL1Acts bytes of activations (intrinsics.h; one token: k above 11563, an 8B
    // model's ffn_down) prefetch as gemm_float.h's vec_dot does: 4096x14336, two alternating
    // runs, GB/s, 1 thread 18.5-18.9 -> 26.7-28.0 (AVX2 15.4-16.8 -> 19.7-28.0), 2 threads
    // 28.6-32.2 -> 36.6-37.7 (AVX2 29.1-29.3 -> 37.8-38.5); 14336x4096 the same.
    template <int NT>
    static void narrow_row(const uint8_t* w, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        const auto* row = reinterpret_cast<const strata::BlockQ8_0*>(w);
        const Act* a[NT];
        __m256 sum[NT];
        for (int t = 0; t < NT; ++t) {
            a[t] = acts.row(t0 + t);
            sum[t] = _mm256_setzero_ps();
        }
        const bool long_row = NT * (k / 32) * int64_t(sizeof(Act)) > kL1Acts;
        for (int64_t b = 0; b < k / 32; ++b) {
            if (long_row) {
                prefetch_bytes<2>(reinterpret_cast<const char*>(row + b) + kFarAhead, sizeof *row);
                prefetch_bytes(reinterpret_cast<const char*>(row + b) + kNearAhead, sizeof *row);
            }
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[b].qs));
            const float d = half_f(row[b].d);
            for (int t = 0; t < NT; ++t) {
                const __m256i dot = lane_dots(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[t][b].qs)));
                sum[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(d * half_f(a[t][b].d)), sum[t]);
            }
        }
        for (int t = 0; t < NT; ++t) Y[t * ldy] = hsum256(sum[t]);
    }
};

}  // namespace simd
}  // namespace
