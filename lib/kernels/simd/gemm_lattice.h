// kernels/simd/gemm_lattice.h — MXFP4 against Q8_0 and the lattice formats (IQ1_S, IQ1_M,
// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S) against Q8_K activations, in the structure of
// GGML's x86 vec_dots for them: each 32-weight sub-block becomes 32 unsigned magnitudes
// (codebook entries gathered by index) and 32 signs (+-1 bytes; for the IQ1 types, whose
// entries are signed, the entries themselves over magnitudes of 1), which one vpsignb puts on
// the activations before one vpmaddubsw and one vpmaddwd by the sub-block's scales. The integer
// sums per super-block are exact, and the float steps are tensor/dot_ref.h's, in its order,
// so that every lattice product equals the scalar reference bit for bit; MXFP4 sums its blocks
// in float lanes as GGML's x86 kernel does (within rounding of the reference; AVX-512 four
// blocks a step against activations laid out once per call, see Mxfp4Token). Both variants
// run the lattice's 256-bit sequences for one to three tokens; for more, AVX-512 scales each
// decoded sub-block into int16 words once and takes one vpdpwssd per token.
// Must not touch: other weight families, the codebooks (tensor/iq_grids.*).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/simd/intrinsics.h"
#include "tensor/blocks.h"
#include "tensor/codecs.h"
#include "tensor/iq_grids.h"

