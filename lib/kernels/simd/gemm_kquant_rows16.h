// kernels/simd/gemm_kquant_rows16.h — AVX-512 only: Q4_K products of 16 rows and a few
// tokens (batched decode) with a row in each int32 lane.
// Each of a super-block's 32 qs dwords (4 positions of two groups: low and high nibbles)
// is transposed to one vector per dword, lane = row. A token's 4 activations at a position
// are then the same for all 16 lanes: vpdpbusd takes them as a {1to16} memory broadcast,
// where the quad lanes (gemm_kquant_quads.h: 4 rows x 4 groups) need a 128-bit broadcast
// per product, which Zen 4 runs on a vector pipe beside the products (an asm loop of
// independent vpdpbusd ran at 65-70 % of their rate with one per product). Per group one
// vpmulld by the 16 rows' scales, per super-block the mins as four vpdpwssd and one float
// step for 16 rows; the results are stored by lane, with no reduction.
// The transposition (24 shuffles per 8 vectors) and the scale decoding (6-bit scales and
// mins of 16 rows at once, from their 12 bytes as three dwords) are shared by the tokens.
// Activations come in QuadForm<Q4K>'s copy (gemm_kquant_quads.h): group g, position j at
// byte 16 (8 (g / 4) + j) + 4 (g % 4) of qs; bsums dword i is the pair of group sums (i, i + 4).
// Measured (Zen 4, kernel_bench --type Q4_K --isa avx512, three alternating runs against the
// quad lanes): 4096x2048 in cache, 1 thread, 8 tokens 157-167 -> 206-250 GFLOP/s; 14336x4096
// from DRAM, 2 threads, 2 tokens 93-209 -> 208-240, 3 tokens 145-259 -> 276-335, 4 tokens
// 189-262 -> 299-357, 8 tokens 213-304 -> 225-464.
// Must not touch: other weight types, fewer than 16 rows (the quad lanes take those).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_kquant.h"

namespace {
namespace simd {

struct Q4KRows16 {
    using Block = strata::BlockQ4_K;
    using Act = strata::BlockQ8_K;

    // Lane L holds row kRow[L]: the order the transposition leaves (rows 0-3, 8-11, 4-7, 12-15).
    static __m512i lane_rows() { return _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15); }

