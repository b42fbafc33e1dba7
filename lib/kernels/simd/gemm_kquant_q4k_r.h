// kernels/simd/gemm_kquant_q4k_r.h — the one-token product of Q4_K_R weights (tensor/
// repack.h: Q4_K rearranged at load) against Q8_K activations; more tokens take the ISA's
// Q4_K products (gemm_routes.h), which read Q4_K_R's vectors back in Q4_K's order
// (gemm_kquant.h's Q4KR).
// Per super-block each 32 bytes of quants split into two nibble vectors whose int32 lanes
// 0..3 and 4..7 each hold one scale group, so that byte dot products with a copy of the
// activations in the same order (made once per product) sum every group in lanes of its
// own: four sums of two vpdpbusd each (AVX2: vpmaddubsw), then the lanes' scales applied
// once per super-block: 8 byte dot products and 4 multiplications where Q4_K's own order
// (gemm_kquant.h's narrow_row) takes a scale shuffle, a vpmaddubsw and an int16 dot per 32
// weights (about 60 vector instructions per super-block against 70), faster on both ISAs.
// On AVX-512 two sums pack into int16 words for one vpdpwssd each (scaled_sums), and the
// high nibbles are not shifted (tests/bench/HISTORY.md, "Q4_K_R one token").
// Must not touch: other weight types, Q4_K's own paths.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/intrinsics.h"
#include "tensor/blocks.h"

namespace {
namespace simd {

template <class V>
struct Q4KResident {
    using Block = strata::BlockQ4_K;
    using Act8 = strata::BlockQ8_K;
    // A token's super-block in the weights' order: qs[64v .. 64v + 31] meets the low
    // nibbles of the weights' 32 bytes v, qs[64v + 32 ..] the high ones; group_sums dword j
    // (j < 4) the activation sums of groups 2j and 2j + 1 (int16 each, the rest 0), against
    // the mins.
    struct Act {
        int8_t qs[256];
        int16_t group_sums[16];
        float d;
        float pad[7];
    };
    static_assert(sizeof(Act) % 64 == 0);

    static void run(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t /*ldx*/, int64_t /*nt: 1*/,
                    float* Y, size_t /*ldy*/) {
        const auto* w = static_cast<const uint8_t*>(W);
        const Act* acts = prepare(static_cast<const uint8_t*>(X), k);
        for (int64_t r = r0; r < r1; ++r) Y[r] = row(w + r * ldw, k / 256, acts);
    }

    static const Act* prepare(const uint8_t* x, int64_t k) {
        const int64_t steps = k / 256;
        auto* acts = static_cast<Act*>(scratch(static_cast<size_t>(steps) * sizeof(Act)));
        for (int64_t s = 0; s < steps; ++s) permute(reinterpret_cast<const Act8*>(x)[s], acts[s]);
        return acts;
    }