namespace {
namespace simd {

using namespace strata::iq;

// A decoded sub-block: weight j is mag[j] * sgn[j] (sgn +-1, or the IQ1 entry itself), its
// scale ls[j / 16] (as int16 words: 0..7 the first half's, 8..15 the second's) and, for the
// IQ1 types, the shift term's factor ls * shift of each group of 8 (as words, 4 a group).
struct LatticeSub {
    __m256i mag, sgn, scale, shift;
};

inline uint32_t load_u32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline float half_to_float(uint16_t h) { return _cvtsh_ss(h); }

// Four 8-byte codebook entries, element j of group l at byte 8l + j.
inline __m256i entries8(uint64_t g0, uint64_t g1, uint64_t g2, uint64_t g3) {
    return _mm256_setr_epi64x(static_cast<long long>(g0), static_cast<long long>(g1), static_cast<long long>(g2),
                              static_cast<long long>(g3));
}

// The +-1 bytes of four sign bytes (s4's byte l: group l, bit j for element 8l + j; set = minus).
inline __m256i signs_of(uint32_t s4) {
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(static_cast<int>(s4)),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    const __m256i minus = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_or_si256(minus, _mm256_set1_epi8(1));
}

// Four 7-bit sign indices (bits 7l..7l + 6 of aux) through kIQ2Signs.
inline uint32_t signs7(uint32_t aux) {
    return kIQ2Signs[aux & 127] | kIQ2Signs[(aux >> 7) & 127] << 8 | kIQ2Signs[(aux >> 14) & 127] << 16 |
           static_cast<uint32_t>(kIQ2Signs[(aux >> 21) & 127]) << 24;
}

// int16 words: ls0 over the first 8, ls1 over the last 8.
inline __m256i half_scales(int ls0, int ls1) {
    return _mm256_setr_m128i(_mm_set1_epi16(static_cast<short>(ls0)), _mm_set1_epi16(static_cast<short>(ls1)));
}

// The type's scale of a 4-bit field: 2s + 1.
inline int odd(int s) { return 2 * s + 1; }

struct IQ2XXS {
    using Block = strata::BlockIQ2_XXS;
    static constexpr bool kShift = false;
    static constexpr bool kHalves = false;  // a scale per 16 weights (else per 32)
    static constexpr float kC = 0.125f;  // tensor/iq_lowbit.cpp's Lattice::c
    static float d(const Block& b) { return half_to_float(b.d); }
    static void sub(const Block& b, int ib, LatticeSub& s) {
        const auto* q = reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib;
        const uint32_t aux = load_u32(q + 4);
        s.mag = entries8(kIQ2XXSGrid[q[0]], kIQ2XXSGrid[q[1]], kIQ2XXSGrid[q[2]], kIQ2XXSGrid[q[3]]);
        s.sgn = signs_of(signs7(aux));
        s.scale = _mm256_set1_epi16(static_cast<short>(odd(static_cast<int>(aux >> 28))));
    }
};

struct IQ2XS {
    using Block = strata::BlockIQ2_XS;
    static constexpr bool kShift = false;
    static constexpr bool kHalves = true;
    static constexpr float kC = 0.125f;
    static float d(const Block& b) { return half_to_float(b.d); }
    static void sub(const Block& b, int ib, LatticeSub& s) {
        const uint16_t* q = b.qs + 4 * ib;
        s.mag = entries8(kIQ2XSGrid[q[0] & 511], kIQ2XSGrid[q[1] & 511], kIQ2XSGrid[q[2] & 511], kIQ2XSGrid[q[3] & 511]);
        s.sgn = signs_of(kIQ2Signs[q[0] >> 9] | kIQ2Signs[q[1] >> 9] << 8 | kIQ2Signs[q[2] >> 9] << 16 |
                         static_cast<uint32_t>(kIQ2Signs[q[3] >> 9]) << 24);
        s.scale = half_scales(odd(b.scales[ib] & 0xF), odd(b.scales[ib] >> 4));
    }
};

struct IQ2S {
    using Block = strata::BlockIQ2_S;
    static constexpr bool kShift = false;
    static constexpr bool kHalves = true;
    static constexpr float kC = 0.125f;
    static float d(const Block& b) { return half_to_float(b.d); }
    static void sub(const Block& b, int ib, LatticeSub& s) {
        const uint8_t* q = b.qs + 4 * ib;
        const int h = b.qh[ib];
        s.mag = entries8(kIQ2SGrid[q[0] | (h << 8 & 0x300)], kIQ2SGrid[q[1] | (h << 6 & 0x300)], kIQ2SGrid[q[2] | (h << 4 & 0x300)],
                         kIQ2SGrid[q[3] | (h << 2 & 0x300)]);
        s.sgn = signs_of(load_u32(b.qs + strata::QK_K / 8 + 4 * ib));
        s.scale = half_scales(odd(b.scales[ib] & 0xF), odd(b.scales[ib] >> 4));
    }
};

struct IQ3XXS {
    using Block = strata::BlockIQ3_XXS;
    static constexpr bool kShift = false;
    static constexpr bool kHalves = false;
    static constexpr float kC = 0.25f;
    static float d(const Block& b) { return half_to_float(b.d); }
    static void sub(const Block& b, int ib, LatticeSub& s) {
        const uint8_t* q = b.qs + 8 * ib;
        const uint32_t aux = load_u32(b.qs + strata::QK_K / 4 + 4 * ib);
        s.mag = _mm256_setr_epi32(static_cast<int>(kIQ3XXSGrid[q[0]]), static_cast<int>(kIQ3XXSGrid[q[1]]),
                                  static_cast<int>(kIQ3XXSGrid[q[2]]), static_cast<int>(kIQ3XXSGrid[q[3]]),
                                  static_cast<int>(kIQ3XXSGrid[q[4]]), static_cast<int>(kIQ3XXSGrid[q[5]]),
                                  static_cast<int>(kIQ3XXSGrid[q[6]]), static_cast<int>(kIQ3XXSGrid[q[7]]));
        s.sgn = signs_of(signs7(aux));
        s.scale = _mm256_set1_epi16(static_cast<short>(odd(static_cast<int>(aux >> 28))));
    }
};

struct IQ3S {
    using Block = strata::BlockIQ3_S;
    static constexpr bool kShift = false;
    static constexpr bool kHalves = false;
    static constexpr float kC = 1.0f;
    static float d(const Block& b) { return half_to_float(b.d); }
    // Entry e (0..7) of sub-block ib: 8 bits from qs, the ninth bit e of qh[ib]. One or a few
    // tokens: the 8 indices built in one vector and gathered (decode 1.3x the scalar loads);
    // many (sub_wide): scalar loads, which overlap the tokens' products better (prefill 1.2x
    // the gather).
    static int grid(const Block& b, int ib, int e) {
        return static_cast<int>(kIQ3SGrid[b.qs[8 * ib + e] | ((b.qh[ib] >> e & 1) << 8)]);
    }
    static void sub_wide(const Block& b, int ib, LatticeSub& s) {
        s.mag = _mm256_setr_epi32(grid(b, ib, 0), grid(b, ib, 1), grid(b, ib, 2), grid(b, ib, 3), grid(b, ib, 4), grid(b, ib, 5),
                                  grid(b, ib, 6), grid(b, ib, 7));
        rest(b, ib, s);
    }
    static void sub(const Block& b, int ib, LatticeSub& s) {
        uint64_t q;
        std::memcpy(&q, b.qs + 8 * ib, sizeof q);
        const __m256i low = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(q)));
        const __m256i high = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(b.qh[ib]), _mm256_setr_epi32(8, 7, 6, 5, 4, 3, 2, 1)),
                                              _mm256_set1_epi32(256));
        s.mag = _mm256_i32gather_epi32(reinterpret_cast<const int*>(kIQ3SGrid), _mm256_or_si256(low, high), 4);
        rest(b, ib, s);
    }
    static void rest(const Block& b, int ib, LatticeSub& s) {
        s.sgn = signs_of(load_u32(b.signs + 4 * ib));
        s.scale = _mm256_set1_epi16(static_cast<short>(odd(b.scales[ib / 2] >> 4 * (ib % 2) & 0xF)));
    }
};

