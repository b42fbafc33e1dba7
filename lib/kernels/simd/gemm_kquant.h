// kernels/simd/gemm_kquant.h — Q2_K..Q6_K and IQ4_XS weights against Q8_K activations.
// Every K-quant super-block unpacks (with AVX2 integer code, which both variants run) to
// the same form: 256 unsigned small integers u in activation order, the int16 scale of
// each u pair, and a correction c per 16-element group, so that
//     dot = d * da * sum(scale * u * a) - dc * da * sum_g(c_g * bsum_g)
// (dc = dmin for the types with mins, dc = d for the types with an offset, where the
// integer subtraction happens before the float step, except on the AVX-512 path for 2..8
// tokens, which takes the correction in floats). The product is then one maddubs
// and one int16 dot per vector of u, the same for every type. IQ4_XS's u (table value
// + 128) spans 1..241, where maddubs could saturate: for such wide types the pair products
// are taken as (u - 128) * a, and the correction (128 * scale per group, which the
// AVX-512 many-token path needs) is left out.
// Must not touch: other weight families.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_driver.h"
#include "kernels/q3k_scales.h"
#include "kernels/simd/intrinsics.h"
#include "kernels/simd/nibbles.h"
#include "tensor/blocks.h"

namespace {
namespace simd {

struct KBlock {
    alignas(64) uint8_t u[256];       // weights as unsigned integers
    alignas(64) int16_t scale[128];   // the group scale of each pair (u[2i], u[2i+1])
    alignas(32) int16_t corr[16];     // per 16-group: the factor of the activation bsum
    float d, dc;
};

inline float half(uint16_t h) { return _cvtsh_ss(h); }

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline void store256(void* p, __m256i v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }

// Calls fn(Count<c>{}) for c = 0 .. N-1, unrolled at compile time.
template <int N, int C = 0, class Fn>
void for_chunks(Fn&& fn) {
    if constexpr (C < N) {
        fn(Count<C>{});
        for_chunks<N, C + 1>(fn);
    }
}

// A pshufb pattern repeating int16 word W0 over the low 128 bits and W1 over the high.
template <int W0, int W1>
__m256i word_pattern() {
    constexpr char a = 2 * W0, b = 2 * W0 + 1, c = 2 * W1, d = 2 * W1 + 1;
    return _mm256_setr_epi8(a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b, c, d, c, d, c, d, c, d, c, d, c, d, c, d, c, d);
}

// A pshufb pattern repeating int16 word A over words 0..3, B over 4..7 (low 128 bits), C
// over 8..11 and D over 12..15 (high).
template <int A, int B, int C, int D>
__m256i quarter_words() {
    const auto w = [](int x) { return static_cast<short>(2 * x | (2 * x + 1) << 8); };
    return _mm256_setr_epi16(w(A), w(A), w(A), w(A), w(B), w(B), w(B), w(B), w(C), w(C), w(C), w(C), w(D), w(D), w(D), w(D));
}

// The AVX-512 helpers below take their vector type as a defaulted template parameter, so
// that the AVX2 variant, which never instantiates them, sees no 512-bit signature.

// AVX-512: the words A, B, C, D of a vector, each repeated over a quarter (8 words).
template <int A, int B, int C, int D, class I = __m512i>
I word_quarters(I v) {
    constexpr auto two = [](int w) { return w | w << 16; };
    const __m512i index = _mm512_setr_epi32(two(A), two(A), two(A), two(A), two(B), two(B), two(B), two(B), two(C), two(C),
                                            two(C), two(C), two(D), two(D), two(D), two(D));
    return _mm512_permutexvar_epi16(index, v);
}

// AVX-512: shift counts of int16 lanes, A in the low 256 bits and B in the high ones.
template <int A, int B, class I = __m512i>
I shift_counts() {
    return _mm512_inserti64x4(_mm512_set1_epi16(A), _mm256_set1_epi16(B), 1);
}

// Group scales as int16 words, kept in both 128-bit halves of lo (words 0..7) and hi
// (words 8..15), from which the scale vector of any 32-element chunk is one shuffle, and
// that of chunks 2P and 2P + 1 together (AVX-512) one permutation.
struct Scales {
    __m256i lo, hi;
    Scales() = default;
    explicit Scales(__m256i s16)
        : lo(_mm256_permute2x128_si256(s16, s16, 0x00)), hi(_mm256_permute2x128_si256(s16, s16, 0x11)) {}
    // 16-element groups: chunk C holds groups 2C (low half) and 2C + 1 (high half).
    template <int C>
    __m256i groups16() const {
        return _mm256_shuffle_epi8(C < 4 ? lo : hi, word_pattern<(2 * C) % 8, (2 * C + 1) % 8>());
    }
    // 32-element groups (words 0..7): chunk C is group C.
    template <int C>
    __m256i groups32() const {
        return _mm256_shuffle_epi8(lo, word_pattern<C, C>());
    }
    // KQuant::kPacked's scales of chunks 2P and 2P + 1 (16-element groups 4P .. 4P + 3) as
    // words in packs order: four each of groups 4P and 4P + 2 in the low 128 bits, 4P + 1
    // and 4P + 3 in the high.
    template <int P>
    __m256i packed16() const {
        constexpr int w = (4 * P) % 8;
        return _mm256_shuffle_epi8(P < 2 ? lo : hi, quarter_words<w, w + 2, w + 1, w + 3>());
    }
    template <int P, class I = __m512i>
    I pair16() const {
        return word_quarters<(4 * P) % 8, (4 * P + 1) % 8, (4 * P + 2) % 8, (4 * P + 3) % 8>(_mm512_castsi256_si512(P < 2 ? lo : hi));
    }
    template <int P, class I = __m512i>
    I pair32() const {
        return word_quarters<2 * P, 2 * P, 2 * P + 1, 2 * P + 1>(_mm512_castsi256_si512(lo));
    }
};

// Bytes shifted so that bit From lands on bit To of each byte, other bits unmasked;
// callers mask. Shifts of 16-bit lanes never move a bit onto the masked position of the
// neighbouring byte for the masks used here.
template <int From, int To>
__m256i move_bit(__m256i b) {
    if constexpr (From > To) return _mm256_srli_epi16(b, From - To);
    else if constexpr (From < To) return _mm256_slli_epi16(b, To - From);
    else return b;
}

// Q2_K / Q3_K: four 2-bit planes per 32 bytes of qs; element 128h + 32j + l is bits 2j of
// qs[32h + l].
template <int J>
__m256i two_bits(__m256i q) {
    return _mm256_and_si256(move_bit<2 * J, 0>(q), _mm256_set1_epi8(3));
}

// Each type gives, for super-block x: Prep prep(x) (what the chunks share), u<C>(x, p)
// the 32 unsigned weights of chunk C (elements 32C..32C+31), scale<C>(p) their pair
// scales, scales16(p) the scale of each 16-element group (kGroup elements share one),
// corr(p) the 16 group corrections, and d(x), dc(x).

// A pshufb pattern making int16 word w of each 128-bit half byte S_w of that half,
// zero-extended (the pattern's high byte, 0xFF, selects zero).
template <int... S>
__m256i zext_words() {
    static_assert(sizeof...(S) == 16);
    return _mm256_setr_epi16(static_cast<short>(S | 0xFF00)...);
}

// zext_words with byte A in words 0..3, B in 4..7 (low 128 bits), C in 8..11 and D in
// 12..15 (high).
template <int A, int B, int C, int D>
__m256i zext_quarters() {
    return zext_words<A, A, A, A, B, B, B, B, C, C, C, C, D, D, D, D>();
}

// The scale of each 16-element group, 32-group g / 2's, from scale words 0..7 (Scales::lo).
inline __m256i word_pattern_pairs() {
    return _mm256_setr_epi8(0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9, 8, 9, 10, 11, 10, 11, 12, 13, 12, 13,
                            14, 15, 14, 15);
}

// 16 bytes in both 128-bit halves.
inline __m256i halves(__m128i v) { return _mm256_broadcastsi128_si256(v); }

// Q4_K / Q5_K: 6-bit scales and mins of 32-element groups packed in 12 bytes b, as bytes
// 0..7 (scales) and 8..15 (mins) of both 128-bit halves:
//   sc[0..3] = b[0..3] & 63                 m[0..3] = b[4..7] & 63
//   sc[4..7] = b[8..11] & 15 | b[0..3] >> 6 << 4
//   m[4..7]  = b[8..11] >> 4 | b[4..7] >> 6 << 4
// Decoded with byte shuffles of a broadcast load (which reads into qs, following in the
// block), so that every scale vector is one shuffle of these bytes, zero-extending. Zen 4
// runs shuffles on two of its four vector pipes, and they bound narrow_row: widening the
// bytes to words and copying them across 128-bit lanes first (3 shuffles per super-block)
// made Q4_K decode 11 % slower in cache.
struct K4Prep {
    __m256i b;
    K4Prep() = default;
    explicit K4Prep(const uint8_t* packed) {
        const __m256i x = halves(_mm_loadu_si128(reinterpret_cast<const __m128i*>(packed)));
        const __m256i low_src =
            _mm256_shuffle_epi8(x, halves(_mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11)));
        const __m256i high_src =
            _mm256_shuffle_epi8(x, halves(_mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7)));
        const __m256i low = _mm256_or_si256(
            _mm256_and_si256(low_src, halves(_mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0))),
            _mm256_and_si256(_mm256_srli_epi16(low_src, 4),
                             halves(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15))));
        b = _mm256_or_si256(low, _mm256_and_si256(_mm256_srli_epi16(high_src, 2), _mm256_set1_epi8(0x30)));
    }
    // Chunk C (32-group C): its scale in every word.
    template <int C>
    __m256i groups32() const { return _mm256_shuffle_epi8(b, _mm256_set1_epi16(static_cast<short>(C | 0xFF00))); }
    // Group g of 16 takes the scale (scales16) or the min (corr) of its 32-group g / 2.
    __m256i scales16() const { return _mm256_shuffle_epi8(b, zext_words<0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7>()); }
    __m256i corr() const { return _mm256_shuffle_epi8(b, zext_words<8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15>()); }
    // KQuant::kPacked's scales of chunks 2P and 2P + 1 (32-groups 2P, 2P + 1), words in
    // packs order: four of 2P, then four of 2P + 1, in both 128-bit halves.
    template <int P>
    __m256i packed32() const {
        return _mm256_shuffle_epi8(b, zext_quarters<2 * P, 2 * P + 1, 2 * P, 2 * P + 1>());
    }
    // AVX-512: chunks 2P and 2P + 1, as Scales::pair32 takes them from the scale words.
    template <int P, class I = __m512i>
    I pair32() const { return Scales(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(b))).pair32<P>(); }
};

