// kernels/simd/gemm_kquant_rows16_avx512.h — AVX-512 only: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS
// products of 16 rows and a few tokens (batched decode) with a row in each int32 lane.
// A super-block's quant dwords (4 positions of two or four groups: nibbles, and Q6_K's high
// bits) are transposed to one vector per dword, lane = row. A token's 4 activations at a
// position are then the same for all 16 lanes: vpdpbusd takes them as a {1to16} memory
// broadcast, where the quad lanes (gemm_kquant_quads_avx512.h: 4 rows x 4 groups) need a 128-bit
// broadcast per product, which Zen 4 runs on a vector pipe beside the products (an asm loop
// of independent vpdpbusd ran at 65-70 % of their rate with one per product). Per group one
// vpmulld by the 16 rows' scales, per super-block the mins or offsets as vpdpwssd and one
// float step for 16 rows; the results are stored by lane, with no reduction.
// The transposition (24 shuffles per 8 vectors) and the scale decoding (16 rows at once,
// from their scale bytes as dwords) are shared by the tokens.
// Activations come in QuadForm's copy (gemm_kquant_quads_avx512.h): group g, position j at byte
// 16 (P (g / 4) + j) + 4 (g % 4) of qs (P = 8 positions per group for Q4_K, 4 for Q6_K);
// bsums dword i pairs QuadForm's group sums 2i and 2i + 1.
// Faster than the quad lanes (Q4_K) and KQuant::wide_row (Q2_K, Q3_K, Q5_K, IQ4_XS) from 2
// tokens; Q6_K only from DRAM and from 7 tokens (tests/bench/HISTORY.md, "K-quant rows16 lanes").
// The Q4_K, Q5_K, Q6_K and IQ4_XS forms also read two groups of the 8-row layouts (row_lanes16.h's
// Interleaved16 in place of RowSpan: gemm_kquant_r8.h), for every token count but Q4_K_R8's
// and Q6_K_R8's one token.
// Must not touch: other weight types, Q4_K's and Q6_K's last rows of a range (the quad lanes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_kquant.h"
#include "kernels/simd/row_lanes16.h"

namespace {
namespace simd {

// Byte b of every dword moved to byte To of the dword, the others zero (a constant index
// once the callers' loops are unrolled).
template <int To>
inline __m512i byte_to(__m512i v, int b) {
    constexpr int S = 8 * To;
    constexpr uint32_t kZero = 0x80808080u & ~(0xFFu << S);
    const __m512i slots = _mm512_setr_epi32(0, 4 << S, 8 << S, 12 << S, 0, 4 << S, 8 << S, 12 << S, 0, 4 << S, 8 << S, 12 << S, 0,
                                            4 << S, 8 << S, 12 << S);
    const __m512i idx = _mm512_add_epi32(slots, _mm512_set1_epi32(static_cast<int>(kZero | (static_cast<uint32_t>(b) << S))));
    return _mm512_shuffle_epi8(v, idx);
}

// Sixteen signed scale bytes by lane (sc[c]: bytes 4c .. 4c + 3) as int32 scales, and as
// int16 pairs (groups 2i, 2i + 1, against bsums dword i) times 2^(8 - PairShift): the
// offset's correction (Q6_K, Q3_K).
template <int PairShift>
inline void signed_scales16(const __m512i (&sc)[4], __m512i (&scale)[16], __m512i (&pair)[8]) {
#pragma GCC unroll 16
    for (int g = 0; g < 16; ++g) scale[g] = _mm512_srai_epi32(byte_to<3>(sc[g / 4], g % 4), 24);
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
        pair[i] = _mm512_srai_epi16(_mm512_or_si512(byte_to<1>(sc[i / 2], 2 * (i % 2)), byte_to<3>(sc[i / 2], 2 * (i % 2) + 1)), PairShift);
}

// Values from two sources: low's bits shifted down by low_shift where low_mask is set, and
// high's rotated left by high_rotate elsewhere; kept where keep is set (what comes round or
// across bytes is masked off).
inline __m512i join_bits(__m512i low, __m512i low_shift, char low_mask, __m512i high, __m512i high_rotate, char keep) {
    const __m512i u = _mm512_ternarylogic_epi32(_mm512_srlv_epi32(low, low_shift), _mm512_rolv_epi32(high, high_rotate),
                                                _mm512_set1_epi8(low_mask), 0xE4);  // (low & m) | (high & ~m)
    return _mm512_and_si512(u, _mm512_set1_epi8(keep));
}

// f(g, u) for the 16 groups of 16 of a super-block whose values start as two bits of qs:
// group g = 8n + 2s + h is bits 2s, 2s + 1 of qs dwords 8n + 4h + j (j = 0..3), each
// vector passed through high(n, s, 4h + j, u) (Q3_K's hmask bit).
template <class F, class High>
void two_bit_groups(const uint8_t* qs, const RowSpan& rows, F&& f, High&& high) {
    for (int n = 0; n < 2; ++n) {
        __m512i q[8];
        transpose8(qs + 32 * n, rows, q);
        for (int s = 0; s < 4; ++s) {
            const __m512i shift = _mm512_set1_epi32(2 * s);
            for (int h = 0; h < 2; ++h) {
                __m512i u[4];
                for (int j = 0; j < 4; ++j) u[j] = high(n, s, 4 * h + j, _mm512_srlv_epi32(q[4 * h + j], shift));
                f(8 * n + 2 * s + h, u);
            }
        }
    }
}

// Q4_K's 16-row super-block: groups of 32 (8 positions), the 6-bit scales and mins decoded
// for 16 rows at once (llama.cpp's get_scale_min_k4), d and dmin. Resident: Q4_K_R's, whose
// chunks are read back from their halves (tensor/repack.h).
template <bool Resident>
struct Rows16Q4KOf {
    using Block = strata::BlockQ4_K;
    using Type = Q4KOf<Resident>;
    static constexpr int kPositions = 8, kPairs = 4, kMinTokens = 2;
    // By lane: each group's scale (int32), each correction pair (int16: min of group i, of
    // group i + 4, against the copy's bsums dword i), d and dmin.
    __m512i scale[8], pair[4];
    __m512 d, dc;

