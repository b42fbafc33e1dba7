// kernels/simd/gemm_kquant_rows8_avx2.h — AVX2: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS products
// of 8 rows and up to 8 tokens (batched decode, and prefill 8 tokens at a time:
// gemm_driver.h's blocks) with a row in each int32 lane, the AVX2 counterpart of
// gemm_kquant_rows16_avx512.h; its products of the 8-row layouts (gemm_kquant_r8.h) take the Q4_K,
// Q5_K, Q6_K and IQ4_XS forms with Interleaved8 in place of RowSpan8 (row_lanes8.h). A
// super-block's quant dwords are transposed across 8 rows to one vector per position (lane
// = row), so a token's 4 activations at a position are one dword broadcast to all lanes (a
// load, no vector pipe).
// AVX2 has no byte dot product into int32: each position is one vpmaddubsw, and the int16
// pair sums of up to kSpan positions are added as int16 (no overflow: Q4_K 8 x 2 x 15 x
// 128, Q6_K 2 x 2 x 63 x 128, Q2_K and Q3_K a whole group of 4, 4 x 2 x 7 x 128) before one
// vpmaddwd by the 8 rows' group scale (as int16 pairs) takes them to int32.
// Per super-block and token the mins or offsets are a vpmaddwd per pair of groups
// (Form::corr): Q2_K, Q3_K and Q6_K against the activations' bsums as they come (a dword
// per pair of 16), Q4_K and Q5_K against the sums of their groups of 32 (one vpmaddwd and a
// pack from the bsums, a vpermd per pair: 4 vpmaddwd where one per group took 8, and one
// load where there were 8 broadcasts): faster than one per group, where for the groups of
// 16 one load and a vpermd lost to 8 broadcast loads (tests/bench/HISTORY.md, "K-quant rows8
// corrections").
// One float step serves 8 rows; the results are stored by lane, with no reduction.
// narrow_row (gemm_kquant.h) instead takes a vpmaddubsw, a vpmaddwd and an add per 32
// weights, row and token, and a horizontal sum per row and token.
// The activations are the Q8_K rows as they come (group g, position j: qs + kGroup g + 4j;
// bsums dword i: groups 2i, 2i + 1 of 16).
// These lanes replaced narrow_row from 2-5 tokens and the stepped path past 8 on AVX2, for
// every K-quant and IQ4_XS (HISTORY.md, "K-quant rows8 lanes on AVX2").
// Must not touch: other weight types, the AVX-512 variant's own lanes (rows16, quads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/row_lanes8.h"

namespace {
namespace simd {

// Bytes b0 and b1 of every dword to its two int16 words (the low byte of each word, or the
// high one with High), the other bytes zero (a constant index once the loops unroll).
template <bool High>
inline __m256i to_words(__m256i v, int b0, int b1) {
    const uint32_t base = High ? 0x00800080u | static_cast<uint32_t>(b0) << 8 | static_cast<uint32_t>(b1) << 24
                               : 0x80008000u | static_cast<uint32_t>(b0) | static_cast<uint32_t>(b1) << 16;
    const uint32_t slot = High ? 0x04000400u : 0x00040004u;  // + 4 per dword, in the picked bytes
    const auto at = [&](uint32_t k) { return static_cast<int>(base + k * slot); };
    return _mm256_shuffle_epi8(v, _mm256_setr_epi32(at(0), at(1), at(2), at(3), at(0), at(1), at(2), at(3)));
}

// The correction of 16-element groups for one token: the pairs (groups 2i, 2i + 1) against
// the bsums dword i.
inline __m256i bsum_corr(const __m256i (&pair)[8], const strata::BlockQ8_K& a) {
    __m256i corr = _mm256_setzero_si256();
    for (int i = 0; i < 8; ++i) corr = _mm256_add_epi32(corr, _mm256_madd_epi16(pair[i], dword8(a.bsums + 2 * i)));
    return corr;
}

// Sixteen signed scale bytes by lane (sc[c]: bytes 4c .. 4c + 3) as int16 in both words of
// their lane, and as int16 pairs (groups 2i, 2i + 1, against bsums dword i) times
// 2^(8 - PairShift): the offset's correction (Q6_K, Q3_K).
template <int PairShift>
inline void signed_scales8(const __m256i (&sc)[4], __m256i (&scale)[16], __m256i (&pair)[8]) {
#pragma GCC unroll 16
    for (int g = 0; g < 16; ++g) scale[g] = _mm256_srai_epi16(to_words<true>(sc[g / 4], g % 4, g % 4), 8);
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) pair[i] = _mm256_srai_epi16(to_words<true>(sc[i / 2], 2 * (i % 2), 2 * (i % 2) + 1), PairShift);
}

// The forms whose values are unsigned bytes: a position's int16 pair sums against a token's
// 4 activations are one vpmaddubsw.
struct UnsignedValues {
    static __m256i mul(__m256i u, __m256i a) { return _mm256_maddubs_epi16(u, a); }
};

// The F16 words at the low (d) and high (dc) half of every dword of h, by lane: Q4_K's d and
// dmin, IQ4_XS's d (and its scales_h, unused).
inline void halves_of_dwords(__m256i h, __m256& d, __m256& dc) {
    // Words d of the 8 rows in the low 128 bits, dc in the high.
    const __m256i split = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7,
                                           10, 11, 14, 15);
    const __m256i halves = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(h, split), _MM_SHUFFLE(3, 1, 2, 0));
    d = _mm256_cvtph_ps(_mm256_castsi256_si128(halves));
    dc = _mm256_cvtph_ps(_mm256_extracti128_si256(halves, 1));
}