// Chunk C of 4-bit quants stored as in Q4_K/Q5_K: the low (C even) or high nibbles of
// qs[32(C / 2) + l].
template <int C>
__m256i nibble_chunk(const uint8_t* qs) {
    const __m256i q = load256(qs + 32 * (C / 2));
    return _mm256_and_si256(C % 2 ? _mm256_srli_epi16(q, 4) : q, _mm256_set1_epi8(0x0F));
}

// What Q4_K and Q5_K share: scales and mins of 32-element groups, d and dmin.
template <class B>
struct K4Common {
    using Block = B;
    static constexpr bool kOffset = false, kWide = false;
    static constexpr int kGroup = 32;  // elements sharing a scale
    template <int C>
    static __m256i scale(const K4Prep& p) { return p.groups32<C>(); }
    template <int P, class I = __m512i>
    static I scale_pair(const K4Prep& p) { return p.pair32<P>(); }
    template <int P>
    static __m256i packed_scale(const K4Prep& p) { return p.packed32<P>(); }
    static __m256i scales16(const K4Prep& p) { return p.scales16(); }
    static __m256i corr(const K4Prep& p) { return p.corr(); }
    static float d(const Block& x) { return half(x.d); }
    static float dc(const Block& x) { return half(x.dmin); }
};

// Q4_K's 32-byte vector P of qs (chunks 2P and 2P + 1 in its low and high nibbles): as
// stored, or (Resident) from the two 16-byte halves Q4_K_R keeps 32 bytes apart.
template <int P, bool Resident>
__m256i q4k_vector(const uint8_t* qs) {
    if constexpr (!Resident) return load256(qs + 32 * P);
    else return load_halves(qs + 64 * (P / 2) + 16 * (P % 2), 32);
}

