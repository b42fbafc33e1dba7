// kernels/simd/gemm_kquant.h — Q2_K..Q6_K weights against Q8_K activations.
// Every K-quant super-block unpacks (with AVX2 integer code, which both variants run) to
// the same form: 256 unsigned small integers u in activation order, the int16 scale of
// each u pair, and a correction c per 16-element group, so that
//     dot = d * da * sum(scale * u * a) - dc * da * sum_g(c_g * bsum_g)
// (dc = dmin for the types with mins, dc = d for the types with an offset, where the
// integer subtraction happens before the float step). The product is then one maddubs
// and one int16 dot per vector of u, the same for every type.
// Must not touch: other weight families.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/intrinsics.h"
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

// Group scales of 16 elements (16 int16 in s16) spread over the 128 pair lanes: the pairs
// of group g are lanes 8g..8g+7.
inline void store_scales16(__m256i s16, int16_t* out) {
    const __m256i lo = _mm256_permute2x128_si256(s16, s16, 0x00), hi = _mm256_permute2x128_si256(s16, s16, 0x11);
    for (int c = 0; c < 8; ++c) {
        // 32 elements = groups 2c (low 128 bits) and 2c+1 (high 128 bits).
        const int w0 = (2 * c) % 8, w1 = (2 * c + 1) % 8;
        const __m256i pick = _mm256_setr_epi8(
            2 * w0, 2 * w0 + 1, 2 * w0, 2 * w0 + 1, 2 * w0, 2 * w0 + 1, 2 * w0, 2 * w0 + 1, 2 * w0, 2 * w0 + 1, 2 * w0,
            2 * w0 + 1, 2 * w0, 2 * w0 + 1, 2 * w0, 2 * w0 + 1, 2 * w1, 2 * w1 + 1, 2 * w1, 2 * w1 + 1, 2 * w1,
            2 * w1 + 1, 2 * w1, 2 * w1 + 1, 2 * w1, 2 * w1 + 1, 2 * w1, 2 * w1 + 1, 2 * w1, 2 * w1 + 1, 2 * w1, 2 * w1 + 1);
        store256(out + 16 * c, _mm256_shuffle_epi8(c < 4 ? lo : hi, pick));
    }
}

// Bytes b (0..255 values) shifted so that bit `from` lands on bit `to` of each byte,
// other bits unmasked; callers mask. Shifts of 16-bit lanes never move a bit onto the
// masked position of the neighbouring byte for |to - from| <= 4.
template <int From, int To>
__m256i move_bit(__m256i b) {
    if constexpr (From > To) return _mm256_srli_epi16(b, From - To);
    else if constexpr (From < To) return _mm256_slli_epi16(b, To - From);
    else return b;
}

// Q4_K / Q5_K: 6-bit scales and mins of 32-element groups packed in 12 bytes.
inline void k4_scales(const uint8_t* packed, uint8_t sc[8], uint8_t mn[8]) {
    constexpr uint32_t kmask1 = 0x3f3f3f3f, kmask2 = 0x0f0f0f0f, kmask3 = 0x03030303;
    uint32_t u[4];
    std::memcpy(u, packed, 12);
    u[3] = ((u[2] >> 4) & kmask2) | (((u[1] >> 6) & kmask3) << 4);
    const uint32_t mins_lo = u[1] & kmask1;
    u[1] = (u[2] & kmask2) | (((u[0] >> 6) & kmask3) << 4);
    u[2] = mins_lo;
    u[0] &= kmask1;
    std::memcpy(sc, u, 8);
    std::memcpy(mn, u + 2, 8);
}

inline void k4_scales_and_mins(const uint8_t* packed, KBlock& o) {
    uint8_t sc[8], mn[8];
    k4_scales(packed, sc, mn);
    for (int g = 0; g < 8; ++g) {
        store256(o.scale + 16 * g, _mm256_set1_epi16(sc[g]));
        o.corr[2 * g] = o.corr[2 * g + 1] = mn[g];
    }
}

struct Q4K {
    using Block = strata::BlockQ4_K;
    static constexpr bool kOffset = false;
    static void unpack(const Block& x, KBlock& o) {
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        for (int j = 0; j < 4; ++j) {
            const __m256i q = load256(x.qs + 32 * j);
            store256(o.u + 64 * j, _mm256_and_si256(q, m4));
            store256(o.u + 64 * j + 32, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
        }
        k4_scales_and_mins(x.scales, o);
        o.d = half(x.d);
        o.dc = half(x.dmin);
    }
};

struct Q5K {
    using Block = strata::BlockQ5_K;
    static constexpr bool kOffset = false;
    template <int J>
    static void unpack_pair(const Block& x, __m256i qh, KBlock& o) {
        const __m256i m4 = _mm256_set1_epi8(0x0F), b4 = _mm256_set1_epi8(0x10);
        const __m256i q = load256(x.qs + 32 * J);
        const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_and_si256(move_bit<2 * J, 4>(qh), b4));
        const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                                           _mm256_and_si256(move_bit<2 * J + 1, 4>(qh), b4));
        store256(o.u + 64 * J, lo);
        store256(o.u + 64 * J + 32, hi);
    }
    static void unpack(const Block& x, KBlock& o) {
        const __m256i qh = load256(x.qh);
        unpack_pair<0>(x, qh, o);
        unpack_pair<1>(x, qh, o);
        unpack_pair<2>(x, qh, o);
        unpack_pair<3>(x, qh, o);
        k4_scales_and_mins(x.scales, o);
        o.d = half(x.d);
        o.dc = half(x.dmin);
    }
};

