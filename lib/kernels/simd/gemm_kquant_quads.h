// kernels/simd/gemm_kquant_quads.h — AVX-512 only: Q4_K products of 2..8 tokens (batched
// decode of several sessions) that apply the group scales once per four groups.
// Lanes: 4 rows x 4 groups. The 16 int32 lanes of a sum hold row r = lane / 4 and group
// 4q + i (i = lane % 4) of quad q (groups 0..3 or 4..7 of a super-block). A weight vector
// holds, for one position j of the quad's groups (elements 4j .. 4j + 3 of each), the 4
// values of every (row, group); a token's activations at those positions are 16 bytes,
// broadcast to the 4 rows. One vpdpbusd per position and token does 64 multiply-adds;
// after the quad's 8 positions one vpmulld applies the 16 lanes' scales, and per
// super-block the mins, d and dmin are one step per 4 rows. KQuant::wide_row instead
// takes a vpmaddubsw and a vpdpwssd per 64 multiply-adds and a float step per row.
// Weights take this form per super-block and 4 rows: each pair of rows' packed bytes
// permuted into (position, group) blocks, the pairs joined, then the nibbles; activations
// once per product (each super-block's quants in the same order).
// Measured (Zen 4, kernel_bench Q4_K, 3-4 alternating runs): 4096x2048 in cache, 1
// thread, 8 tokens 143-150 -> 167-174 GFLOP/s; 14336x4096 from DRAM, 2 threads, 2 tokens
// 136-156 -> 154-192, 4 tokens 177-199 -> 218-239, 8 tokens 186-217 -> 274-291.
// Q4_K only: other K-quants in this layout (tried generically, from their unpacked chunks)
// spent what they saved on the transposition. One token keeps KQuant's narrow_row (one
// sequential weight stream, at the bus).
// Must not touch: other weight types, the many-token path (gemm_kquant_x4.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/gemm_x4.h"

namespace {
namespace simd {

template <class V, class Type>
struct KQuantQuads : KQuant<V, Type> {
    using Base = KQuant<V, Type>;
    using Block = typename Type::Block;
    using Act = strata::BlockQ8_K;
    using Acts = typename Base::Acts;
    static constexpr bool quads(int64_t nt) { return std::is_same_v<Type, Q4K> && nt >= 2; }

    // Weight vector m = 8q + j (16 per super-block): lane 4r + i holds row r's elements
    // 32(4q + i) + 4j .. + 3, whose first byte is activation dword act_dword(m, i).
    static constexpr int act_dword(int m, int i) { return 8 * (4 * (m / 8) + i) + m % 8; }

    // A copy of the activations whose super-blocks hold their quants in weight-vector
    // order (16 bytes per vector m: the 4 groups' dwords), token by token within a
    // super-block, so that a tile reads every token at a fixed offset from one pointer:
    // token t's super-block s at x + s * ldx + t * sizeof(Act).
    static Acts prepare_fused(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if (!quads(nt)) return Base::prepare_fused(x, ldx, nt, k);
        const int64_t steps = k / 256;
        auto* copy = static_cast<Act*>(scratch(static_cast<size_t>(nt * steps) * sizeof(Act)));
        for (int64_t t = 0; t < nt; ++t)
            for (int64_t s = 0; s < steps; ++s) {
                const Act& a = reinterpret_cast<const Act*>(x + t * ldx)[s];
                Act& o = copy[s * nt + t];
                o = a;
                for (int m = 0; m < 16; ++m)
                    for (int i = 0; i < 4; ++i) std::memcpy(o.qs + 16 * m + 4 * i, a.qs + 4 * act_dword(m, i), 4);
                // bsums[0..7]: the sums of groups i and i + 4 (of 32) side by side, as the
                // mins of Tile::corr pair them.
                for (int i = 0; i < 4; ++i) {
                    o.bsums[2 * i] = static_cast<int16_t>(a.bsums[2 * i] + a.bsums[2 * i + 1]);
                    o.bsums[2 * i + 1] = static_cast<int16_t>(a.bsums[2 * i + 8] + a.bsums[2 * i + 9]);
                }
            }
        return Acts{reinterpret_cast<const uint8_t*>(copy), static_cast<size_t>(nt) * sizeof(Act)};
    }

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (!quads(NT)) {
            Base::template fused<NR, NT>(w, ldw, k, acts, t0, Y, ldy);
        } else {
            // As wide_row: the rows go through k in parts whose activations stay in L1.
            constexpr int64_t kPart = 24 * 1024 / (NT * sizeof(Act));
            const int64_t all = k / 256;
            for (int64_t s0 = 0; s0 < all; s0 += kPart)
                for (int r = 0; r < NR; r += 4)
                    tile<NT>(w + r * ldw, ldw, NR - r < 4 ? NR - r : 4, s0, s0 + kPart < all ? s0 + kPart : all, acts, t0,
                             Y + r, ldy);
        }
    }