// Q4_K, and (Resident) Q4_K_R read back in Q4_K's order.
template <bool Resident>
struct Q4KOf : K4Common<strata::BlockQ4_K> {
    using Prep = K4Prep;
    static Prep prep(const Block& x) { return Prep(x.scales); }
    template <int C>
    static __m256i u(const Block& x, const Prep&) {
        const __m256i q = q4k_vector<C / 2, Resident>(x.qs);
        return _mm256_and_si256(C % 2 ? _mm256_srli_epi16(q, 4) : q, _mm256_set1_epi8(0x0F));
    }
    // AVX-512: chunks 2P and 2P + 1, the low and high nibbles of the same 32 bytes.
    template <int P, class I = __m512i>
    static I u_pair(const Block& x, const Prep&) {
        const __m512i q = _mm512_broadcast_i64x4(q4k_vector<P, Resident>(x.qs));
        return _mm512_and_si512(_mm512_srlv_epi16(q, shift_counts<0, 4>()), _mm512_set1_epi8(0x0F));
    }
};
using Q4K = Q4KOf<false>;
using Q4KR = Q4KOf<true>;

struct Q5K : K4Common<strata::BlockQ5_K> {
    struct Prep : K4Prep {
        __m256i qh;
        Prep() = default;
        explicit Prep(const Block& x) : K4Prep(x.scales), qh(load256(x.qh)) {}
    };
    static Prep prep(const Block& x) { return Prep(x); }
    // Element 32C + l takes bit C of qh[l] as its fifth bit.
    template <int C>
    static __m256i u(const Block& x, const Prep& p) {
        return _mm256_or_si256(nibble_chunk<C>(x.qs), _mm256_and_si256(move_bit<C, 4>(p.qh), _mm256_set1_epi8(0x10)));
    }
};

// What Q6_K, Q3_K and Q2_K share: a scale for each 16-element group, as words (s16) and
// as Scales (s) in their Prep (K16Prep, or a type's own Prep built on it), and d.
struct K16Prep {
    __m256i s16;
    Scales s;
    K16Prep() = default;
    explicit K16Prep(__m256i v) : s16(v), s(v) {}
};

template <class B>
struct K16Common {
    using Block = B;
    static constexpr bool kWide = false;
    static constexpr int kGroup = 16;  // elements sharing a scale
    template <int C>
    static __m256i scale(const K16Prep& p) { return p.s.groups16<C>(); }
    template <int P, class I = __m512i>
    static I scale_pair(const K16Prep& p) { return p.s.pair16<P>(); }
    template <int P>
    static __m256i packed_scale(const K16Prep& p) { return p.s.packed16<P>(); }
    static __m256i scales16(const K16Prep& p) { return p.s16; }
    static float d(const Block& x) { return half(x.d); }
};

struct Q6K : K16Common<strata::BlockQ6_K> {
    static constexpr bool kOffset = true;  // u - 32
    using Prep = K16Prep;
    static Prep prep(const Block& x) {
        return Prep(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales))));
    }
    // Half h = C / 4, plane i = C % 4: low (i < 2) or high nibbles of ql[64h + 32(i % 2) + l],
    // plus bits 2i, 2i+1 of qh[32h + l] as bits 4, 5.
    template <int C>
    static __m256i u(const Block& x, const Prep&) {
        constexpr int h = C / 4, i = C % 4;
        const __m256i ql = load256(x.ql + 64 * h + 32 * (i % 2));
        const __m256i lo = _mm256_and_si256(i < 2 ? ql : _mm256_srli_epi16(ql, 4), _mm256_set1_epi8(0x0F));
        const __m256i hi = _mm256_and_si256(move_bit<2 * i, 4>(load256(x.qh + 32 * h)), _mm256_set1_epi8(0x30));
        return _mm256_or_si256(lo, hi);
    }
    // AVX-512: chunks 2P and 2P + 1 (planes i and i + 1, i = 2(P % 2), of half P / 2):
    // the same nibbles of 64 consecutive bytes of ql, and qh's bits 2i, 2i + 1 (low 256
    // bits) and 2i + 2, 2i + 3 (high) moved to bits 4, 5.
    template <int P, class I = __m512i>
    static I u_pair(const Block& x, const Prep&) {
        constexpr int h = P / 2, i = 2 * (P % 2);
        const __m512i ql = _mm512_loadu_si512(x.ql + 64 * h);
        const __m512i lo = _mm512_and_si512(i == 0 ? ql : _mm512_srli_epi16(ql, 4), _mm512_set1_epi8(0x0F));
        const __m512i qh = _mm512_broadcast_i64x4(load256(x.qh + 32 * h));
        const __m512i moved = i == 0 ? _mm512_sllv_epi16(qh, shift_counts<4, 2>()) : _mm512_srlv_epi16(qh, shift_counts<0, 2>());
        return _mm512_or_si512(lo, _mm512_and_si512(moved, _mm512_set1_epi8(0x30)));
    }
    static __m256i corr(const Prep& p) { return _mm256_slli_epi16(p.s16, 5); }
    static float dc(const Block& x) { return half(x.d); }
};

