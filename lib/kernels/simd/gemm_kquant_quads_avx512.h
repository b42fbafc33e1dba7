// kernels/simd/gemm_kquant_quads_avx512.h — AVX-512 only: Q4_K and Q6_K products of a few tokens
// (batched decode of several sessions) that apply the group scales once per four groups.
// Lanes: 4 rows x 4 groups. The 16 int32 lanes of a sum hold row r = lane / 4 and group
// 4q + i (i = lane % 4) of quad q (4 consecutive scale groups: Q4_K has 2 quads of groups
// of 32, Q6_K 4 of groups of 16). A weight vector holds, for one position j of the quad's
// groups (elements 4j .. 4j + 3 of each), the 4 values of every (row, group); a token's
// activations at those positions are 16 bytes, broadcast to the 4 rows. One vpdpbusd per
// position and token does 64 multiply-adds; after the quad's positions one vpmulld
// applies the 16 lanes' scales, and per super-block the mins or offsets, d and dmin are
// one step per 4 rows. KQuant::wide_row instead takes a vpmaddubsw and a vpdpwssd per 64
// multiply-adds and a float step per row.
// Weights take this form per super-block and 4 rows (QuadForm): each pair of rows' packed
// bytes permuted into (position, group) blocks, the pairs joined, then the bits of each
// value; activations once per product (each super-block's quants in the same order).
// Faster than KQuant's paths for Q4_K and Q6_K in cache and from DRAM (tests/bench/HISTORY.md,
// "K-quant quad lanes").
// Other K-quants in this layout (tried generically, from their unpacked chunks) spent what
// they saved on the transposition. One token keeps KQuant's narrow_row (one sequential
// weight stream, at the bus). Whole groups of 16 rows go to gemm_kquant_rows16_avx512.h (a row per
// lane; from DRAM faster for Q4_K from 2 tokens, Q6_K from 7), and so does every row of Q2_K,
// Q3_K, Q5_K and IQ4_XS, which take this file's activation copy only; here, Q4_K's and
// Q6_K's last rows of a range.
// Must not touch: other weight types, the many-token path (gemm_kquant_x4_avx512.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/gemm_kquant_rows16_avx512.h"
#include "kernels/simd/gemm_x4_driver.h"

namespace {
namespace simd {

// One super-block of 4 rows in the quad lanes: the 16 weight vectors (vector m = quad *
// positions + j), each quad's lane scales, the corrections as int16 pairs against 16
// bytes of the activations' bsums (corr[h] against bsums + 8h), and d, dc by row.
struct QuadTile {
    __m512i u[16];
    __m512i scale[4];
    __m512i corr[2];
    __m512 d, dc;
};

// The F16 values at at[r] by row (gemm_x4_driver.h's by_row: lane 4r + i holds row r's).
inline __m512 by_row_f16(const uint16_t* const (&at)[4]) {
    const float v[4] = {half(*at[0]), half(*at[1]), half(*at[2]), half(*at[3])};
    return by_row(v);
}

// Index for vpermt2d over two rows' 16 dwords: the 128-bit blocks [row a, position j |
// row b, j | row a, j + S | row b, j + S], dword i of a block the row's dword A_i + j.
template <int A0, int A1, int A2, int A3, int S>
__m512i pair_index(int j) {
    const __m512i at = _mm512_setr_epi32(A0, A1, A2, A3, 16 + A0, 16 + A1, 16 + A2, 16 + A3, A0 + S, A1 + S, A2 + S, A3 + S,
                                         16 + A0 + S, 16 + A1 + S, 16 + A2 + S, 16 + A3 + S);
    return _mm512_add_epi32(at, _mm512_set1_epi32(j));
}

// Rows' vectors z[0..3] permuted by a pair_index and joined: out[0] holds position j of
// all 4 rows, out[1] position j + S.
inline void quad_positions(const __m512i (&z)[4], __m512i index, __m512i (&out)[2]) {
    const __m512i ab = _mm512_permutex2var_epi32(z[0], index, z[1]);
    const __m512i cd = _mm512_permutex2var_epi32(z[2], index, z[3]);
    out[0] = _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(1, 0, 1, 0));
    out[1] = _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(3, 2, 3, 2));
}