// Q4_K's 8-row super-block: groups of 32 (8 positions), the 6-bit scales and mins decoded
// for 8 rows at once (llama.cpp's get_scale_min_k4), d and dmin. Resident: Q4_K_R's, whose
// chunks are read back from their halves (tensor/repack.h).
template <bool Resident>
struct Rows8Q4KOf : UnsignedValues {
    using Block = strata::BlockQ4_K;
    using Type = Q4KOf<Resident>;
    static constexpr int kGroups = 8, kPositions = 8, kSpan = 8, kMinTokens = 2;
    // By lane: each group's scale as int16 in both words, the mins of groups 2m and 2m + 1 as
    // int16 words (m = 0..3), d and dmin.
    __m256i scale[8], pair[4];
    __m256 d, dc;

    template <class Rows>
    Rows8Q4KOf(const uint8_t* w, const Rows& rows) {
        __m256i h[4];  // d and dmin, scale bytes 0-3, 4-7, 8-11
        rows.dwords4(w, 0, h);
        const __m256i m6 = _mm256_set1_epi8(0x3F), m4 = _mm256_set1_epi8(0x0F), top = _mm256_set1_epi8(0x30);
        const __m256i sc[2] = {_mm256_and_si256(h[1], m6),
                               _mm256_or_si256(_mm256_and_si256(h[3], m4), _mm256_and_si256(_mm256_srli_epi32(h[1], 2), top))};
        const __m256i mn[2] = {_mm256_and_si256(h[2], m6), _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(h[3], 4), m4),
                                                                           _mm256_and_si256(_mm256_srli_epi32(h[2], 2), top))};
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) scale[g] = to_words<false>(sc[g / 4], g % 4, g % 4);
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) pair[m] = to_words<false>(mn[m / 2], 2 * (m % 2), 2 * (m % 2) + 1);
        halves_of_dwords(h[0], d, dc);
    }

    // The mins' correction for one token: the bsums summed by group of 32 (int32 by dword,
    // then packed to int16 within each 128-bit half: groups 0-3 in the low half, twice, and
    // 4-7 in the high), each pair of groups (dwords 0, 1, 4, 5) broadcast against pair[m].
    __m256i corr(const strata::BlockQ8_K& a) const {
        const __m256i sums = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.bsums)), _mm256_set1_epi16(1));
        const __m256i packed = _mm256_packs_epi32(sums, sums);
        __m256i out = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) {
            const __m256i sum_pair = _mm256_permutevar8x32_epi32(packed, _mm256_set1_epi32(m % 2 + 4 * (m / 2)));
            out = _mm256_add_epi32(out, _mm256_madd_epi16(pair[m], sum_pair));
        }
        return out;
    }

    // f(g, u): group g's 8 position vectors, for g = 0..7. Chunk c (32 qs bytes) holds
    // groups 2c (low nibbles) and 2c + 1 (high).
    template <class Rows, class F>
    [[gnu::always_inline]] static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        nibble_groups<Resident>(w, offsetof(Block, qs), rows, f, [](int, int, __m256i u) { return u; });
    }