struct Q3K : K16Common<strata::BlockQ3_K> {
    static constexpr bool kOffset = true;  // u - 4
    struct Prep : K16Prep {
        __m256i hm;
        Prep() = default;
        Prep(__m256i v, __m256i hmask) : K16Prep(v), hm(hmask) {}
    };
    // The sixteen scales, q3k_scales.h's packing in vector lanes: dword k of the result takes
    // the nibbles of packed word k % 2 (low ones for k < 2, high for k >= 2) and, as bits 4
    // and 5, bits 2k and 2k + 1 of each byte of word 2. One load of qs' last word and the
    // three packed words (inside the block) and 10 vector instructions, where the scalar
    // unpacking and its transfer took 35 (one token's narrow_row loop on AVX2: 130 -> 105
    // instructions per super-block).
    static __m256i signed_scales(const Block& x) {
        static_assert(offsetof(Block, scales) >= 4 && offsetof(Block, scales) + sizeof x.scales <= sizeof(Block));
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const uint8_t*>(&x) + offsetof(Block, scales) - 4));
        const __m128i low = _mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 1)), _mm_setr_epi32(0, 0, 4, 4));
        const __m128i high = _mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(3, 3, 3, 3)), _mm_setr_epi32(0, 2, 4, 6));
        const __m128i sc = _mm_or_si128(_mm_and_si128(low, _mm_set1_epi8(0x0F)), _mm_slli_epi32(_mm_and_si128(high, _mm_set1_epi8(3)), 4));
        return _mm256_cvtepi8_epi16(_mm_sub_epi8(sc, _mm_set1_epi8(32)));
    }
    static Prep prep(const Block& x) { return Prep(signed_scales(x), load256(x.hmask)); }
    // Two bits of plane C % 4 of qs[32(C / 4) + l], plus 4 when hmask bit C is set.
    template <int C>
    static __m256i u(const Block& x, const Prep& p) {
        const __m256i high = _mm256_and_si256(move_bit<C, 2>(p.hm), _mm256_set1_epi8(4));
        return _mm256_or_si256(two_bits<C % 4>(load256(x.qs + 32 * (C / 4))), high);
    }
    static __m256i corr(const Prep& p) { return _mm256_slli_epi16(p.s16, 2); }
    static float dc(const Block& x) { return half(x.d); }
};

struct Q2K : K16Common<strata::BlockQ2_K> {
    static constexpr bool kOffset = false;
    struct Prep : K16Prep {
        __m256i mins;
        Prep() = default;
        Prep(__m256i scales, __m256i m) : K16Prep(scales), mins(m) {}
    };
    static Prep prep(const Block& x) {
        const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        return Prep(_mm256_cvtepu8_epi16(_mm_and_si128(sc, m4)),
                    _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), m4)));
    }
    template <int C>
    static __m256i u(const Block& x, const Prep&) {
        return two_bits<C % 4>(load256(x.qs + 32 * (C / 4)));
    }
    static __m256i corr(const Prep& p) { return p.mins; }
    static float dc(const Block& x) { return half(x.dmin); }
};

struct IQ4XS {
    using Block = strata::BlockIQ4_XS;
    static constexpr bool kOffset = true;  // u - 128
    static constexpr bool kWide = true;    // u = table value + 128 spans 1..241
    static constexpr int kGroup = 32;      // elements sharing a scale
    using Prep = Scales;                   // its scale words 0..7
    // The eight 6-bit scales less 32, as words 0..7: nibble ib of scales_l and bits 2ib,
    // 2ib + 1 of scales_h, spread to byte ib each.
    static Prep prep(const Block& x) {
        uint32_t low;
        std::memcpy(&low, x.scales_l, sizeof low);
        const uint64_t ls = _pdep_u64(low, 0x0F0F0F0F0F0F0F0FULL) | _pdep_u64(x.scales_h, 0x0303030303030303ULL) << 4;
        const __m128i bytes = _mm_move_epi64(_mm_sub_epi8(_mm_cvtsi64_si128(static_cast<long long>(ls)), _mm_set1_epi8(32)));
        return Prep(_mm256_cvtepi8_epi16(bytes));
    }
    // Chunk C is sub-block C: the codes of qs[16C..16C + 15].
    template <int C>
    static __m256i u(const Block& x, const Prep&) {
        return iq4_unsigned(nibbles(x.qs + 16 * C));
    }
    // AVX2 decode, in lane order (KQuant::kLanes): chunk C holds sub-blocks 2P and 2P + 1
    // (P = C / 2) in its two 128-bit lanes, the low (C even) or high nibbles of each, so
    // that 32 bytes of qs unpack to two chunks with one shift and two masks, and both
    // chunks take one scale vector. The weights come signed (u - 128), which the product
    // takes as they are.
    template <int C>
    static __m256i w_lanes(const Block& x, const Prep&) {
        return iq4_signed(nibble_chunk<C>(x.qs));
    }
    template <int C>
    static __m256i scale_lanes(const Prep& p) { return p.groups16<C / 2>(); }
    // AVX-512 decode (KQuant::kVnni): w_lanes' weights unsigned (u = w + 128), and the
    // scales of chunks 2P and 2P + 1 as int32 lanes (word 2P low, 2P + 1 high; a word's
    // high byte repeated sign-extends it).
    template <int C>
    static __m256i u_lanes(const Block& x, const Prep&) {
        return iq4_unsigned(nibble_chunk<C>(x.qs));
    }
    template <int P>
    static __m256i scale32_lanes(const Prep& p) {
        constexpr char a = 4 * P, b = 4 * P + 1, c = 4 * P + 2, d = 4 * P + 3;
        return _mm256_shuffle_epi8(p.lo, _mm256_setr_epi8(a, b, b, b, a, b, b, b, a, b, b, b, a, b, b, b, c, d, d, d, c, d, d,
                                                          d, c, d, d, d, c, d, d, d));
    }
    // AVX-512: sub-blocks 2P and 2P + 1 (qs[32P..32P + 31], 16 bytes each), as the 128-bit
    // lanes [low nibbles of the first 16 | high nibbles | low of the second | high], looked up.
    template <int P, class I = __m512i>
    static I u_pair(const Block& x, const Prep&) {
        const __m512i bytes = _mm512_castsi256_si512(load256(x.qs + 32 * P));
        const __m512i lanes = _mm512_shuffle_i64x2(bytes, bytes, 0x50);  // 128-bit lanes 0, 0, 1, 1
        const __m512i counts = _mm512_broadcast_i64x4(_mm256_setr_epi16(0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4));
        const __m512i codes = _mm512_and_si512(_mm512_srlv_epi16(lanes, counts), _mm512_set1_epi8(0x0F));
        const __m128i values = _mm_loadu_si128(reinterpret_cast<const __m128i*>(strata::kIQ4NLValues));
        return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_xor_si128(values, _mm_set1_epi8(-128))), codes);
    }
    template <int C>
    static __m256i scale(const Prep& p) { return p.groups32<C>(); }
    template <int P, class I = __m512i>
    static I scale_pair(const Prep& p) { return p.pair32<P>(); }
    static __m256i scales16(const Prep& p) { return _mm256_shuffle_epi8(p.lo, word_pattern_pairs()); }
    static __m256i corr(const Prep& p) { return _mm256_slli_epi16(scales16(p), 7); }
    static float d(const Block& x) { return half(x.d); }
    static float dc(const Block& x) { return half(x.d); }
};