    template <class Rows>
    Rows16Q4KOf(const uint8_t* w, const Rows& rows) {
        __m512i h[4];  // d and dmin, scale bytes 0-3, 4-7, 8-11
        rows.dwords4(w, 0, h);
        const __m512i m6 = _mm512_set1_epi8(0x3F), m4 = _mm512_set1_epi8(0x0F), top = _mm512_set1_epi8(0x30);
        const __m512i sc[2] = {_mm512_and_si512(h[1], m6),
                               _mm512_or_si512(_mm512_and_si512(h[3], m4), _mm512_and_si512(_mm512_srli_epi32(h[1], 2), top))};
        const __m512i mn[2] = {_mm512_and_si512(h[2], m6),
                               _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(h[3], 4), m4), _mm512_and_si512(_mm512_srli_epi32(h[2], 2), top))};
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) scale[g] = byte_to<0>(sc[g / 4], g % 4);
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) pair[i] = _mm512_or_si512(byte_to<0>(mn[0], i), byte_to<2>(mn[1], i));
        d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h[0]));
        dc = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(h[0], 16)));
    }

    // f(g, u): group g's 8 position vectors, for g = 0..7. Chunk c (32 qs bytes) holds
    // groups 2c (low nibbles) and 2c + 1 (high).
    template <class Rows, class F>
    static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        nibble_groups<Resident>(w, offsetof(Block, qs), rows, f, [](int, int, __m512i u) { return u; });
    }

protected:
    // The same from the qs at byte `qs` of the block at w, each vector passed through
    // fifth(g, j, u) (Q5_K's bit);
    // InHalves: Q4_K_R's qs, whose 32 bytes 2q + h hold half h of chunks 2q and 2q + 1 (in
    // dwords 0..3 and 4..7): both transposed as they are, chunk 2q + i's positions are their
    // dwords 4i .. 4i + 3, as many instructions as the plain order takes.
    template <bool InHalves, class Rows, class F, class Fifth>
    static void nibble_groups(const uint8_t* w, size_t qs, const Rows& rows, F&& f, Fifth&& fifth) {
        __m512i halves[2][8];
        for (int c = 0; c < 4; ++c) {
            __m512i v[8];
            if constexpr (InHalves) {
                if (c % 2 == 0)
                    for (int h = 0; h < 2; ++h) rows.dwords8(w, qs + 64 * (c / 2) + 32 * h, halves[h]);
                for (int j = 0; j < 8; ++j) v[j] = halves[j / 4][4 * (c % 2) + j % 4];
            } else {
                rows.dwords8(w, qs + 32 * c, v);
            }
            for (int half = 0; half < 2; ++half) {
                __m512i u[8];
                for (int j = 0; j < 8; ++j)
                    u[j] = fifth(2 * c + half, j, _mm512_and_si512(half ? _mm512_srli_epi32(v[j], 4) : v[j], _mm512_set1_epi8(0x0F)));
                f(2 * c + half, u);
            }
        }
    }
};