    // One super-block of 4 rows in the quad lanes: the weight vectors, each quad's lane
    // scales, the mins as int16 pairs against the activations' group sums (corr lane
    // 4r + i: row r's mins of groups i and i + 4), and d, dmin by row.
    struct Tile {
        __m512i u[16];
        __m512i scale[2];
        __m512i corr;
        __m512 d, dc;
    };

    // Index for vpermt2d over two rows' 64 packed bytes of a quad (pairs 2q, 2q + 1 of qs):
    // the 128-bit blocks [row a, position j | row b, j | row a, j + 4 | row b, j + 4], dword
    // i of a block the one holding group 4q + i's values (pair i / 2, dword j).
    static __m512i pair_index(int j) {
        const __m512i at = _mm512_setr_epi32(0, 0, 8, 8, 16, 16, 24, 24, 4, 4, 12, 12, 20, 20, 28, 28);
        return _mm512_add_epi32(at, _mm512_set1_epi32(j));
    }

    static void unpack_quad(const Block* const (&row)[4], int q, __m512i* u) {
        __m512i z[4];
        for (int r = 0; r < 4; ++r) z[r] = _mm512_loadu_si512(row[r]->qs + 64 * q);
        // Odd groups are the high nibbles: lanes with i odd shift their dword by 4.
        const __m512i shift = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
        for (int j = 0; j < 4; ++j) {
            const __m512i ab = _mm512_permutex2var_epi32(z[0], pair_index(j), z[1]);
            const __m512i cd = _mm512_permutex2var_epi32(z[2], pair_index(j), z[3]);
            const __m512i lo = _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(1, 0, 1, 0));  // position j
            const __m512i hi = _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(3, 2, 3, 2));  // position j + 4
            u[j] = _mm512_and_si512(_mm512_srlv_epi32(lo, shift), _mm512_set1_epi8(0x0F));
            u[j + 4] = _mm512_and_si512(_mm512_srlv_epi32(hi, shift), _mm512_set1_epi8(0x0F));
        }
    }

    static void unpack_tile(const Block* const (&row)[4], Tile& o) {
        unpack_quad(row, 0, o.u);
        unpack_quad(row, 1, o.u + 8);
        // Each row's decoded scales (bytes 0..7) and mins (8..15) in its 128-bit lane.
        __m512i sm = _mm512_castsi128_si512(_mm256_castsi256_si128(Type::prep(*row[0]).b));
        sm = _mm512_inserti32x4(sm, _mm256_castsi256_si128(Type::prep(*row[1]).b), 1);
        sm = _mm512_inserti32x4(sm, _mm256_castsi256_si128(Type::prep(*row[2]).b), 2);
        sm = _mm512_inserti32x4(sm, _mm256_castsi256_si128(Type::prep(*row[3]).b), 3);
        constexpr char Z = -128;  // pshufb: zero
        for (int q = 0; q < 2; ++q) {
            const char b = static_cast<char>(4 * q);
            o.scale[q] = _mm512_shuffle_epi8(sm, _mm512_broadcast_i32x4(_mm_setr_epi8(b, Z, Z, Z, b + 1, Z, Z, Z, b + 2, Z, Z, Z,
                                                                                       b + 3, Z, Z, Z)));
        }
        o.corr = _mm512_shuffle_epi8(sm, _mm512_broadcast_i32x4(_mm_setr_epi8(8, Z, 12, Z, 9, Z, 13, Z, 10, Z, 14, Z, 11, Z, 15, Z)));
        // d and dmin side by side at the start of each block: [d0, dmin0, d1, dmin1, ...].
        int32_t halves[4];
        for (int r = 0; r < 4; ++r) std::memcpy(&halves[r], row[r], sizeof halves[r]);
        const __m512 f = _mm512_castps256_ps512(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(halves))));
        const __m512i even = _mm512_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6);
        o.d = _mm512_permutexvar_ps(even, f);
        o.dc = _mm512_permutexvar_ps(_mm512_add_epi32(even, _mm512_set1_epi32(1)), f);
    }

    static __m512i broadcast16(const void* p) { return _mm512_broadcast_i32x4(_mm_loadu_si128(static_cast<const __m128i*>(p))); }

    // nr (1..4) rows from w against NT tokens, super-blocks [s0, s1), added to Y unless
    // s0 = 0. Rows past nr repeat row 0 and are not stored.
    template <int NT>
    static void tile(const uint8_t* w, size_t ldw, int nr, int64_t s0, int64_t s1, const Acts& acts, int64_t t0, float* Y,
                     size_t ldy) {
        const Block* base[4];
        for (int r = 0; r < 4; ++r) base[r] = reinterpret_cast<const Block*>(w + (r < nr ? r : 0) * ldw);
        __m512 acc[NT];
        for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
        for (int64_t s = s0; s < s1; ++s) {
            const Block* row[4] = {base[0] + s, base[1] + s, base[2] + s, base[3] + s};
            // The same super-block of the next 4 rows, which the next tile reads.
            for (int r = 0; r < 4; ++r) Base::prefetch(reinterpret_cast<const char*>(row[r]) + 4 * ldw);
            Tile u;
            unpack_tile(row, u);
            const Act* a = reinterpret_cast<const Act*>(acts.x + s * acts.ldx) + t0;
            __m512i total[NT];
            for (int q = 0; q < 2; ++q) {
                __m512i group[NT];
                for (int t = 0; t < NT; ++t) group[t] = _mm512_setzero_si512();
                for (int j = 0; j < 8; ++j) {
                    const int m = 8 * q + j;
                    for (int t = 0; t < NT; ++t) group[t] = _mm512_dpbusd_epi32(group[t], u.u[m], broadcast16(a[t].qs + 16 * m));
                }
                for (int t = 0; t < NT; ++t) {
                    const __m512i scaled = _mm512_mullo_epi32(group[t], u.scale[q]);
                    total[t] = q == 0 ? scaled : _mm512_add_epi32(total[t], scaled);
                }
            }
            for (int t = 0; t < NT; ++t) {
                const __m512i corr = _mm512_dpwssd_epi32(_mm512_setzero_si512(), u.corr, broadcast16(a[t].bsums));
                const __m512 da = _mm512_set1_ps(a[t].d);
                fold<Type, V>(acc[t], total[t], corr, _mm512_mul_ps(u.d, da), _mm512_mul_ps(u.dc, da));
            }
        }
        for (int t = 0; t < NT; ++t) {
            // Lanes 4r .. 4r + 3 summed into lane 4r, then lanes 0, 4, 8, 12 gathered.
            __m512 v = _mm512_add_ps(acc[t], _mm512_permute_ps(acc[t], _MM_SHUFFLE(2, 3, 0, 1)));
            v = _mm512_add_ps(v, _mm512_permute_ps(v, _MM_SHUFFLE(1, 0, 3, 2)));
            alignas(16) float rows[4];
            _mm_store_ps(rows, _mm512_castps512_ps128(_mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), v)));
            for (int r = 0; r < nr; ++r) Y[t * ldy + r] = (s0 > 0 ? Y[t * ldy + r] : 0.0f) + rows[r];
        }
    }
};

}  // namespace simd
}  // namespace