// The unpacked form of a super-block, for products that reuse it over many tokens.
template <class Type>
void unpack_kblock(const typename Type::Block& x, KBlock& o) {
    const typename Type::Prep p = Type::prep(x);
    for_chunks<8>([&](auto c) {
        constexpr int C = decltype(c)::value;
        store256(o.u + 32 * C, Type::template u<C>(x, p));
        store256(o.scale + 16 * C, Type::template scale<C>(p));
    });
    store256(o.corr, Type::corr(p));
    o.d = Type::d(x);
    o.dc = Type::dc(x);
}

// 256-bit float/int ops with the names of the V traits, for the fused path both variants
// run at this width.
struct W256 {
    using F = __m256;
    using I = __m256i;
    static F zero() { return _mm256_setzero_ps(); }
    static F set1(float x) { return _mm256_set1_ps(x); }
    static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
    static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
    static F fnma(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
    static I sub_i32(I a, I b) { return _mm256_sub_epi32(a, b); }
};

// Adds one super-block's integer sums to a float accumulator, given d * da and dc * da in
// every lane:
//   acc += d * da * sum - dc * da * corr   (offset types subtract in integers first).
template <class Type, class W>
void fold(typename W::F& acc, typename W::I sum, typename W::I corr, typename W::F d_da, typename W::F dc_da) {
    if constexpr (Type::kOffset) {
        acc = W::fma(W::cvt(W::sub_i32(sum, corr)), d_da, acc);
    } else {
        acc = W::fma(W::cvt(sum), d_da, acc);
        acc = W::fnma(W::cvt(corr), dc_da, acc);
    }
}

// fold's factors at 256 bits for super-block x and a token's scale da. Where the block
// stores d and dmin side by side (Q2_K, Q4_K, Q5_K), both are converted and multiplied in
// one go: 4 instructions fewer per super-block and token than two scalar conversions and
// products, the same values.
struct Factors256 {
    __m256 d_da, dc_da;
};
template <class Type>
Factors256 factors256(const typename Type::Block& x, float da) {
    using Block = typename Type::Block;
    if constexpr (requires { x.dmin; }) {
        static_assert(offsetof(Block, dmin) == offsetof(Block, d) + sizeof x.d);
        uint32_t bits;
        std::memcpy(&bits, reinterpret_cast<const uint8_t*>(&x) + offsetof(Block, d), sizeof bits);
        const __m128 f = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(bits))), _mm_set1_ps(da));
        return {_mm256_broadcastss_ps(f), _mm256_permutevar8x32_ps(_mm256_castps128_ps256(f), _mm256_set1_epi32(1))};
    } else {
        return {_mm256_set1_ps(Type::d(x) * da), _mm256_set1_ps(Type::dc(x) * da)};
    }
}

// A one-row pass's prefetch at super-block b (KQuant::narrow_row's policy, measured there):
// the super-block kBlocksAhead later into L1, however long the row.
constexpr int kBlocksAhead = 32;
template <class Block>
void prefetch_ahead(const Block* b) {
    prefetch_bytes(b + kBlocksAhead, sizeof(Block));
}

template <class V, class Type>
struct KQuant {
    using F = typename V::F;
    using I = typename V::I;
    using WBlock = KBlock;
    using Act = strata::BlockQ8_K;
    static constexpr int R = V::kBytes == 64 ? 4 : 2;
    static constexpr int T = 4;
    using Acc = F;
    static Acc acc_zero() { return V::zero(); }
    static float acc_sum(const Acc& a) { return V::hsum(a); }