// How a type takes the quad form: kGroup elements per scale, corrections against kCorr
// halves of the bsums, group_sums(a, out) the activation bsums it pairs with (8 or 16
// int16), unpack(rows, tile), and from kMinTokens tokens on (below, KQuant's paths were
// faster: tests/bench/HISTORY.md, "K-quant quad lanes").
template <class Type>
struct QuadForm;

// Q4_K: 2 quads of 8 positions. Group 4q + i, position j is nibble i % 2 of qs dword
// 16q + 8(i / 2) + j. The mins pair groups i and i + 4 (of 32): one correction. Q4_K_R
// (Resident) holds the same 64 bytes per quad with its middle 16-byte pieces swapped: there
// position j is in dword 16q + 4(i / 2) + j, position j + 4 eight dwords on.
template <bool Resident>
struct QuadForm<Q4KOf<Resident>> {
    using Block = strata::BlockQ4_K;
    static constexpr int kGroup = 32, kCorr = 1, kMinTokens = 2;
    static void group_sums(const strata::BlockQ8_K& a, int16_t* out) {
        for (int i = 0; i < 4; ++i) {
            out[2 * i] = static_cast<int16_t>(a.bsums[2 * i] + a.bsums[2 * i + 1]);
            out[2 * i + 1] = static_cast<int16_t>(a.bsums[2 * i + 8] + a.bsums[2 * i + 9]);
        }
    }
    static void unpack(const Block* const (&row)[4], QuadTile& o) {
        // Odd groups are the high nibbles: lanes with i odd shift their dword by 4.
        const __m512i shift = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
        for (int q = 0; q < 2; ++q) {
            __m512i z[4];
            for (int r = 0; r < 4; ++r) z[r] = _mm512_loadu_si512(row[r]->qs + 64 * q);
            for (int j = 0; j < 4; ++j) {
                __m512i packed[2];
                quad_positions(z, Resident ? pair_index<0, 0, 4, 4, 8>(j) : pair_index<0, 0, 8, 8, 4>(j), packed);
                o.u[8 * q + j] = _mm512_and_si512(_mm512_srlv_epi32(packed[0], shift), _mm512_set1_epi8(0x0F));
                o.u[8 * q + j + 4] = _mm512_and_si512(_mm512_srlv_epi32(packed[1], shift), _mm512_set1_epi8(0x0F));
            }
        }
        // Each row's scales (bytes 0..7) and mins (8..15) in its 128-bit lane.
        auto decoded = [&](int r) { return _mm256_castsi256_si128(Q4K::prep(*row[r]).b); };
        const __m512i sm = quad_lanes(decoded(0), decoded(1), decoded(2), decoded(3));
        constexpr char Z = -128;  // pshufb: zero
        for (int q = 0; q < 2; ++q) {
            const char b = static_cast<char>(4 * q);
            o.scale[q] = _mm512_shuffle_epi8(sm, _mm512_broadcast_i32x4(_mm_setr_epi8(b, Z, Z, Z, b + 1, Z, Z, Z, b + 2, Z, Z, Z,
                                                                                       b + 3, Z, Z, Z)));
        }
        o.corr[0] = _mm512_shuffle_epi8(sm, _mm512_broadcast_i32x4(_mm_setr_epi8(8, Z, 12, Z, 9, Z, 13, Z, 10, Z, 14, Z, 11, Z, 15, Z)));
        o.d = by_row_f16({&row[0]->d, &row[1]->d, &row[2]->d, &row[3]->d});
        o.dc = by_row_f16({&row[0]->dmin, &row[1]->dmin, &row[2]->dmin, &row[3]->dmin});
    }
};

// Q5_K: Q4_K's activation copy (its groups and mins are Q4_K's), for the 16-row lanes only
// (gemm_kquant_rows16_avx512.h), which also take its last rows of a range.
template <>
struct QuadForm<Q5K> {
    static constexpr int kGroup = 32, kMinTokens = 2;
    static void group_sums(const strata::BlockQ8_K& a, int16_t* out) { QuadForm<Q4K>::group_sums(a, out); }
};