protected:
    // The same from the qs at byte `qs` of the block at w, each vector passed through
    // fifth(g, j, u) (Q5_K's bit); InHalves: Q4_K_R's qs, whose chunk c is two 16-byte halves
    // 32 bytes apart.
    template <bool InHalves, class Rows, class F, class Fifth>
    static void nibble_groups(const uint8_t* w, size_t qs, const Rows& rows, F&& f, Fifth&& fifth) {
        for (int c = 0; c < 4; ++c) {
            __m256i v[8];
            if constexpr (InHalves) rows.dwords8(w, qs + 64 * (c / 2) + 16 * (c % 2), v, 32);
            else rows.dwords8(w, qs + 32 * c, v);
            for (int half = 0; half < 2; ++half) {
                __m256i u[8];
                for (int j = 0; j < 8; ++j)
                    u[j] = fifth(2 * c + half, j, _mm256_and_si256(half ? _mm256_srli_epi32(v[j], 4) : v[j], _mm256_set1_epi8(0x0F)));
                f(2 * c + half, u);
            }
        }
    }
};

// Q5_K's: Q4_K's scales, mins and nibbles, and bit g of qh byte l the fifth bit of group g's
// element l (llama.cpp's layout), shifted to bit 4 of the byte (no other byte's bit lands
// there). Values up to 31: int16 pair sums of 4 positions (4 x 2 x 31 x 128).
struct Rows8Q5K : Rows8Q4KOf<false> {
    using Block = strata::BlockQ5_K;
    using Type = Q5K;
    // From 4 tokens: with 2-3 narrow_row was as fast (kernel_bench, in cache).
    static constexpr int kSpan = 4, kMinTokens = 4;
    using Rows8Q4KOf::Rows8Q4KOf;  // the same header: d, dmin, 12 scale bytes

    template <class Rows, class F>
    [[gnu::always_inline]] static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        __m256i high[8];
        rows.dwords8(w, offsetof(Block, qh), high);
        nibble_groups<false>(w, offsetof(Block, qs), rows, f, [&](int g, int j, __m256i u) {
            const __m256i bit = g < 4 ? _mm256_sll_epi32(high[j], _mm_cvtsi32_si128(4 - g)) : _mm256_srl_epi32(high[j], _mm_cvtsi32_si128(g - 4));
            return _mm256_or_si256(u, _mm256_and_si256(bit, _mm256_set1_epi8(0x10)));
        });
    }
};

// Q6_K's 8-row super-block: groups of 16 (4 positions), the int8 scales, d. The offset of 32
// is subtracted as 32 * scale against the bsums.
struct Rows8Q6K : UnsignedValues {
    using Block = strata::BlockQ6_K;
    using Type = Q6K;
    // From 5 tokens: its unpacking (three transpositions per 128 elements, the high bits)
    // costs more than narrow_row's with 2, as much with 3-4 (kernel_bench, in cache).
    static constexpr int kGroups = 16, kPositions = 4, kSpan = 2, kMinTokens = 5;
    // By lane: each group's scale as int16 in both words, each correction pair (int16: 32
    // times the scales of groups 2i, 2i + 1, against bsums dword i), d.
    __m256i scale[16], pair[8];
    __m256 d, dc;

    template <class Rows>
    Rows8Q6K(const uint8_t* w, const Rows& rows) {
        __m256i sc[4];  // scale bytes 4c .. 4c + 3
        rows.dwords4(w, offsetof(Block, scales), sc);
        signed_scales8<3>(sc, scale, pair);  // pairs: 32 * scale
        d = dc = rows.halves(w, offsetof(Block, d));
    }

    __m256i corr(const strata::BlockQ8_K& a) const { return bsum_corr(pair, a); }