    // Q8_K rows are used in place. The fused path of up to kFusedTokens tokens prepares
    // more (prepare_fused): for wide_row each super-block's 16 group sums of activations
    // times the token's scale, as floats (bsumf[(t * steps + s) * 16 + g]), so that a
    // super-block's min or offset correction is one float FMA per (row, token) rather than
    // an integer dot, a conversion and an FMA; for narrow_row and a type with a lane
    // order, a copy of the activations in that order (lane_ordered).
    struct Acts {
        const uint8_t* x;
        size_t ldx;
        const float* bsumf = nullptr;
        int32_t* offsets = nullptr;  // kVnni: lane_offsets of each super-block
        int64_t steps = 0;
        const Act* step(int64_t t, int64_t s) const { return reinterpret_cast<const Act*>(x + t * ldx) + s; }
        const float* group_sums(int64_t t, int64_t s) const { return bsumf + (t * steps + s) * 16; }
        int32_t* lane_offsets(int64_t t, int64_t s) const { return offsets + (t * steps + s) * 32; }
    };
    static int64_t act_bytes(int64_t k) { return k / 256 * static_cast<int64_t>(sizeof(Act)); }
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t, int64_t) { return Acts{x, ldx}; }
    static Acts prepare_fused(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if (narrow(nt)) {
            if constexpr (kLanes) return lane_ordered(x, ldx, nt, k);
            return Acts{x, ldx};
        }
        Acts acts{x, ldx};
        if constexpr (V::kBytes == 64 && !Type::kWide) {
            acts.steps = k / 256;
            auto* f = static_cast<float*>(scratch(static_cast<size_t>(nt * acts.steps) * 16 * sizeof(float)));
            acts.bsumf = f;
            for (int64_t t = 0; t < nt; ++t)
                for (int64_t s = 0; s < acts.steps; ++s) {
                    const Act* a = acts.step(t, s);
                    const __m512 b = _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(load256(a->bsums)));
                    _mm512_store_ps(f + (t * acts.steps + s) * 16, _mm512_mul_ps(b, _mm512_set1_ps(a->d)));
                }
        }
        return acts;
    }

    // A copy of the activations in the lane order of w_lanes: each 64 values as 0..15,
    // 32..47, 16..31, 48..63. Made once per product, it saves every row the shuffles. For
    // kVnni each super-block's lane offsets follow all the copies.
    static Acts lane_ordered(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        const auto row = static_cast<size_t>(act_bytes(k));
        const size_t copies = (static_cast<size_t>(nt) * row + 63) / 64 * 64;
        const int64_t steps = k / 256;
        const size_t offsets = kVnni ? static_cast<size_t>(nt * steps) * 32 * sizeof(int32_t) : 0;
        auto* copy = static_cast<uint8_t*>(scratch(copies + offsets));
        Acts acts{copy, row};
        acts.offsets = reinterpret_cast<int32_t*>(copy + copies);
        acts.steps = steps;
        for (int64_t t = 0; t < nt; ++t) {
            std::memcpy(copy + t * row, x + t * ldx, row);
            for (int64_t s = 0; s < steps; ++s) {
                int8_t* qs = reinterpret_cast<Act*>(copy + t * row)[s].qs;
                for (int g = 0; g < 256; g += 64) {
                    const __m256i a0 = load256(qs + g), a1 = load256(qs + g + 32);
                    store256(qs + g, _mm256_permute2x128_si256(a0, a1, 0x20));
                    store256(qs + g + 32, _mm256_permute2x128_si256(a0, a1, 0x31));
                }
                if constexpr (kVnni) lane_offsets(qs, acts.lane_offsets(t, s));
            }
        }
        return acts;
    }

    // kVnni: for each chunk pair P of a lane-ordered super-block's activations qs, -128
    // times the activations that int32 lane i of its product meets (bytes 4i..4i + 3 of
    // both chunks), from which narrow_sums starts so that u = w + 128 leaves w * a.
    static void lane_offsets(const int8_t* qs, int32_t* out) {
        const __m256i ones = _mm256_set1_epi8(1);
        for (int p = 0; p < 4; ++p) {
            const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(ones, load256(qs + 64 * p)),
                                                   _mm256_maddubs_epi16(ones, load256(qs + 64 * p + 32)));
            store256(out + 8 * p, _mm256_madd_epi16(pairs, _mm256_set1_epi16(-128)));
        }
    }

    static void unpack(const uint8_t* row, int64_t, int64_t s, KBlock& out) {
        unpack_kblock<Type>(reinterpret_cast<const typename Type::Block*>(row)[s], out);
    }

    // u * a summed in int16 pairs; (u - 128) * a for wide types.
    static I pairs(I u, I q) {
        if constexpr (Type::kWide) return V::maddubs_wide(u, q);
        else return V::maddubs(u, q);
    }
    static __m256i pairs256(__m256i u, __m256i q) {
        if constexpr (Type::kWide) return maddubs_wide256(u, q);
        else return _mm256_maddubs_epi16(u, q);
    }
    // narrow_row's products: pairs256, or signed weights in lane order.
    static __m256i narrow_pairs(__m256i u, __m256i q) {
        if constexpr (kLanes) return signed_pairs256(u, q);
        else return pairs256(u, q);
    }

    template <int NR, int NT>
    static void step(const KBlock* w, const Acts& acts, int64_t t0, int64_t s, F* acc, int64_t stride) {
        const Act* a[NT];
        for (int t = 0; t < NT; ++t) a[t] = acts.step(t0 + t, s);
        I sum[NR][NT];
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) sum[r][t] = V::izero();
        for (int c = 0; c < 256; c += V::kBytes) {
            I u[NR], sc[NR];
            for (int r = 0; r < NR; ++r) {
                u[r] = V::load_i(w[r].u + c);
                sc[r] = V::load_i(w[r].scale + c / 2);
            }
            for (int t = 0; t < NT; ++t) {
                const I q = V::load_i(a[t]->qs + c);
                for (int r = 0; r < NR; ++r) sum[r][t] = V::dot_i16(sum[r][t], pairs(u[r], q), sc[r]);
            }
        }
        for (int t = 0; t < NT; ++t)
            for (int r = 0; r < NR; ++r)
                fold<Type, V>(acc[r * stride + t], sum[r][t], Type::kWide ? V::izero() : V::madd16(a[t]->bsums, w[r].corr),
                              V::set1(w[r].d * a[t]->d), V::set1(w[r].dc * a[t]->d));
    }

    // Few tokens: each super-block's chunks are unpacked in registers and used at once
    // (narrow_row at 256 bits; from 2 tokens on AVX-512, wide_row with two chunks per
    // 512-bit product). One row at a time: decode streams the weights from DRAM, and one
    // long sequential stream (rows follow each other in memory) is what the hardware
    // prefetchers keep up with — four rows in step are four short streams (a Q4_K row of
    // 4096 is 2.3 KB) and ran at 40 % of the read bandwidth, one row runs at 100 %
    // (measured, Zen 4).
    // Batched decode (one token per session) stays here up to 8 tokens on AVX-512 (32
    // vector registers hold the 2 x 8 sums), 4 on AVX2 (16 registers): the many-token
    // path's lane-replicated unpacking of every super-block costs more than it saves when
    // only a few tokens use it (8 sessions decoded slower together than one alone). Every
    // K-quant and IQ4_XS takes gemm_kquant_rows16_avx512.h's and gemm_kquant_quads_avx512.h's lanes for
    // these counts instead on AVX-512, the K-quants gemm_kquant_rows8_avx2.h's on AVX2 (and there
    // every count, 8 tokens at a time, so that step serves only IQ4_XS on AVX2).
    // fused<NR, NT> runs NR rows one after another (the driver hands it up to kFusedRows).
    static constexpr int kFusedTokens = V::kBytes == 64 ? 8 : 4;
    static constexpr int kFusedRows = V::kBytes == 64 ? 16 : 1;

    using Block = typename Type::Block;
    using Prep = typename Type::Prep;

    // narrow_row runs NT tokens on AVX2, and one token on AVX-512 as well: on Zen 4, which
    // executes 512-bit operations in two halves, the 256-bit path decoded one token faster in
    // cache (tests/bench/HISTORY.md, "K-quant narrow_row for one token on AVX-512").
    static constexpr bool narrow(int64_t nt) { return V::kBytes == 32 || nt == 1; }
    // Tried and left out: chunk pairs blended before one vpmaddwd, scale vectors as broadcast
    // loads, one qs load for both nibble halves (HISTORY.md, "K-quant narrow_row: tried and left out").

    // A wide type that has a lane order (w_lanes): narrow_row reads activations prepared in
    // that order and signed weights.
    static constexpr bool kLanes = requires(const Block& b, const Prep& p) { Type::template w_lanes<0>(b, p); };
    template <int C>
    static __m256i narrow_u(const Block& b, const Prep& p) {
        if constexpr (kLanes) return Type::template w_lanes<C>(b, p);
        else return Type::template u<C>(b, p);
    }
    template <int C>
    static __m256i narrow_scale(const Prep& p) {
        if constexpr (kLanes) return Type::template scale_lanes<C>(p);
        else return Type::template scale<C>(p);
    }
    // AVX-512 and a type in lane order: chunks 2P and 2P + 1 share their scale lanes, so
    // both go into one u8 x s8 product (vpdpbusd, u = w + 128, no saturation) that starts
    // from the token's lane offsets and so ends as the int32 lanes of w * a, which one
    // vpmulld scales: the same lanes as the int16 path's, with 5 instructions per chunk
    // pair and token where that took 10.
    static constexpr bool kVnni = kLanes && V::kBytes == 64;
    // AVX-512 and a type whose u fit 6 bits (every K-quant): each chunk is one u8 x s8
    // product (vpdpbusd) whose int32 lanes, 4 products of at most 63 x 128 each, fit int16,
    // so that chunks 2P and 2P + 1 pack into one vector of words (vpackssdw, no saturation)
    // that one vpdpwssd by packed_scale<P> scales and adds: per chunk pair 2 byte products, a
    // pack, a scale shuffle and an int16 dot where 2 scale shuffles, 2 vpmaddubsw and 2 int16
    // dots were. The same integer sums, faster on every K-quant (HISTORY.md, "K-quant kPacked").
    static constexpr bool kPacked = V::kBytes == 64 && !Type::kWide;

    // A super-block's integer sums of narrow_row: even and odd chunks (kVnni: chunk pairs)
    // in separate chains.
    template <int NT>
    static void narrow_sums(const Block& b, const Prep& p, const Acts& acts, int64_t t0, int64_t s, __m256i (&sum)[2][NT]) {
        const Act* a[NT];
        for (int t = 0; t < NT; ++t) a[t] = acts.step(t0 + t, s);
        if constexpr (kVnni) {
            for_chunks<4>([&](auto c) {
                constexpr int P = decltype(c)::value;
                const __m256i u0 = Type::template u_lanes<2 * P>(b, p), u1 = Type::template u_lanes<2 * P + 1>(b, p);
                const __m256i sc = Type::template scale32_lanes<P>(p);
                for (int t = 0; t < NT; ++t) {
                    const __m256i off = load256(acts.lane_offsets(t0 + t, s) + 8 * P);
                    const __m256i w0 = V::template dot_u8s8_256<true>(u0, load256(a[t]->qs + 64 * P), off);
                    const __m256i w = V::template dot_u8s8_256<true>(u1, load256(a[t]->qs + 64 * P + 32), w0);
                    sum[P % 2][t] = _mm256_add_epi32(sum[P % 2][t], _mm256_mullo_epi32(w, sc));
                }
            });
        } else if constexpr (kPacked) {
            for_chunks<4>([&](auto c) {
                constexpr int P = decltype(c)::value;
                const __m256i u0 = Type::template u<2 * P>(b, p), u1 = Type::template u<2 * P + 1>(b, p);
                const __m256i sc = Type::template packed_scale<P>(p);
                const __m256i zero = _mm256_setzero_si256();
                for (int t = 0; t < NT; ++t) {
                    const __m256i d0 = V::template dot_u8s8_256<false>(u0, load256(a[t]->qs + 64 * P), zero);
                    const __m256i d1 = V::template dot_u8s8_256<false>(u1, load256(a[t]->qs + 64 * P + 32), zero);
                    sum[P % 2][t] = V::dot_i16_256(sum[P % 2][t], _mm256_packs_epi32(d0, d1), sc);
                }
            });
        } else {
            for_chunks<8>([&](auto c) {
                constexpr int C = decltype(c)::value;
                const __m256i u = narrow_u<C>(b, p), sc = narrow_scale<C>(p);
                for (int t = 0; t < NT; ++t)
                    sum[C % 2][t] = V::dot_i16_256(sum[C % 2][t], narrow_pairs(u, load256(a[t]->qs + 32 * C)), sc);
            });
        }
    }

    // AVX-512: chunks 2P and 2P + 1 of a super-block, from the type's u_pair if it has one.
    template <int P, class I = __m512i>
    static I u_pair(const Block& b, const typename Type::Prep& p) {
        if constexpr (requires { Type::template u_pair<P>(b, p); })
            return Type::template u_pair<P>(b, p);
        else
            return _mm512_inserti64x4(_mm512_castsi256_si512(Type::template u<2 * P>(b, p)), Type::template u<2 * P + 1>(b, p), 1);
    }

    // The super-block at `at` into L1 (kLocality 3: prefetcht0), or into L2 (2: prefetcht1).
    template <int kLocality = 3>
    static void prefetch(const char* at) {
        prefetch_bytes<kLocality>(at, sizeof(Block));
    }

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (!narrow(NT)) {
            // The rows go through k in parts whose activations stay in L1 (48 KB on Zen 5;
            // 8 tokens of k = 8192 are 75 KB, which a row's whole pass read from L2).
            constexpr int64_t kPart = 24 * 1024 / (NT * (sizeof(Act) + 64));
            const int64_t all = k / 256;
            for (int64_t s0 = 0; s0 < all; s0 += kPart)
                for (int r = 0; r < NR; ++r) wide_row<NT>(w + r * ldw, ldw, s0, s0 + kPart < all ? s0 + kPart : all, acts, t0, Y + r, ldy);
        } else {
            for (int r = 0; r < NR; ++r) narrow_row<NT>(w + r * ldw, k, acts, t0, Y + r, ldy);
        }
    }

    // One row at 256 bits (AVX2, and one token on AVX-512), even and odd chunks in separate
    // integer sums (two dependency chains per token, the same total). Each super-block
    // prefetches the one kBlocksAhead later (rows follow each other, so past the row's end it is
    // the next row's), long rows (an 8B model's ffn_down) too: the distance, the L1 / L2 split
    // and what was tried were measured (HISTORY.md, "K-quant narrow_row's prefetch").
    template <int NT>
    static void narrow_row(const uint8_t* w, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        __m256 acc[NT];
        for (int t = 0; t < NT; ++t) acc[t] = W256::zero();
        for (int64_t s = 0; s < k / 256; ++s) {
            const Block& b = reinterpret_cast<const Block*>(w)[s];
            prefetch_ahead(&b);
            const typename Type::Prep p = Type::prep(b);
            __m256i sum[2][NT];
            for (int h = 0; h < 2; ++h)
                for (int t = 0; t < NT; ++t) sum[h][t] = _mm256_setzero_si256();
            narrow_sums<NT>(b, p, acts, t0, s, sum);
            for (int t = 0; t < NT; ++t) {
                const Act* a = acts.step(t0 + t, s);
                const Factors256 f = factors256<Type>(b, a->d);
                fold<Type, W256>(acc[t], _mm256_add_epi32(sum[0][t], sum[1][t]),
                                 Type::kWide ? _mm256_setzero_si256() : _mm256_madd_epi16(load256(a->bsums), Type::corr(p)),
                                 f.d_da, f.dc_da);
            }
        }
        for (int t = 0; t < NT; ++t) Y[t * ldy] = hsum256(acc[t]);
    }

    // AVX-512, 2..8 tokens, super-blocks [s0, s1) of one row, added to Y unless s0 = 0:
    // two chunks per 512-bit product (half the integer instructions per token, which bound
    // batched decode) and the float steps at 512 bits with the correction from Acts' float
    // group sums, so that per super-block and token the work outside the 8 integer
    // products is 4 instructions (it was 14). Each super-block prefetches the same one of a
    // later row, which the k-part loop reads soon (HISTORY.md, "K-quant wide_row"). Two
    // chunks are unpacked at once where the type can (u_pair), else at 256 bits as above and joined. Two chains of integer sums
    // for 2-3 tokens, one from 4 (the tokens are independent chains), and for fewer than 4
    // the correction in a float sum of its own.
    template <int NT>
    static void wide_row(const uint8_t* w, size_t ldw, int64_t s0, int64_t s1, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        constexpr int kChains = NT < 4 ? 2 : 1;
        constexpr int kAccs = NT < 4 ? 2 : 1;  // the correction in its own float sum
        // The same block of a row read two rows after this one (rows follow each other
        // within a k part).
        constexpr int kRowsAhead = 2;
        __m512 acc[kAccs][NT];
        for (int h = 0; h < kAccs; ++h)
            for (int t = 0; t < NT; ++t) acc[h][t] = _mm512_setzero_ps();
        for (int64_t s = s0; s < s1; ++s) {
            const Block& b = reinterpret_cast<const Block*>(w)[s];
            prefetch(reinterpret_cast<const char*>(&b) + kRowsAhead * ldw);
            const typename Type::Prep p = Type::prep(b);
            const Act* a[NT];
            for (int t = 0; t < NT; ++t) a[t] = acts.step(t0 + t, s);
            I sum[kChains][NT];
            for (int h = 0; h < kChains; ++h)
                for (int t = 0; t < NT; ++t) sum[h][t] = V::izero();
            for_chunks<4>([&](auto c) {
                constexpr int P = decltype(c)::value;
                const I u = u_pair<P>(b, p), sc = Type::template scale_pair<P>(p);
                for (int t = 0; t < NT; ++t)
                    sum[P % kChains][t] = V::dot_i16(sum[P % kChains][t], pairs(u, V::load_i(a[t]->qs + 64 * P)), sc);
            });
            const float d = Type::d(b);
            __m512 corr = _mm512_setzero_ps();
            if constexpr (!Type::kWide)
                corr = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(Type::corr(p))), _mm512_set1_ps(Type::dc(b)));
            for (int t = 0; t < NT; ++t) {
                I total = sum[0][t];
                for (int h = 1; h < kChains; ++h) total = _mm512_add_epi32(total, sum[h][t]);
                acc[0][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_set1_ps(d * a[t]->d), acc[0][t]);
                if constexpr (!Type::kWide)
                    acc[kAccs - 1][t] = _mm512_fnmadd_ps(corr, _mm512_load_ps(acts.group_sums(t0 + t, s)), acc[kAccs - 1][t]);
            }
        }
        for (int t = 0; t < NT; ++t) {
            const __m512 all = kAccs == 1 ? acc[0][t] : _mm512_add_ps(acc[0][t], acc[kAccs - 1][t]);
            Y[t * ldy] = (s0 > 0 ? Y[t * ldy] : 0.0f) + _mm512_reduce_add_ps(all);
        }
    }
};

}  // namespace simd
}  // namespace