// IQ4_XS: as Q5_K (groups of 32, its offset paired as Q4_K's mins).
template <>
struct QuadForm<IQ4XS> : QuadForm<Q5K> {};

// Q6_K: 4 quads of 4 positions. Group 4q + i (q = 2h + s), position j: nibble s of ql
// dword 16h + 4i + j, and bits 4s + 2(i / 2) .. + 1 of qh dword 8h + 4(i % 2) + j as bits
// 4, 5. The offset of 32 is 32 * scale per group of 16 against the bsums: two corrections.
template <>
struct QuadForm<Q6K> {
    using Block = strata::BlockQ6_K;
    static constexpr int kGroup = 16, kCorr = 2, kMinTokens = 4;
    static void group_sums(const strata::BlockQ8_K& a, int16_t* out) { std::memcpy(out, a.bsums, sizeof a.bsums); }
    static void unpack(const Block* const (&row)[4], QuadTile& o) {
        for (int h = 0; h < 2; ++h) {
            __m512i ql[4], qh[4];
            for (int r = 0; r < 4; ++r) {
                ql[r] = _mm512_loadu_si512(row[r]->ql + 64 * h);
                qh[r] = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[r]->qh + 32 * h)));
            }
            for (int j = 0; j < 2; ++j) {
                __m512i low[2], high[2];
                quad_positions(ql, pair_index<0, 4, 8, 12, 2>(j), low);
                quad_positions(qh, pair_index<0, 4, 0, 4, 2>(j), high);
                for (int p = 0; p < 2; ++p)
                    for (int s = 0; s < 2; ++s) {
                        // Bits 4s + 2(i / 2) to bits 4, 5: left by 4 or 2 (s = 0), right by 0 or 2.
                        const __m512i by = _mm512_setr_epi32(4, 4, 2, 2, 4, 4, 2, 2, 4, 4, 2, 2, 4, 4, 2, 2);
                        const __m512i moved = s == 0 ? _mm512_sllv_epi32(high[p], by)
                                                     : _mm512_srlv_epi32(high[p], _mm512_sub_epi32(_mm512_set1_epi32(4), by));
                        const __m512i nib = s == 0 ? low[p] : _mm512_srli_epi32(low[p], 4);
                        o.u[4 * (2 * h + s) + j + 2 * p] = _mm512_or_si512(_mm512_and_si512(nib, _mm512_set1_epi8(0x0F)),
                                                                           _mm512_and_si512(moved, _mm512_set1_epi8(0x30)));
                    }
            }
        }
        // Each row's 16 int8 scales in its 128-bit lane: scale bytes to the top of their
        // dword (words for the corrections), then shifted down with their sign.
        auto scales = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(row[r]->scales)); };
        const __m512i sc = quad_lanes(scales(0), scales(1), scales(2), scales(3));
        constexpr char Z = -128;
        for (int q = 0; q < 4; ++q) {
            const char b = static_cast<char>(4 * q);
            const __m512i top = _mm512_shuffle_epi8(sc, _mm512_broadcast_i32x4(_mm_setr_epi8(Z, Z, Z, b, Z, Z, Z, b + 1, Z, Z, Z,
                                                                                               b + 2, Z, Z, Z, b + 3)));
            o.scale[q] = _mm512_srai_epi32(top, 24);
        }
        for (int h = 0; h < 2; ++h) {
            const char b = static_cast<char>(8 * h);
            const __m512i top = _mm512_shuffle_epi8(sc, _mm512_broadcast_i32x4(_mm_setr_epi8(Z, b, Z, b + 1, Z, b + 2, Z, b + 3, Z,
                                                                                               b + 4, Z, b + 5, Z, b + 6, Z, b + 7)));
            o.corr[h] = _mm512_srai_epi16(top, 3);  // 32 * scale
        }
        o.d = o.dc = by_row_f16({&row[0]->d, &row[1]->d, &row[2]->d, &row[3]->d});
    }
};