    // Dwords 8c .. 8c + 7 of the 16 rows' qs as 8 vectors, lane L of out[w] dword 8c + w
    // of row lane_rows()[L].
    static void transpose_chunk(const Block* const (&row)[16], int c, __m512i (&out)[8]) {
        __m512i z[8], a[8];
        for (int i = 0; i < 8; ++i)
            z[i] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(row[i]->qs + 32 * c)), load256(row[i + 8]->qs + 32 * c), 1);
        // 128-bit lanes of z[i]: row i dwords 0-3, 4-7, row i + 8 dwords 0-3, 4-7.
        for (int p = 0; p < 4; ++p) {
            a[2 * p] = _mm512_unpacklo_epi32(z[2 * p], z[2 * p + 1]);
            a[2 * p + 1] = _mm512_unpackhi_epi32(z[2 * p], z[2 * p + 1]);
        }
        // b[4q + d]: rows 4q .. 4q + 3 (and + 8), dwords d and d + 4, one per 128-bit lane.
        __m512i b[8];
        for (int q = 0; q < 2; ++q)
            for (int h = 0; h < 2; ++h) {
                b[4 * q + 2 * h] = _mm512_unpacklo_epi64(a[4 * q + h], a[4 * q + h + 2]);
                b[4 * q + 2 * h + 1] = _mm512_unpackhi_epi64(a[4 * q + h], a[4 * q + h + 2]);
            }
        for (int d = 0; d < 4; ++d) {
            out[d] = _mm512_shuffle_i32x4(b[d], b[4 + d], _MM_SHUFFLE(2, 0, 2, 0));
            out[d + 4] = _mm512_shuffle_i32x4(b[d], b[4 + d], _MM_SHUFFLE(3, 1, 3, 1));
        }
    }

    // The 16 rows' super-block headers by lane: d and dmin (F16 pair), scale bytes 0-3,
    // 4-7, 8-11 (dwords 0..3 of the block).
    struct Header {
        __m512i dm, s0, s1, s2;
    };
    static Header headers(const Block* const (&row)[16]) {
        auto head = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(row[r])); };
        auto quad = [&](int r) { return quad_of(head(r), head(r + 1), head(r + 2), head(r + 3)); };
        // h[k]: the rows of lanes 4k .. 4k + 3, one header per 128-bit lane.
        const __m512i h[4] = {quad(0), quad(8), quad(4), quad(12)};
        // Dword c of the 4 headers of h[x] and h[y] in lanes 0-7, dword c + 2 in lanes 8-15.
        auto pick = [](int c) {
            return _mm512_setr_epi32(c, 4 + c, 8 + c, 12 + c, 16 + c, 20 + c, 24 + c, 28 + c, c + 2, 6 + c, 10 + c, 14 + c, 18 + c,
                                     22 + c, 26 + c, 30 + c);
        };
        const __m512i lo02 = _mm512_permutex2var_epi32(h[0], pick(0), h[1]), hi02 = _mm512_permutex2var_epi32(h[2], pick(0), h[3]);
        const __m512i lo13 = _mm512_permutex2var_epi32(h[0], pick(1), h[1]), hi13 = _mm512_permutex2var_epi32(h[2], pick(1), h[3]);
        const __m512i low = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
        const __m512i high = _mm512_add_epi32(low, _mm512_set1_epi32(8));
        return {_mm512_permutex2var_epi32(lo02, low, hi02), _mm512_permutex2var_epi32(lo13, low, hi13),
                _mm512_permutex2var_epi32(lo02, high, hi02), _mm512_permutex2var_epi32(lo13, high, hi13)};
    }
    static __m512i quad_of(__m128i r0, __m128i r1, __m128i r2, __m128i r3) {
        const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(r0), r1, 1);
        const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(r2), r3, 1);
        return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }

    // The 6-bit scales and mins of 16 rows, bytes by lane: sc[0] groups 0-3, sc[1] 4-7,
    // mn[0] and mn[1] the same for the mins (llama.cpp's get_scale_min_k4, 16 rows at once).
    struct Scales {
        __m512i sc[2], mn[2];
    };
    static Scales scales(const Header& h) {
        const __m512i m6 = _mm512_set1_epi8(0x3F), m4 = _mm512_set1_epi8(0x0F), top = _mm512_set1_epi8(0x30);
        Scales o;
        o.sc[0] = _mm512_and_si512(h.s0, m6);
        o.mn[0] = _mm512_and_si512(h.s1, m6);
        o.sc[1] = _mm512_or_si512(_mm512_and_si512(h.s2, m4), _mm512_and_si512(_mm512_srli_epi32(h.s0, 2), top));
        o.mn[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(h.s2, 4), m4), _mm512_and_si512(_mm512_srli_epi32(h.s1, 2), top));
        return o;
    }
    // Byte b of every dword, zero-extended (as int32), or moved to word W of the dword.
    template <int W = 0>
    static __m512i byte_of(__m512i v, int b) {
        constexpr char Z = -128;
        const char i = static_cast<char>(b);
        const __m128i idx = W == 0 ? _mm_setr_epi8(i, Z, Z, Z, i + 4, Z, Z, Z, i + 8, Z, Z, Z, i + 12, Z, Z, Z)
                                   : _mm_setr_epi8(Z, Z, i, Z, Z, Z, i + 4, Z, Z, Z, i + 8, Z, Z, Z, i + 12, Z);
        return _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(idx));
    }

    // Share i of n of 16 rows' first `bytes` (ldw apart) into L2.
    static void prefetch_share(const uint8_t* w, size_t ldw, size_t bytes, int64_t i, int64_t n) {
        const size_t from = bytes * static_cast<size_t>(i) / static_cast<size_t>(n) / 64 * 64;
        const size_t to = bytes * static_cast<size_t>(i + 1) / static_cast<size_t>(n);
        for (int r = 0; r < 16; ++r)
            for (size_t off = from; off < to; off += 64) _mm_prefetch(reinterpret_cast<const char*>(w + r * ldw + off), _MM_HINT_T1);
    }

    static int act_offset(int g, int j) { return 16 * (8 * (g / 4) + j) + 4 * (g % 4); }
    static __m512i act4(const Act& a, int g, int j) {
        int32_t v;
        std::memcpy(&v, a.qs + act_offset(g, j), 4);
        return _mm512_set1_epi32(v);
    }

    // Rows w .. w + 15 (ldw apart, `steps` super-blocks each) against NT tokens (acts:
    // QuadForm<Q4K>'s copy, token t0 + t of super-block s at x + s * ldx + (t0 + t) *
    // sizeof(Act)), stored to Y. The rows are taken whole (the copy stays in L2): 16 rows
    // are then one contiguous run, and the next 16 rows' run is brought into L2 in equal
    // shares as the super-blocks go (from DRAM, two threads, 8 tokens: 297 -> 346 GFLOP/s
    // against parts of k kept in L1 with the rows' next super-blocks prefetched; the rows
    // going through the parts one after another read 16 short streams).
    template <int NT>
    static void tile(const uint8_t* w, size_t ldw, int64_t steps, const uint8_t* x, size_t ldx, int64_t t0, float* Y, size_t ldy) {
        __m512 acc[NT];
        for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
        for (int64_t s = 0; s < steps; ++s) {
            const Block* row[16];
            for (int r = 0; r < 16; ++r) row[r] = reinterpret_cast<const Block*>(w + r * ldw) + s;
            prefetch_share(w + 16 * ldw, ldw, steps * sizeof(Block), s, steps);
            const Act* a = reinterpret_cast<const Act*>(x + s * ldx) + t0;
            const Header h = headers(row);
            const Scales sc = scales(h);
            __m512i total[NT];
            for (int c = 0; c < 4; ++c) {
                __m512i v[8];
                transpose_chunk(row, c, v);
                for (int half = 0; half < 2; ++half) {
                    const int g = 2 * c + half;
                    __m512i group[NT];
                    for (int t = 0; t < NT; ++t) group[t] = _mm512_setzero_si512();
                    for (int j = 0; j < 8; ++j) {
                        const __m512i u = _mm512_and_si512(half ? _mm512_srli_epi32(v[j], 4) : v[j], _mm512_set1_epi8(0x0F));
                        for (int t = 0; t < NT; ++t) group[t] = _mm512_dpbusd_epi32(group[t], u, act4(a[t], g, j));
                    }
                    const __m512i scale = byte_of(sc.sc[g / 4], g % 4);
                    for (int t = 0; t < NT; ++t) {
                        const __m512i scaled = _mm512_mullo_epi32(group[t], scale);
                        total[t] = g == 0 ? scaled : _mm512_add_epi32(total[t], scaled);
                    }
                }
            }
            // Mins: pair i is (group i, group i + 4), against the copy's bsums dword i.
            __m512i mins[4];
            for (int i = 0; i < 4; ++i) mins[i] = _mm512_or_si512(byte_of(sc.mn[0], i), byte_of<1>(sc.mn[1], i));
            const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h.dm));
            const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(h.dm, 16)));
            for (int t = 0; t < NT; ++t) {
                __m512i corr = _mm512_setzero_si512();
                for (int i = 0; i < 4; ++i) {
                    int32_t pair;
                    std::memcpy(&pair, a[t].bsums + 2 * i, 4);
                    corr = _mm512_dpwssd_epi32(corr, mins[i], _mm512_set1_epi32(pair));
                }
                const __m512 da = _mm512_set1_ps(a[t].d);
                acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total[t]), _mm512_mul_ps(d, da), acc[t]);
                acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(corr), _mm512_mul_ps(dmin, da), acc[t]);
            }
        }
        for (int t = 0; t < NT; ++t) {
            // Lanes back in row order (lane_rows is its own inverse).
            _mm512_storeu_ps(Y + t * ldy, _mm512_permutexvar_ps(lane_rows(), acc[t]));
        }
    }
};

}  // namespace simd
}  // namespace