// The IQ1 types: signed entries over magnitudes of 1, and the +-1/8 shift of each group.
// Four copies of f's 16 bits (unsigned arithmetic: a negative f must not overflow a signed product).
inline long long word4(int f) { return static_cast<long long>(0x0001000100010001ull * static_cast<uint16_t>(f)); }

inline __m256i group_words(int f0, int f1, int f2, int f3) { return _mm256_setr_epi64x(word4(f0), word4(f1), word4(f2), word4(f3)); }

struct IQ1S {
    using Block = strata::BlockIQ1_S;
    static constexpr bool kShift = true;
    static constexpr bool kHalves = false;
    static constexpr float kC = 1.0f;
    static float d(const Block& b) { return half_to_float(b.d); }
    static void sub(const Block& b, int ib, LatticeSub& s) {
        const int qh = b.qh[ib];
        const uint8_t* q = b.qs + 4 * ib;
        s.sgn = entries8(kIQ1SGrid[q[0] | (qh << 8 & 0x700)], kIQ1SGrid[q[1] | (qh << 5 & 0x700)], kIQ1SGrid[q[2] | (qh << 2 & 0x700)],
                         kIQ1SGrid[q[3] | (qh >> 1 & 0x700)]);
        s.mag = _mm256_set1_epi8(1);
        const int ls = odd(qh >> 12 & 7);
        s.scale = _mm256_set1_epi16(static_cast<short>(ls));
        s.shift = _mm256_set1_epi16(static_cast<short>(qh & 0x8000 ? -ls : ls));
    }
};

struct IQ1M {
    using Block = strata::BlockIQ1_M;
    static constexpr bool kShift = true;
    static constexpr bool kHalves = true;
    static constexpr float kC = 1.0f;
    static uint16_t word(const Block& b, int i) { return static_cast<uint16_t>(b.scales[2 * i] | b.scales[2 * i + 1] << 8); }
    static float d(const Block& b) {
        return half_to_float(static_cast<uint16_t>((word(b, 0) >> 12) | (word(b, 1) >> 8 & 0x00F0) | (word(b, 2) >> 4 & 0x0F00) |
                                                   (word(b, 3) & 0xF000)));
    }
    static void sub(const Block& b, int ib, LatticeSub& s) {
        const int sc = word(b, ib / 2) >> 6 * (ib % 2);
        const int ls0 = odd(sc & 7), ls1 = odd(sc >> 3 & 7);
        const uint8_t* q = b.qs + 4 * ib;
        const int h0 = b.qh[2 * ib], h1 = b.qh[2 * ib + 1];
        s.sgn = entries8(kIQ1SGrid[q[0] | (h0 << 8 & 0x700)], kIQ1SGrid[q[1] | (h0 << 4 & 0x700)], kIQ1SGrid[q[2] | (h1 << 8 & 0x700)],
                         kIQ1SGrid[q[3] | (h1 << 4 & 0x700)]);
        s.mag = _mm256_set1_epi8(1);
        s.scale = half_scales(ls0, ls1);
        s.shift = group_words(h0 & 0x08 ? -ls0 : ls0, h0 & 0x80 ? -ls0 : ls0, h1 & 0x08 ? -ls1 : ls1, h1 & 0x80 ? -ls1 : ls1);
    }
};