// Each type's form in the 16-row lanes (gemm_kquant_rows16_avx512.h).
template <class Type>
using RowsForm = std::conditional_t<
    std::is_same_v<Type, Q4K>, Rows16Q4KOf<false>, std::conditional_t<std::is_same_v<Type, Q4KR>, Rows16Q4KOf<true>,
    std::conditional_t<std::is_same_v<Type, Q5K>, Rows16Q5K,
                       std::conditional_t<std::is_same_v<Type, Q6K>, Rows16Q6K,
                                          std::conditional_t<std::is_same_v<Type, Q2K>, Rows16Q2K,
                                                             std::conditional_t<std::is_same_v<Type, Q3K>, Rows16Q3K, Rows16IQ4XS>>>>>>;

// Q2_K and Q3_K (groups of 16, as Q6_K): the copy only, for the 16-row lanes.
template <>
struct QuadForm<Q2K> {
    static constexpr int kGroup = 16, kMinTokens = Rows16Q2K::kMinTokens;
    static void group_sums(const strata::BlockQ8_K& a, int16_t* out) { QuadForm<Q6K>::group_sums(a, out); }
};
template <>
struct QuadForm<Q3K> : QuadForm<Q2K> {};

template <class V, class Type>
struct KQuantQuads : KQuant<V, Type> {
    using Base = KQuant<V, Type>;
    using Block = typename Type::Block;
    using Act = strata::BlockQ8_K;
    using Acts = typename Base::Acts;
    using Form = QuadForm<Type>;  // complete for Q4_K and Q6_K; the others' copy only
    // Types without quad lanes: every row takes the 16-row lanes.
    static constexpr bool kRowsOnly =
        std::is_same_v<Type, Q5K> || std::is_same_v<Type, IQ4XS> || std::is_same_v<Type, Q2K> || std::is_same_v<Type, Q3K>;
    static constexpr bool kForm = std::is_same_v<Type, Q4K> || std::is_same_v<Type, Q4KR> || std::is_same_v<Type, Q6K> || kRowsOnly;
    static constexpr bool quads(int64_t nt) {
        if constexpr (kForm) return nt >= Form::kMinTokens;
        return false;
    }

    // Weight vector m = q * P + j (P = kGroup / 4 positions per group): lane 4r + i holds
    // row r's elements kGroup (4q + i) + 4j .. + 3, whose first byte is activation dword
    // act_dword(m, i).
    template <int G>
    static constexpr int act_dword(int m, int i) {
        return ((4 * (m / (G / 4)) + i) * G + 4 * (m % (G / 4))) / 4;
    }

    // The permutation of a super-block's 64 quant dwords into weight-vector order (dword 4m
    // + i of the copy is act_dword(m, i)), four 512-bit permutations: each vector of the
    // copy draws on two neighbouring vectors of the source (Q4_K's groups of 32: vectors 0-1
    // or 2-3; groups of 16: one vector, transposed as 4 x 4 dwords). The copy a dword at a
    // time that it replaced took 6.2 % of 8 sessions' decoding, this one 1.6 % (HISTORY.md,
    // "K-quant quad lanes' activation copy").
    struct QuadOrder {
        static constexpr int source(int d) { return act_dword<Form::kGroup>(d / 4, d % 4); }
        // The first of the two source vectors that vector v of the copy reads (evaluated
        // at compile time only: a form that needed more would not compile).
        static constexpr int first(int v) {
            int low = 3, high = 0;
            for (int d = 16 * v; d < 16 * v + 16; ++d) {
                low = source(d) / 16 < low ? source(d) / 16 : low;
                high = source(d) / 16 > high ? source(d) / 16 : high;
            }
            if (high > low + 1) throw "a vector of the copy needs more than two source vectors";
            return low < 3 ? low : 2;
        }
        __m512i index[4];
        QuadOrder() {
            for_chunks<4>([&](auto c) {
                constexpr int v = decltype(c)::value, f = first(v);
                alignas(64) int32_t at[16];
                for (int d = 0; d < 16; ++d) at[d] = source(16 * v + d) - 16 * f;
                index[v] = _mm512_load_si512(at);
            });
        }
        void copy(const int8_t* from, int8_t* to) const {
            __m512i z[4];
            for (int v = 0; v < 4; ++v) z[v] = _mm512_loadu_si512(from + 64 * v);
            for_chunks<4>([&](auto c) {
                constexpr int v = decltype(c)::value, f = first(v);
                _mm512_storeu_si512(to + 64 * v, _mm512_permutex2var_epi32(z[f], index[v], z[f + 1]));
            });
        }
    };