    // f(g, u) for g = 0..15. Half n (128 elements) takes ql bytes 64n .. 64n + 63 (A: the
    // first 32, B: the next) and qh bytes 32n .. 32n + 31 (H); dword j of each holds position
    // j of four 32-element runs: A's low nibbles with H's bits 0-1, B's with bits 2-3, A's high
    // nibbles with bits 4-5, B's with bits 6-7.
    template <class Rows, class F>
    [[gnu::always_inline]] static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        for (int n = 0; n < 2; ++n) {
            __m256i a[8], b[8], h[8];
            rows.dwords8(w, offsetof(Block, ql) + 64 * n, a);
            rows.dwords8(w, offsetof(Block, ql) + 64 * n + 32, b);
            rows.dwords8(w, offsetof(Block, qh) + 32 * n, h);
            for_chunks<4>([&](auto r) {
                constexpr int run = decltype(r)::value;
                const __m256i* low = run % 2 ? b : a;
                for (int half = 0; half < 2; ++half) {
                    __m256i u[4];
                    for (int j = 0; j < 4; ++j) {
                        const __m256i nib = run < 2 ? low[4 * half + j] : _mm256_srli_epi16(low[4 * half + j], 4);
                        const __m256i high = move_bit<2 * run, 4>(h[4 * half + j]);
                        u[j] = _mm256_or_si256(_mm256_and_si256(nib, _mm256_set1_epi8(0x0F)), _mm256_and_si256(high, _mm256_set1_epi8(0x30)));
                    }
                    f(8 * n + 2 * run + half, u);
                }
            });
        }
    }
};

// Q6_K_R8's (tensor/repack.h's Q6_K planes X, Y, Z at 96n for half n, as in
// gemm_kquant_rows16_avx512.h's Rows16Q6KPlanes): runs 0 and 1 a vpand each, run 2 a shift, two
// vpand and a vpor, run 3 one shift more: 11 operations per position where the file's order
// takes 17, faster in L2 and from DRAM (HISTORY.md, "Q6_K_R8 planes on AVX2").
struct Rows8Q6KPlanes : Rows8Q6K {
    using Rows8Q6K::Rows8Q6K;

    template <class Rows, class F>
    [[gnu::always_inline]] static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        const __m256i six = _mm256_set1_epi8(0x3F), nibble = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(0x30);
        for (int n = 0; n < 2; ++n) {
            __m256i x[8], y[8], z[8];
            rows.dwords8(w, 96 * n, x);
            rows.dwords8(w, 96 * n + 32, y);
            rows.dwords8(w, 96 * n + 64, z);
            for_chunks<4>([&](auto r) {
                constexpr int run = decltype(r)::value;
                const __m256i* whole = run % 2 ? y : x;
                for (int half = 0; half < 2; ++half) {
                    __m256i u[4];
                    for (int j = 0; j < 4; ++j) {
                        const int at = 4 * half + j;
                        if constexpr (run < 2) {
                            u[j] = _mm256_and_si256(whole[at], six);
                        } else {
                            const __m256i low = run == 2 ? z[at] : _mm256_srli_epi16(z[at], 4);
                            u[j] = _mm256_or_si256(_mm256_and_si256(low, nibble), _mm256_and_si256(_mm256_srli_epi16(whole[at], 2), high));
                        }
                    }
                    f(8 * n + 2 * run + half, u);
                }
            });
        }
    }
};

// f(g, u) for the 16 groups of 16 of a super-block whose values start as two bits of qs:
// group g = 8n + 2s + h is bits 2s, 2s + 1 of qs dwords 8n + 4h + j (j = 0..3), each
// vector passed through high(n, s, 4h + j, u) (Q3_K's hmask bit).
template <class F, class High>
void two_bit_groups8(const uint8_t* qs, const RowSpan8& rows, F&& f, High&& high) {
    for (int n = 0; n < 2; ++n) {
        __m256i q[8];
        transpose8x8(qs + 32 * n, rows, q);
        for (int s = 0; s < 4; ++s) {
            const __m128i shift = _mm_cvtsi32_si128(2 * s);
            for (int h = 0; h < 2; ++h) {
                __m256i u[4];
                for (int j = 0; j < 4; ++j) u[j] = high(n, s, 4 * h + j, _mm256_srl_epi32(q[4 * h + j], shift));
                f(8 * n + 2 * s + h, u);
            }
        }
    }
}

// Q2_K's 8-row super-block: groups of 16 (4 positions, values to 3: int16 pair sums of the
// whole group), each group's scale and min from the nibbles of its scale byte, d and dmin.
struct Rows8Q2K : UnsignedValues {
    using Block = strata::BlockQ2_K;
    using Type = Q2K;
    static constexpr int kGroups = 16, kPositions = 4, kSpan = 4, kMinTokens = 2;
    // By lane: each group's scale as int16 in both words, each correction pair (int16: the
    // mins of groups 2i, 2i + 1, against bsums dword i), d and dmin.
    __m256i scale[16], pair[8];
    __m256 d, dc;