// Sum of the 8 int32 lanes of v.
inline int hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

#ifdef __AVX512VNNI__
// Several tokens on AVX-512: a decoded sub-block becomes 32 int16 words, each weight's signed
// entry times its scale (at most 43 x 31), once for all the tokens; then per token one
// vpmovsxbw of its 32 activations and one vpdpwssd (instead of a vpsignb, a vpmaddubsw, a
// vpmaddwd and an add). The same integers, so the same sums.
constexpr int kWideFrom = 4;

struct WideSums {
    __m512i v;
    void zero() { v = _mm512_setzero_si512(); }
    int total() const { return _mm512_reduce_add_epi32(v); }
};

inline __m512i scaled_words(const LatticeSub& s) {
    const __m512i w = _mm512_cvtepi8_epi16(_mm256_sign_epi8(s.mag, s.sgn));
    // s.scale's words 0..7 scale weights 0..15 (as pairs), 8..15 weights 16..31.
    const __m512i pick = _mm512_set_epi16(8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_mullo_epi16(w, _mm512_permutexvar_epi16(pick, _mm512_castsi256_si512(s.scale)));
}

inline void add_products(WideSums& acc, const LatticeSub&, const __m512i& words, const int8_t* q) {
    acc.v = _mm512_dpwssd_epi32(acc.v, words, _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q))));
}
#else
constexpr int kWideFrom = 1 << 30;
#endif

struct NarrowSums {
    __m256i v;
    void zero() { v = _mm256_setzero_si256(); }
    int total() const { return hsum_i32(v); }
};

inline void add_products(NarrowSums& acc, const LatticeSub& s, const __m256i&, const int8_t* q) {
    const __m256i q8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    acc.v = _mm256_add_epi32(acc.v, _mm256_madd_epi16(_mm256_maddubs_epi16(s.mag, _mm256_sign_epi8(q8, s.sgn)), s.scale));
}

// A row of a lattice type against NT tokens' Q8_K rows with Sums' products: per super-block the
// reference's two integer sums (weights, and for IQ1 the shifts) by sub-block, then its float
// step. `words` prepares a decoded sub-block for all the tokens.
template <class Type, int NT, class Sums, class Words>
void lattice_dots_with(const typename Type::Block* w, const strata::BlockQ8_K* const (&a)[NT], int64_t blocks, float (&out)[NT],
                       Words words) {
    float sum[NT] = {};
    const __m256i ones = _mm256_set1_epi8(1);
    for (int64_t b = 0; b < blocks; ++b) {
        prefetch_bytes(w + b + 4, sizeof(typename Type::Block));
        Sums acc[NT];
        __m256i shift[NT];
        for (int t = 0; t < NT; ++t) {
            acc[t].zero();
            shift[t] = _mm256_setzero_si256();
        }
        for (int ib = 0; ib < strata::QK_K / 32; ++ib) {
            LatticeSub s;
            if constexpr (std::is_same_v<Sums, NarrowSums> || !requires { Type::sub_wide(w[b], ib, s); }) Type::sub(w[b], ib, s);
            else Type::sub_wide(w[b], ib, s);
            const auto prepared = words(s);
            for (int t = 0; t < NT; ++t) {
                add_products(acc[t], s, prepared, a[t][b].qs + 32 * ib);
                if constexpr (Type::kShift) {
                    const __m256i q8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[t][b].qs + 32 * ib));
                    shift[t] = _mm256_add_epi32(shift[t], _mm256_madd_epi16(_mm256_maddubs_epi16(ones, q8), s.shift));
                }
            }
        }
        const float d = Type::d(w[b]);
        for (int t = 0; t < NT; ++t) {
            const int ishift = Type::kShift ? hsum_i32(shift[t]) : 0;
            sum[t] += d * a[t][b].d * (static_cast<float>(acc[t].total()) + 0.125f * static_cast<float>(ishift));
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = Type::kC * sum[t];
}