    // A copy of the activations whose super-blocks hold their quants in weight-vector
    // order (16 bytes per vector m: the 4 groups' dwords) and the bsums as Form pairs
    // them, token by token within a super-block, so that a tile reads every token at a
    // fixed offset from one pointer: token t's super-block s at x + s * ldx + t * sizeof(Act).
    static Acts prepare_fused(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if constexpr (!kForm) {
            return Base::prepare_fused(x, ldx, nt, k);
        } else {
            if (!quads(nt)) return Base::prepare_fused(x, ldx, nt, k);
            return quad_copy(x, ldx, nt, k);
        }
    }
    // The copy itself, for any token count (also the 8-row layouts' 16-row lanes,
    // gemm_kquant_r8.h).
    static Acts quad_copy(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        const int64_t steps = k / 256;
        auto* copy = static_cast<Act*>(scratch(static_cast<size_t>(nt * steps) * sizeof(Act)));
        const QuadOrder order;
        for (int64_t t = 0; t < nt; ++t)
            for (int64_t s = 0; s < steps; ++s) {
                const Act& a = reinterpret_cast<const Act*>(x + t * ldx)[s];
                Act& o = copy[s * nt + t];
                o.d = a.d;
                order.copy(a.qs, o.qs);
                Form::group_sums(a, o.bsums);
            }
        return Acts{reinterpret_cast<const uint8_t*>(copy), static_cast<size_t>(nt) * sizeof(Act)};
    }

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (!quads(NT)) {
            Base::template fused<NR, NT>(w, ldw, k, acts, t0, Y, ldy);
        } else {
            const int64_t all = k / 256;
            using Rows = RowsForm<Type>;
            // The types without quad lanes take the 16-row lanes for their last rows of a
            // range too.
            if constexpr ((NR == 16 || kRowsOnly) && NT >= Rows::kMinTokens) {
                Rows16<V, Rows>::template tile<NT>(w, ldw, NR, all, acts.x, acts.ldx, t0, Y, ldy);
            } else {
                // As wide_row: the rows go through k in parts whose activations stay in L1.
                constexpr int64_t kPart = 24 * 1024 / (NT * sizeof(Act));
                for (int64_t s0 = 0; s0 < all; s0 += kPart)
                    for (int r = 0; r < NR; r += 4)
                        tile<NT>(w + r * ldw, ldw, NR - r < 4 ? NR - r : 4, s0, s0 + kPart < all ? s0 + kPart : all, acts, t0,
                                 Y + r, ldy);
            }
        }
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
            QuadTile u;
            Form::unpack(row, u);
            const Act* a = reinterpret_cast<const Act*>(acts.x + s * acts.ldx) + t0;
            constexpr int kPositions = Form::kGroup / 4, kQuads = 16 / kPositions;
            __m512i total[NT];
            for (int q = 0; q < kQuads; ++q) {
                __m512i group[NT];
                for (int t = 0; t < NT; ++t) group[t] = _mm512_setzero_si512();
                for (int j = 0; j < kPositions; ++j) {
                    const int m = kPositions * q + j;
                    for (int t = 0; t < NT; ++t) group[t] = _mm512_dpbusd_epi32(group[t], u.u[m], broadcast16(a[t].qs + 16 * m));
                }
                for (int t = 0; t < NT; ++t) {
                    const __m512i scaled = _mm512_mullo_epi32(group[t], u.scale[q]);
                    total[t] = q == 0 ? scaled : _mm512_add_epi32(total[t], scaled);
                }
            }
            for (int t = 0; t < NT; ++t) {
                __m512i corr = _mm512_setzero_si512();
                for (int h = 0; h < Form::kCorr; ++h) corr = _mm512_dpwssd_epi32(corr, u.corr[h], broadcast16(a[t].bsums + 8 * h));
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