    Rows8Q2K(const uint8_t* w, const RowSpan8& rows) {
        __m256i sc[4], mn[4];  // scale bytes 4c .. 4c + 3: their low nibbles, high nibbles
        transpose4x8(w + offsetof(Block, scales), rows, sc);
        for (int c = 0; c < 4; ++c) {
            mn[c] = _mm256_and_si256(_mm256_srli_epi32(sc[c], 4), _mm256_set1_epi8(0x0F));
            sc[c] = _mm256_and_si256(sc[c], _mm256_set1_epi8(0x0F));
        }
#pragma GCC unroll 16
        for (int g = 0; g < 16; ++g) scale[g] = to_words<false>(sc[g / 4], g % 4, g % 4);
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) pair[i] = to_words<false>(mn[i / 2], 2 * (i % 2), 2 * (i % 2) + 1);
        d = halves8(w + offsetof(Block, d), rows);
        dc = halves8(w + offsetof(Block, dmin), rows);
    }

    __m256i corr(const strata::BlockQ8_K& a) const { return bsum_corr(pair, a); }

    template <class F>
    [[gnu::always_inline]] static void groups(const uint8_t* w, const RowSpan8& rows, F&& f) {
        two_bit_groups8(w + offsetof(Block, qs), rows, f,
                        [](int, int, int, __m256i low) { return _mm256_and_si256(low, _mm256_set1_epi8(0x03)); });
    }
};

// Q3_K's 8-row super-block: groups of 16 (4 positions), values u = two bits of qs plus 4
// where the hmask bit is set (the weight is u - 4; to 7: int16 pair sums of the whole group),
// the 6-bit scales (q3k_scale_words on dwords for 8 rows), d. The offset of 4 is 4 * scale
// against the bsums.
struct Rows8Q3K : UnsignedValues {
    using Block = strata::BlockQ3_K;
    using Type = Q3K;
    static constexpr int kGroups = 16, kPositions = 4, kSpan = 4, kMinTokens = 3;  // with 2 narrow_row was as fast (kernel_bench, in cache)
    // By lane: each group's scale as int16 in both words, each correction pair (int16: 4
    // times the scales of groups 2i, 2i + 1, against bsums dword i), d.
    __m256i scale[16], pair[8];
    __m256 d, dc;

    Rows8Q3K(const uint8_t* w, const RowSpan8& rows) {
        // The 16 bytes that end the block (it has no 2 more after its scales and d): qs
        // 62-63 and scales 0-1, scales 2-5, 6-9, scales 10-11 and d.
        __m256i h[4];
        transpose4x8(w + offsetof(Block, scales) - 2, rows, h);
        auto word = [&](int i) { return _mm256_or_si256(_mm256_srli_epi32(h[i], 16), _mm256_slli_epi32(h[i + 1], 16)); };
        using Words = uint32_t __attribute__((vector_size(32)));
        Words words[4];
        q3k_unpack_words<Words>(Words(word(0)), Words(word(1)), Words(word(2)), words);
        __m256i sc[4];
        for (int c = 0; c < 4; ++c) sc[c] = _mm256_sub_epi8(__m256i(words[c]), _mm256_set1_epi8(32));
        signed_scales8<6>(sc, scale, pair);  // pairs: 4 * scale
        d = dc = halves8(w + offsetof(Block, d), rows);
    }

    __m256i corr(const strata::BlockQ8_K& a) const { return bsum_corr(pair, a); }

    // two_bit_groups8, plus 4 where bit 4n + s of the bytes of hmask dword 4h + j is set
    // (shifted to bit 2 of its byte, within 16-bit words).
    template <class F>
    [[gnu::always_inline]] static void groups(const uint8_t* w, const RowSpan8& rows, F&& f) {
        __m256i hm[8];
        transpose8x8(w + offsetof(Block, hmask), rows, hm);
        two_bit_groups8(w + offsetof(Block, qs), rows, f, [&](int n, int s, int dword, __m256i low) {
            const int c = 4 * n + s;
            const __m256i bit = c >= 2 ? _mm256_srl_epi16(hm[dword], _mm_cvtsi32_si128(c - 2)) : _mm256_sll_epi16(hm[dword], _mm_cvtsi32_si128(2 - c));
            return _mm256_or_si256(_mm256_and_si256(low, _mm256_set1_epi8(0x03)), _mm256_and_si256(bit, _mm256_set1_epi8(0x04)));
        });
    }
};