template <class Type, int NT>
void lattice_dots(const typename Type::Block* w, const strata::BlockQ8_K* const (&a)[NT], int64_t blocks, float (&out)[NT]) {
#ifdef __AVX512VNNI__
    if constexpr (NT >= kWideFrom) return lattice_dots_with<Type, NT, WideSums>(w, a, blocks, out, scaled_words);
#endif
    lattice_dots_with<Type, NT, NarrowSums>(w, a, blocks, out, [](const LatticeSub&) { return _mm256_setzero_si256(); });
}

// MXFP4: the 32 int8 values of a block (kMXFP4Values through one byte shuffle of its nibbles).
inline __m256i mxfp4_values(const strata::BlockMXFP4& b) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
    const __m128i lo = _mm_and_si128(q, _mm_set1_epi8(0x0F)), hi = _mm_and_si128(_mm_srli_epi16(q, 4), _mm_set1_epi8(0x0F));
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(strata::kMXFP4Values));
    return _mm256_setr_m128i(_mm_shuffle_epi8(table, lo), _mm_shuffle_epi8(table, hi));
}

// A row of MXFP4 against one token's Q8_0 row in GGML's x86 order: each block's 32 products
// summed into 8 int32 lanes, scaled by the block's two factors into 8 float lanes (two
// accumulators, so that consecutive blocks do not wait for each other's sums), the lanes
// added at the end. It rounds as llama.cpp's kernel does, not as the scalar reference's one
// float step per block in row order, whose chain of dependent additions made it 1.4x slower.
inline __m256 mxfp4_block(const strata::BlockMXFP4& w, const strata::BlockQ8_0& a, __m256 acc) {
    const __m256i q8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs));
    const __m256i sums = _mm256_madd_epi16(signed_pairs256(mxfp4_values(w), q8), _mm256_set1_epi16(1));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(half_to_float(a.d) * strata::mxfp4_scale(w.e)), acc);
}

inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#ifdef __AVX512VNNI__
// AVX-512: four blocks a step, their 128 products by two vpdpbusd (low nibbles, high
// nibbles: their values' bytes in one vector, block j in 128-bit lane j); the weights are offset by 12
// (kMXFP4Values + 12: bytes 0..24, which vpdpbusd takes unsigned). Each token's activations
// are laid out once per call (Mxfp4Token) to match: per group of four blocks their first
// halves' values, then their second halves', each block's scale in 4 float lanes, and each
// block's 4 lanes of -12 x the sums of the values they meet as the accumulator's start, so
// that a lane sums (w + 12) q - 12 q = w q exactly. A row against NT tokens: each group decoded
// once for all of them, each token's sums in the same order whatever NT (a token's result does
// not depend on its batch); the blocks after the last whole group as mxfp4_block.
struct Mxfp4Token {
    const int8_t* q;          // [groups][128]
    const int32_t* start;     // [groups][16]
    const float* d;           // [groups][16]
    const strata::BlockQ8_0* row;
};

// Bytes per block of a laid-out token (Mxfp4Token's three arrays).
constexpr size_t kMxfp4TokenBytes = 32 + 4 * sizeof(int32_t) + 4 * sizeof(float);