// Q5_K's: Q4_K's scales, mins and nibbles, and bit g of qh byte l the fifth bit of group g's
// element l (llama.cpp's layout), rotated to bit 4 of the byte.
struct Rows16Q5K : Rows16Q4KOf<false> {
    using Block = strata::BlockQ5_K;
    using Type = Q5K;
    using Rows16Q4KOf::Rows16Q4KOf;  // the same header: d, dmin, 12 scale bytes

    template <class Rows, class F>
    static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        __m512i high[8];
        rows.dwords8(w, offsetof(Block, qh), high);
        nibble_groups<false>(w, offsetof(Block, qs), rows, f, [&](int g, int j, __m512i u) {
            // u | (bit 4 of each byte of the rotated qh)
            return _mm512_ternarylogic_epi32(u, _mm512_rolv_epi32(high[j], _mm512_set1_epi32((4 - g) & 31)), _mm512_set1_epi8(0x10), 0xF8);
        });
    }
};

// Q6_K's 16-row super-block: groups of 16 (4 positions), the int8 scales, d. The offset of 32
// is subtracted as 32 * scale against the bsums (pairs of groups 2i, 2i + 1).
struct Rows16Q6K {
    using Block = strata::BlockQ6_K;
    using Type = Q6K;
    // From 7 tokens: with 4-6 the quad lanes were as fast or faster (kernel_bench, DRAM).
    static constexpr int kPositions = 4, kPairs = 8, kMinTokens = 7;
    // By lane: each group's scale (int32), each correction pair (int16: 32 times the scales
    // of groups 2i, 2i + 1, against the copy's bsums dword i), d.
    __m512i scale[16], pair[8];
    __m512 d, dc;

    template <class Rows>
    Rows16Q6K(const uint8_t* w, const Rows& rows) {
        __m512i sc[4];  // scale bytes 4c .. 4c + 3
        rows.dwords4(w, offsetof(Block, scales), sc);
        signed_scales16<3>(sc, scale, pair);  // pairs: 32 * scale
        d = dc = rows.halves(w, offsetof(Block, d));
    }

    // f(g, u) for g = 0..15. Half n (128 elements) takes ql bytes 64n .. 64n + 63 (A: the
    // first 32, B: the next) and qh bytes 32n .. 32n + 31 (H); dword j of each holds position
    // j of four 32-element runs: A's low nibbles with H's bits 0-1, B's with bits 2-3, A's high
    // nibbles with bits 4-5, B's with bits 6-7.
    template <class Rows, class F>
    static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        for (int n = 0; n < 2; ++n) {
            __m512i a[8], b[8], h[8];
            rows.dwords8(w, offsetof(Block, ql) + 64 * n, a);
            rows.dwords8(w, offsetof(Block, ql) + 64 * n + 32, b);
            rows.dwords8(w, offsetof(Block, qh) + 32 * n, h);
            for (int run = 0; run < 4; ++run) {
                const __m512i* low = run % 2 ? b : a;
                // The nibble (low or high), and H's bits 2 run, 2 run + 1 rotated to bits 4, 5.
                const __m512i nib_shift = _mm512_set1_epi32(4 * (run / 2)), high_rotate = _mm512_set1_epi32((4 - 2 * run) & 31);
                for (int half = 0; half < 2; ++half) {
                    __m512i u[4];
                    for (int j = 0; j < 4; ++j)
                        u[j] = join_bits(low[4 * half + j], nib_shift, 0x0F, h[4 * half + j], high_rotate, 0x3F);
                    f(8 * n + 2 * run + half, u);
                }
            }
        }
    }
};