struct Q6K {
    using Block = strata::BlockQ6_K;
    static constexpr bool kOffset = true;  // u - 32
    template <int I>
    static __m256i high_bits(__m256i qh) {
        return _mm256_and_si256(move_bit<2 * I, 4>(qh), _mm256_set1_epi8(0x30));
    }
    static void unpack(const Block& x, KBlock& o) {
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        for (int h = 0; h < 2; ++h) {
            const __m256i a = load256(x.ql + 64 * h), b = load256(x.ql + 64 * h + 32), qh = load256(x.qh + 32 * h);
            uint8_t* u = o.u + 128 * h;
            store256(u, _mm256_or_si256(_mm256_and_si256(a, m4), high_bits<0>(qh)));
            store256(u + 32, _mm256_or_si256(_mm256_and_si256(b, m4), high_bits<1>(qh)));
            store256(u + 64, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), m4), high_bits<2>(qh)));
            store256(u + 96, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), m4), high_bits<3>(qh)));
        }
        const __m256i s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales)));
        store_scales16(s16, o.scale);
        store256(o.corr, _mm256_slli_epi16(s16, 5));
        o.d = o.dc = half(x.d);
    }
};

// Q2_K / Q3_K: four 2-bit planes per 32 bytes of qs; element 128h + 32j + l is bits 2j of
// qs[32h + l].
template <int J>
__m256i two_bits(__m256i q) {
    return _mm256_and_si256(move_bit<2 * J, 0>(q), _mm256_set1_epi8(3));
}

struct Q3K {
    using Block = strata::BlockQ3_K;
    static constexpr bool kOffset = true;  // u - 4
    // Adds 4 where hmask bit B is set (element 32 * B + l of the super-block).
    template <int B>
    static __m256i high_bit(__m256i hm) {
        return _mm256_and_si256(move_bit<B, 2>(hm), _mm256_set1_epi8(4));
    }
    template <int H>
    static void unpack_half(const Block& x, __m256i hm, KBlock& o) {
        const __m256i q = load256(x.qs + 32 * H);
        uint8_t* u = o.u + 128 * H;
        store256(u, _mm256_or_si256(two_bits<0>(q), high_bit<4 * H + 0>(hm)));
        store256(u + 32, _mm256_or_si256(two_bits<1>(q), high_bit<4 * H + 1>(hm)));
        store256(u + 64, _mm256_or_si256(two_bits<2>(q), high_bit<4 * H + 2>(hm)));
        store256(u + 96, _mm256_or_si256(two_bits<3>(q), high_bit<4 * H + 3>(hm)));
    }
    static void unpack(const Block& x, KBlock& o) {
        const __m256i hm = load256(x.hmask);
        unpack_half<0>(x, hm, o);
        unpack_half<1>(x, hm, o);
        constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
        uint32_t aux[4];
        std::memcpy(aux, x.scales, 12);
        const uint32_t tmp = aux[2];
        aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
        aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
        aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
        aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
        const __m128i raw = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(aux)), _mm_set1_epi8(32));
        const __m256i s16 = _mm256_cvtepi8_epi16(raw);
        store_scales16(s16, o.scale);
        store256(o.corr, _mm256_slli_epi16(s16, 2));
        o.d = o.dc = half(x.d);
    }
};

struct Q2K {
    using Block = strata::BlockQ2_K;
    static constexpr bool kOffset = false;
    template <int H>
    static void unpack_half(const Block& x, KBlock& o) {
        const __m256i q = load256(x.qs + 32 * H);
        uint8_t* u = o.u + 128 * H;
        store256(u, two_bits<0>(q));
        store256(u + 32, two_bits<1>(q));
        store256(u + 64, two_bits<2>(q));
        store256(u + 96, two_bits<3>(q));
    }
    static void unpack(const Block& x, KBlock& o) {
        unpack_half<0>(x, o);
        unpack_half<1>(x, o);
        const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        store_scales16(_mm256_cvtepu8_epi16(_mm_and_si128(sc, m4)), o.scale);
        store256(o.corr, _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), m4)));
        o.d = half(x.d);
        o.dc = half(x.dmin);
    }
};

template <class V, class Type>
struct KQuant {
    using F = typename V::F;
    using I = typename V::I;
    using WBlock = KBlock;
    using Act = strata::BlockQ8_K;
    static constexpr int R = V::kBytes == 64 ? 4 : 2;
    static constexpr int T = 4;

    // Q8_K rows are used in place.
    struct Acts {
        const uint8_t* x;
        size_t ldx;
        const Act* step(int64_t t, int64_t s) const { return reinterpret_cast<const Act*>(x + t * ldx) + s; }
    };
    static int64_t act_bytes(int64_t k) { return k / 256 * static_cast<int64_t>(sizeof(Act)); }
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t, int64_t) { return {x, ldx}; }

    static void unpack(const uint8_t* row, int64_t, int64_t s, KBlock& out) {
        Type::unpack(reinterpret_cast<const typename Type::Block*>(row)[s], out);
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
                for (int r = 0; r < NR; ++r) sum[r][t] = V::dot_i16(sum[r][t], V::maddubs(u[r], q), sc[r]);
            }
        }
        for (int t = 0; t < NT; ++t) {
            for (int r = 0; r < NR; ++r) {
                const I corr = V::madd16(a[t]->bsums, w[r].corr);
                F& out = acc[r * stride + t];
                if constexpr (Type::kOffset) {
                    out = V::fma(V::cvt(V::sub_i32(sum[r][t], corr)), V::set1(w[r].d * a[t]->d), out);
                } else {
                    out = V::fma(V::cvt(sum[r][t]), V::set1(w[r].d * a[t]->d), out);
                    out = V::fnma(V::cvt(corr), V::set1(w[r].dc * a[t]->d), out);
                }
            }
        }
    }
};

}  // namespace simd
}  // namespace