// Lays out the whole groups of four of a Q8_0 row's `blocks` blocks in `buf` (kMxfp4TokenBytes a block).
inline Mxfp4Token prepare_mxfp4_token(const strata::BlockQ8_0* a, int64_t blocks, uint8_t* buf) {
    const int64_t groups = blocks / 4;
    auto* q = reinterpret_cast<int8_t*>(buf);
    auto* start = reinterpret_cast<int32_t*>(buf + 128 * groups);
    auto* d = reinterpret_cast<float*>(buf + (128 + 16 * sizeof(int32_t)) * groups);
    for (int64_t g = 0; g < groups; ++g)
        for (int j = 0; j < 4; ++j) {
            const strata::BlockQ8_0& b = a[4 * g + j];
            std::memcpy(q + 128 * g + 16 * j, b.qs, 16);
            std::memcpy(q + 128 * g + 64 + 16 * j, b.qs + 16, 16);
            const float scale = half_to_float(b.d);
            for (int i = 0; i < 4; ++i) {
                const int8_t* lo = b.qs + 4 * i;
                const int8_t* hi = lo + 16;
                start[16 * g + 4 * j + i] = -12 * (lo[0] + lo[1] + lo[2] + lo[3] + hi[0] + hi[1] + hi[2] + hi[3]);
                d[16 * g + 4 * j + i] = scale;
            }
        }
    return {q, start, d, a};
}

template <int NT>
void mxfp4_dots(const strata::BlockMXFP4* w, const Mxfp4Token (&a)[NT], int64_t blocks, float (&out)[NT]) {
    __m512 acc[2][NT];
    for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = _mm512_setzero_ps();
    const __m512i spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i table = _mm512_broadcast_i32x4(_mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
    const __m512i low = _mm512_set1_epi8(0x0F), one = _mm512_set1_epi32(1), two = _mm512_set1_epi32(2), tiny = _mm512_set1_epi32(0x00200000);
    // Group g into accumulators `into` (two sets, alternating, so that groups do not wait for
    // each other's sums; indexed by constants, so that they stay in registers).
    const auto group = [&](int64_t g, __m512 (&into)[NT]) {
        const strata::BlockMXFP4* b = w + 4 * g;
        const auto qs = [&](int j) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[j].qs)); };
        const __m512i packed = _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(qs(0)), qs(1), 1), qs(2), 2), qs(3), 3);
        const __m512i lo = _mm512_shuffle_epi8(table, _mm512_and_si512(packed, low));
        const __m512i hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(packed, 4), low));
        // mxfp4_scale of each block in its 4 lanes
        const __m512i e = _mm512_permutexvar_epi32(spread, _mm512_castsi128_si512(_mm_setr_epi32(b[0].e, b[1].e, b[2].e, b[3].e)));
        const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, one), 23);
        const __m512 scale = _mm512_castsi512_ps(_mm512_mask_sllv_epi32(normal, _mm512_cmplt_epu32_mask(e, two), tiny, e));
        for (int t = 0; t < NT; ++t) {
            const int8_t* q = a[t].q + 128 * g;
            __m512i sums = _mm512_dpbusd_epi32(_mm512_loadu_si512(a[t].start + 16 * g), lo, _mm512_loadu_si512(q));
            sums = _mm512_dpbusd_epi32(sums, hi, _mm512_loadu_si512(q + 64));
            into[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), _mm512_mul_ps(_mm512_loadu_ps(a[t].d + 16 * g), scale), into[t]);
        }
    };
    const int64_t groups = blocks / 4;
    int64_t g = 0;
    for (; g + 1 < groups; g += 2) {
        group(g, acc[0]);
        group(g + 1, acc[1]);
    }
    if (g < groups) group(g, acc[0]);
    for (int t = 0; t < NT; ++t) {
        const __m512 sum = _mm512_add_ps(acc[0][t], acc[1][t]);
        __m256 rest = _mm256_add_ps(_mm512_castps512_ps256(sum), _mm512_extractf32x8_ps(sum, 1));
        for (int64_t r = 4 * groups; r < blocks; ++r) rest = mxfp4_block(w[r], a[t].row[r], rest);
        out[t] = hsum_ps(rest);
    }
}

#else
inline float mxfp4_dot(const strata::BlockMXFP4* w, const strata::BlockQ8_0* a, int64_t blocks) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 1 < blocks; b += 2) {
        acc0 = mxfp4_block(w[b], a[b], acc0);
        acc1 = mxfp4_block(w[b + 1], a[b + 1], acc1);
    }
    if (b < blocks) acc0 = mxfp4_block(w[b], a[b], acc0);
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}
#endif

}  // namespace simd
}  // namespace