// Q6_K_R8's (tensor/repack.h's Q6_K planes): Q6_K's header, and half n's 128 values as three
// planes of 32 bytes at 96n, X, Y and Z, byte l of each for element l of the four runs:
// X = run 0's value | run 2's high bits << 6, Y = run 1's | run 3's high bits << 6, Z = run
// 2's low nibble | run 3's << 4. Runs 0 and 1 are a vpandd each, run 2 a shift, a
// vpternlogd and a vpandd, run 3 one shift more: 9 operations per position where the file's
// order takes 16 (join_bits). The half and position loops are unrolled by pragma: inside
// for_chunks' lambda GCC left them rolled (in L2 no faster than the file's order). Faster
// than the file's order in L2 and from DRAM (tests/bench/HISTORY.md, "Q6_K_R8 planes on AVX-512").
struct Rows16Q6KPlanes : Rows16Q6K {
    using Rows16Q6K::Rows16Q6K;

    template <class Rows, class F>
    static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        const __m512i six = _mm512_set1_epi8(0x3F), nibble = _mm512_set1_epi8(0x0F);
        for (int n = 0; n < 2; ++n) {
            __m512i x[8], y[8], z[8];
            rows.dwords8(w, 96 * n, x);
            rows.dwords8(w, 96 * n + 32, y);
            rows.dwords8(w, 96 * n + 64, z);
            for_chunks<4>([&](auto r) {
                constexpr int run = decltype(r)::value;
#pragma GCC unroll 2
                for (int half = 0; half < 2; ++half) {
                    __m512i u[4];
#pragma GCC unroll 4
                    for (int j = 0; j < 4; ++j) {
                        const int at = 4 * half + j;
                        const __m512i whole = run % 2 ? y[at] : x[at];
                        if constexpr (run < 2) {
                            u[j] = _mm512_and_si512(whole, six);
                        } else {
                            const __m512i low = run == 2 ? z[at] : _mm512_srli_epi32(z[at], 4);
                            // (low & 0x0F) | (whole >> 2 & ~0x0F), then the top two bits off
                            u[j] = _mm512_and_si512(_mm512_ternarylogic_epi32(low, _mm512_srli_epi32(whole, 2), nibble, 0xE4), six);
                        }
                    }
                    f(8 * n + 2 * run + half, u);
                }
            });
        }
    }
};

// IQ4_XS's 16-row super-block: groups of 32 (8 positions; sub-block g's codes in qs bytes
// 16g .. 16g + 15, low nibbles then high), looked up as table value + 128 so that vpdpbusd
// takes them unsigned; the offset of 128 is 128 * scale per group against the copy's group
// sums (groups i and i + 4 paired, as Q4_K's mins). Scales ls - 32 from scales_l's nibble g
// and scales_h's bits 2g, 2g + 1; d.
struct Rows16IQ4XS {
    using Block = strata::BlockIQ4_XS;
    using Type = IQ4XS;
    static constexpr int kPositions = 8, kPairs = 4, kMinTokens = 2;
    // By lane: each group's scale (int32), each correction pair (int16: 128 times the scales
    // of groups i, i + 4), d.
    __m512i scale[8], pair[4];
    __m512 d, dc;

    template <class Rows>
    Rows16IQ4XS(const uint8_t* w, const Rows& rows) {
        __m512i h[4];  // d and scales_h, scales_l, the first qs
        rows.dwords4(w, 0, h);
        auto bits = [](__m512i v, int at, int mask) {
            return _mm512_and_si512(_mm512_srlv_epi32(v, _mm512_set1_epi32(at)), _mm512_set1_epi32(mask));
        };
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {
            const __m512i ls = _mm512_or_si512(bits(h[1], 4 * g, 0xF), _mm512_slli_epi32(bits(h[0], 16 + 2 * g, 3), 4));
            scale[g] = _mm512_sub_epi32(ls, _mm512_set1_epi32(32));
        }
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i)
            pair[i] = _mm512_or_si512(_mm512_and_si512(_mm512_slli_epi32(scale[i], 7), _mm512_set1_epi32(0xFFFF)),
                                      _mm512_slli_epi32(scale[i + 4], 23));
        d = dc = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h[0]));
    }

    // f(g, u) for g = 0..7. Chunk c (32 qs bytes) holds groups 2c (dwords 0-3) and 2c + 1
    // (4-7); position j < 4 is the low nibbles of the group's dword j, j >= 4 the high ones
    // of dword j - 4.
    template <class Rows, class F>
    static void groups(const uint8_t* w, const Rows& rows, F&& f) {
        for (int c = 0; c < 4; ++c) {
            __m512i v[8];
            rows.dwords8(w, offsetof(Block, qs) + 32 * c, v);
            for (int half = 0; half < 2; ++half) {
                __m512i u[8];
                for (int j = 0; j < 8; ++j) {
                    const __m512i q = v[4 * half + j % 4];
                    u[j] = iq4_unsigned16(_mm512_and_si512(j < 4 ? q : _mm512_srli_epi32(q, 4), _mm512_set1_epi8(0x0F)));
                }
                f(2 * c + half, u);
            }
        }
    }
};