    // The activations of the weights' 32 bytes v = 2q + h, halves h of Q4_K's vectors 2q and
    // 2q + 1: elements 128q + 16h (+ 64 for the second) and, for the high nibbles, 32 more.
    static void permute(const Act8& a, Act& o) {
        for (int v = 0; v < 4; ++v)
            for (int nibble = 0; nibble < 2; ++nibble) {
                const uint8_t* first = reinterpret_cast<const uint8_t*>(a.qs) + 128 * (v / 2) + 16 * (v % 2) + 32 * nibble;
                _mm256_store_si256(reinterpret_cast<__m256i*>(o.qs + 64 * v + 32 * nibble), load_halves(first, 64));
            }
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums));
        const __m128i b2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums + 8));
        // Groups of 32: pairs of bsums added, then packed to int16 (|sum| <= 32 * 127).
        const __m128i ones = _mm_set1_epi16(1);
        const __m128i groups = _mm_packs_epi32(_mm_madd_epi16(b, ones), _mm_madd_epi16(b2, ones));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o.group_sums), _mm256_zextsi128_si256(groups));
        o.d = a.d;
    }

    // One super-block's scales as the products need them, from Q4_K's packed 6-bit scales
    // and mins (K4Prep's bytes: scales 0..7, mins 8..15, in both 128-bit halves); mins dword
    // j < 4 the mins of groups 2j and 2j + 1 as int16 words (dwords 4..7 zero).
    //   AVX-512: sc[q] as int16 words in scaled_sums' packed order: groups 4q and 4q + 1
    //   in the low 128 bits (words 0..3, 4..7), 4q + 2 and 4q + 3 in the high.
    //   AVX2: sc[2q + n], the scale of group 4q + n in words 0..7 and of 4q + n + 2 in words
    //   8..15, for vpmaddwd.
    struct Scales {
        static constexpr int kScales = V::kBytes == 64 ? 2 : 4;
        __m256i sc[kScales], mins;
        explicit Scales(const Block& b) {
            const K4Prep p(b.scales);
            for_chunks<kScales>([&](auto i) { sc[decltype(i)::value] = _mm256_shuffle_epi8(p.b, scale_pattern<decltype(i)::value>()); });
            constexpr char z = -1;
            mins = _mm256_shuffle_epi8(p.b, _mm256_setr_epi8(8, z, 9, z, 10, z, 11, z, 12, z, 13, z, 14, z, 15, z, z, z, z, z, z, z, z, z,
                                                             z, z, z, z, z, z, z, z));
        }
        template <int I>
        static __m256i scale_pattern() {
            if constexpr (V::kBytes == 64) {
                return zext_quarters<4 * I, 4 * I + 1, 4 * I + 2, 4 * I + 3>();
            } else {
                constexpr int g = 4 * (I / 2) + I % 2;
                return zext_quarters<g, g, g + 2, g + 2>();
            }
        }
    };

    // sum over the super-block of scale * u * a, by int32 lane: the nibble vectors u[2v]
    // (low) and u[2v + 1] (high) of the weights' 32 bytes v, in sums of the two vectors
    // 2q + h (h = 0, 1) that share their groups.
    //   AVX-512: each sum is two vpdpbusd, whose lanes of 8 products (|u a| <= 15 x 128) fit
    //   int16, so the low and high nibbles' sums of vectors 2q, 2q + 1 pack into one vector
    //   of words (vpackssdw, no saturation) that one vpdpwssd scales and adds: per
    //   super-block 2 packs and 2 vpdpwssd where 4 vpmulld, 4 adds and 2 more scale
    //   shuffles were. The high nibbles come masked in place (16 u, lanes to 240 x 128 x 8 in
    //   int32), and one exact shift of their sum replaces two shifts of the quants.
    //   AVX2: two int16 pair sums add without overflow (2 x 2 x 15 x 128), then vpmaddwd.
    static __m256i scaled_sums(const __m256i (&u)[8], const Scales& sc, const Act& a) {
        const auto act = [&](int i) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(a.qs + 32 * i)); };
        __m256i total = _mm256_setzero_si256();
        for (int q = 0; q < 2; ++q) {
            __m256i sum[2];
            for (int nibble = 0; nibble < 2; ++nibble) {
                const int first = 4 * q + nibble, second = first + 2;  // of vectors 2q and 2q + 1
                if constexpr (V::kBytes == 64)
                    sum[nibble] = _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u[first], act(first)), u[second], act(second));
                else
                    total = _mm256_add_epi32(total, _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(u[first], act(first)),
                                                                                       _mm256_maddubs_epi16(u[second], act(second))),
                                                                      sc.sc[2 * q + nibble]));
            }
            if constexpr (V::kBytes == 64)
                total = _mm256_dpwssd_epi32(total, _mm256_packs_epi32(sum[0], _mm256_srai_epi32(sum[1], 4)), sc.sc[q]);
        }
        return total;
    }

    static float row(const uint8_t* w, int64_t steps, const Act* acts) {
        __m256 acc = _mm256_setzero_ps();
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        for (int64_t s = 0; s < steps; ++s) {
            const Block& b = reinterpret_cast<const Block*>(w)[s];
            prefetch_ahead(&b);
            __m256i u[8];
            for (int v = 0; v < 4; ++v) {
                const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * v));
                u[2 * v] = _mm256_and_si256(q, m4);
                // AVX-512: the high nibbles in place (16 u), scaled_sums shifts their sums.
                if constexpr (V::kBytes == 64) u[2 * v + 1] = _mm256_andnot_si256(m4, q);
                else u[2 * v + 1] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            }
            const Scales sc(b);
            const Act& a = acts[s];
            const __m256i mins = _mm256_madd_epi16(sc.mins, _mm256_load_si256(reinterpret_cast<const __m256i*>(a.group_sums)));
            const Factors256 f = factors256<Q4KOf<true>>(b, a.d);
            fold<Q4KOf<true>, W256>(acc, scaled_sums(u, sc, a), mins, f.d_da, f.dc_da);
        }
        return hsum256(acc);
    }
};

}  // namespace simd
}  // namespace