// IQ4_XS's 8-row super-block: groups of 16 (4 positions; group 2i + h is sub-block i's low
// nibbles, h = 0, or high ones, its codes in qs bytes 16i .. 16i + 15), looked up as signed table values (-127..113). vpmaddubsw takes one side
// unsigned, and the value + 128 against an activation of 127 overflows its int16 pair sums:
// each position is |value| against the activations with the value's sign (vpsignb, as
// llama.cpp's AVX2 dot does), and each position's pair sums go through vpmaddwd by the
// scale on their own (kSpan 1: two could reach 2 x 2 x 127 x 127). Scales ls - 32 from
// scales_l's nibble i and scales_h's bits 2i, 2i + 1; no offset, no correction.
struct Rows8IQ4XS {
    using Block = strata::BlockIQ4_XS;
    using Type = IQ4XS;  // fold subtracts corr, zero here
    // The file's order from 4 tokens: with 2-3 narrow_row was as fast (kernel_bench, in cache).
    static constexpr int kGroups = 16, kPositions = 4, kSpan = 1, kMinTokens = 4;
    // By lane: each group's scale as int16 in both words, d.
    __m256i scale[16];
    __m256 d, dc;

    // A position's values: their magnitudes (unsigned) and the values (their signs).
    struct Value {
        __m256i magnitude, value;
    };
    static __m256i mul(const Value& u, __m256i a) { return _mm256_maddubs_epi16(u.magnitude, _mm256_sign_epi8(a, u.value)); }

    template <class Rows>
    Rows8IQ4XS(const uint8_t* w, const Rows& rows) {
        __m256i h[4];  // d and scales_h, scales_l, the first qs
        rows.dwords4(w, 0, h);
        auto bits = [](__m256i v, int at, int mask) { return _mm256_and_si256(_mm256_srli_epi32(v, at), _mm256_set1_epi32(mask)); };
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
            const __m256i ls = _mm256_or_si256(bits(h[1], 4 * i, 0xF), _mm256_slli_epi32(bits(h[0], 16 + 2 * i, 3), 4));
            const __m256i s = _mm256_sub_epi32(ls, _mm256_set1_epi32(32));
            scale[2 * i] = scale[2 * i + 1] = _mm256_or_si256(_mm256_and_si256(s, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(s, 16));
        }
        halves_of_dwords(h[0], d, dc);
    }

    __m256i corr(const strata::BlockQ8_K&) const { return _mm256_setzero_si256(); }

    // f(g, u) for g = 0..15: chunk c (32 qs bytes) holds sub-blocks 2c (dwords 0-3) and
    // 2c + 1 (4-7), so groups 4c .. 4c + 3.
    template <class Rows, class F>
    [[gnu::always_inline]] static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        for (int c = 0; c < 4; ++c) {
            __m256i v[8];
            rows.dwords8(w, offsetof(Block, qs) + 32 * c, v);
            for (int n = 0; n < 4; ++n) {
                Value u[4];
                for (int j = 0; j < 4; ++j) {
                    const __m256i q = v[4 * (n / 2) + j];
                    u[j].value = iq4_signed(_mm256_and_si256(n % 2 ? _mm256_srli_epi16(q, 4) : q, _mm256_set1_epi8(0x0F)));
                    u[j].magnitude = _mm256_abs_epi8(u[j].value);
                }
                f(4 * c + n, u);
            }
        }
    }
};

template <class Form>
struct Rows8 {
    using Block = typename Form::Block;
    using Act = strata::BlockQ8_K;
    static constexpr int P = Form::kPositions, S = Form::kSpan, G = 256 / Form::kGroups;