// Q3_K's 16-row super-block: groups of 16 (4 positions), values u = two bits of qs plus 4
// where the hmask bit is set (the weight is u - 4), the 6-bit scales (q3k_scale_words on
// dwords, 16 rows at once), d. The offset of 4 is 4 * scale against the bsums (pairs of
// groups 2i, 2i + 1).
struct Rows16Q3K {
    using Block = strata::BlockQ3_K;
    using Type = Q3K;
    static constexpr int kPositions = 4, kPairs = 8, kMinTokens = 2;
    // By lane: each group's scale (int32), each correction pair (int16: 4 times the scales of
    // groups 2i, 2i + 1, against the copy's bsums dword i), d.
    __m512i scale[16], pair[8];
    __m512 d, dc;

    Rows16Q3K(const uint8_t* w, const RowSpan& rows) {
        // The 16 bytes that end the block (it has no 2 more after its scales and d): qs
        // 62-63 and scales 0-1, scales 2-5, 6-9, scales 10-11 and d.
        __m512i h[4];
        transpose4(w + offsetof(Block, scales) - 2, rows, h);
        auto word = [&](int i) { return _mm512_or_si512(_mm512_srli_epi32(h[i], 16), _mm512_slli_epi32(h[i + 1], 16)); };
        using Words = uint32_t __attribute__((vector_size(64)));
        Words words[4];
        q3k_unpack_words<Words>(Words(word(0)), Words(word(1)), Words(word(2)), words);
        __m512i sc[4];
        for (int c = 0; c < 4; ++c) sc[c] = _mm512_sub_epi8(__m512i(words[c]), _mm512_set1_epi8(32));
        signed_scales16<6>(sc, scale, pair);  // pairs: 4 * scale
        d = dc = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(h[3], 16)));
    }

    // f(g, u) for g = 0..15 (two_bit_groups), plus 4 where bit 4n + s of the bytes of hmask
    // dword 4h + j is set (rotated to bit 2 of its byte).
    template <class F>
    static void groups(const uint8_t* w, const RowSpan& rows, F&& f) {
        __m512i hm[8];
        transpose8(w + offsetof(Block, hmask), rows, hm);
        two_bit_groups(w + offsetof(Block, qs), rows, f, [&](int n, int s, int dword, __m512i low) {
            return join_bits(low, _mm512_setzero_si512(), 0x03, hm[dword], _mm512_set1_epi32((2 - 4 * n - s) & 31), 0x07);
        });
    }
};

// Q2_K's 16-row super-block: groups of 16 (4 positions), values of two bits, each group's
// scale and min from the low and high nibbles of its scale byte, d and dmin.
struct Rows16Q2K {
    using Block = strata::BlockQ2_K;
    using Type = Q2K;
    static constexpr int kPositions = 4, kPairs = 8, kMinTokens = 2;
    // By lane: each group's scale (int32), each correction pair (int16: the mins of groups
    // 2i, 2i + 1, against the copy's bsums dword i), d and dmin.
    __m512i scale[16], pair[8];
    __m512 d, dc;