    // Rows w .. w + nr - 1 (nr <= 8, ldw apart, `steps` super-blocks each) against NT tokens
    // (token t0 + t's super-block s at x + (t0 + t) * ldx + s * sizeof(Act)), stored to Y.
    // The rows are taken whole, as in gemm_kquant_rows16_avx512.h: 8 rows are one contiguous run,
    // and the next 8 rows' run is brought into L2 in equal shares as the super-blocks go.
    // Rows: RowSpan8, or Interleaved8 for an 8-row group (an 8-row layout: w its start,
    // super-block s 8 blocks on).
    template <int NT, class Rows = RowSpan8>
    static void tile(const uint8_t* w, size_t ldw, int nr, int64_t steps, const uint8_t* x, size_t ldx, int64_t t0, float* Y,
                     size_t ldy) {
        const Rows rows(ldw, nr);
        constexpr size_t kStride = Rows::kInterleave * sizeof(Block);
        __m256 acc[NT];
        for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
        for (int64_t s = 0; s < steps; ++s) {
            const uint8_t* sb = w + s * kStride;
            if constexpr (Rows::kInterleave > 1) prefetch_group_ahead<Block>(w, s, steps, 8 * ldw);
            else prefetch_rows_share<8>(w + 8 * ldw, ldw, steps * sizeof(Block), s, steps);
            const Act* a[NT];
            for (int t = 0; t < NT; ++t) a[t] = reinterpret_cast<const Act*>(x + (t0 + t) * ldx) + s;
            const Form form(sb, rows);
            __m256i total[NT];
            Form::groups(sb, rows, [&](int g, const auto& u) {
                for (int t = 0; t < NT; ++t) {
                    const int8_t* q = a[t]->qs + G * g;
                    __m256i sum = _mm256_setzero_si256();
                    for (int j0 = 0; j0 < P; j0 += S) {
                        __m256i pairs = Form::mul(u[j0], dword8(q + 4 * j0));
                        for (int j = j0 + 1; j < j0 + S; ++j) pairs = _mm256_add_epi16(pairs, Form::mul(u[j], dword8(q + 4 * j)));
                        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, form.scale[g]));
                    }
                    total[t] = g == 0 ? sum : _mm256_add_epi32(total[t], sum);
                }
            });
            for (int t = 0; t < NT; ++t) {
                const __m256i corr = form.corr(*a[t]);
                const __m256 da = _mm256_set1_ps(a[t]->d);
                fold<typename Form::Type, W256>(acc[t], total[t], corr, _mm256_mul_ps(form.d, da), _mm256_mul_ps(form.dc, da));
            }
        }
        for (int t = 0; t < NT; ++t) {
            alignas(32) float out[8];
            _mm256_store_ps(out, acc[t]);
            for (int r = 0; r < nr; ++r) Y[t * ldy + r] = out[r];
        }
    }
};

// KQuant with the K-quants' products in the 8-row lanes, up to 8 tokens at a time (fewer
// than the form's kMinTokens as KQuant's narrow_row).
template <class V, class Type>
struct KQuantRows8 : KQuant<V, Type> {
    using Base = KQuant<V, Type>;
    using Acts = typename Base::Acts;
    using Form = std::conditional_t<
        std::is_same_v<Type, Q4K>, Rows8Q4KOf<false>, std::conditional_t<std::is_same_v<Type, Q4KR>, Rows8Q4KOf<true>,
        std::conditional_t<std::is_same_v<Type, Q5K>, Rows8Q5K,
                           std::conditional_t<std::is_same_v<Type, Q6K>, Rows8Q6K,
                                              std::conditional_t<std::is_same_v<Type, Q2K>, Rows8Q2K,
                                                                 std::conditional_t<std::is_same_v<Type, Q3K>, Rows8Q3K, Rows8IQ4XS>>>>>>;
    static constexpr int kFusedTokens = 8, kFusedRows = 8;

    // The lanes read the Q8_K rows as they come, narrow_row IQ4_XS's in a copy of its lane
    // order: the one or the other for the whole block (the driver's chunks of more than 8
    // tokens have 4 or more, IQ4_XS's kMinTokens; the other types' narrow_row reads the rows
    // as they come too).
    static Acts prepare_fused(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if (nt >= Form::kMinTokens) return Base::prepare(x, ldx, nt, k);
        return Base::prepare_fused(x, ldx, nt, k);
    }

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (NT >= Form::kMinTokens) Rows8<Form>::template tile<NT>(w, ldw, NR, k / 256, acts.x, acts.ldx, t0, Y, ldy);
        else Base::template fused<NR, NT>(w, ldw, k, acts, t0, Y, ldy);
    }
};

}  // namespace simd
}  // namespace