    Rows16Q2K(const uint8_t* w, const RowSpan& rows) {
        __m512i sc[4];  // scale bytes 4c .. 4c + 3
        transpose4(w + offsetof(Block, scales), rows, sc);
#pragma GCC unroll 16
        for (int g = 0; g < 16; ++g) scale[g] = _mm512_and_si512(byte_to<0>(sc[g / 4], g % 4), _mm512_set1_epi32(0x0F));
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i)
            pair[i] = _mm512_srli_epi16(_mm512_or_si512(byte_to<0>(sc[i / 2], 2 * (i % 2)), byte_to<2>(sc[i / 2], 2 * (i % 2) + 1)), 4);
        const __m512i both = _mm512_i32gather_epi32(rows.lanes, w + offsetof(Block, d), 1);  // d, dmin
        d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(both));
        dc = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(both, 16)));
    }

    // f(g, u) for g = 0..15 (two_bit_groups).
    template <class F>
    static void groups(const uint8_t* w, const RowSpan& rows, F&& f) {
        two_bit_groups(w + offsetof(Block, qs), rows, f,
                       [](int, int, int, __m512i low) { return _mm512_and_si512(low, _mm512_set1_epi8(0x03)); });
    }
};

template <class V, class Form>
struct Rows16 {
    using Block = typename Form::Block;
    using Act = strata::BlockQ8_K;
    static constexpr int P = Form::kPositions;

    static __m512i act4(const Act& a, int g, int j) { return dword16(a.qs + 16 * (P * (g / 4) + j) + 4 * (g % 4)); }
    static __m512i bsum_pair(const Act& a, int i) { return dword16(a.bsums + 2 * i); }

    // Rows w .. w + nr - 1 (nr <= 16, ldw apart, `steps` super-blocks each) against NT
    // tokens (acts: QuadForm's copy, token t0 + t of super-block s at x + s * ldx + (t0 + t)
    // * sizeof(Act)), stored to Y. The rows are taken whole (the copy stays in L2): 16 rows
    // are then one contiguous run, and the next 16 rows' run is brought into L2 in equal
    // shares as the super-blocks go: faster from DRAM than parts of k kept in L1, where the
    // rows going through the parts one after another read 16 short streams (tests/bench/HISTORY.md,
    // "K-quant rows16 lanes").
    // Rows: RowSpan, or Interleaved16 for two 8-row groups (w the first's start, super-block
    // s 8 blocks on in each).
    template <int NT, class Rows = RowSpan>
    static void tile(const uint8_t* w, size_t ldw, int nr, int64_t steps, const uint8_t* x, size_t ldx, int64_t t0, float* Y,
                     size_t ldy) {
        const Rows rows(ldw, nr);
        constexpr size_t kStride = Rows::kInterleave * sizeof(Block);
        __m512 acc[NT];
        for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
        for (int64_t s = 0; s < steps; ++s) {
            const uint8_t* sb = w + s * kStride;
            // Two 8-row groups are two streams, each continuing into its twin of the next tile.
            if constexpr (Rows::kInterleave > 1) {
                prefetch_group_ahead<Block>(w, s, steps, 16 * ldw);
                if (rows.second) prefetch_group_ahead<Block>(w + rows.second, s, steps, 16 * ldw);
            } else {
                prefetch_rows_share<16>(w + 16 * ldw, ldw, steps * sizeof(Block), s, steps);
            }
            const Act* a = reinterpret_cast<const Act*>(x + s * ldx) + t0;
            const Form form(sb, rows);
            __m512i total[NT];
            Form::groups(sb, rows, [&](int g, const __m512i (&u)[P]) {
                __m512i group[NT];
                for (int t = 0; t < NT; ++t) group[t] = _mm512_setzero_si512();
                for (int j = 0; j < P; ++j)
                    for (int t = 0; t < NT; ++t) group[t] = _mm512_dpbusd_epi32(group[t], u[j], act4(a[t], g, j));
                const __m512i scale = form.scale[g];
                for (int t = 0; t < NT; ++t) {
                    const __m512i scaled = _mm512_mullo_epi32(group[t], scale);
                    total[t] = g == 0 ? scaled : _mm512_add_epi32(total[t], scaled);
                }
            });
            for (int t = 0; t < NT; ++t) {
                __m512i corr = _mm512_setzero_si512();
                for (int i = 0; i < Form::kPairs; ++i) corr = _mm512_dpwssd_epi32(corr, form.pair[i], bsum_pair(a[t], i));
                const __m512 da = _mm512_set1_ps(a[t].d);
                fold<typename Form::Type, V>(acc[t], total[t], corr, _mm512_mul_ps(form.d, da), _mm512_mul_ps(form.dc, da));
            }
        }
        const auto stored = static_cast<__mmask16>((1u << nr) - 1);
        for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(Y + t * ldy, stored, Rows::by_row(acc[t]));
    }
};

}  // namespace simd
}  // namespace
