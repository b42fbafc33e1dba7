// kernels/simd/gemm_kquant_r8.h — products of the 8-row layouts Q4_K_R8, Q5_K_R8, Q6_K_R8
// and IQ4_XS_R8 (tensor/repack.h: the file type's rows interleaved by dword, 8 at a time,
// at load) against Q8_K activations, for every token count, in the lanes with a row per
// int32 lane: AVX2 gemm_kquant_rows8_avx2.h's (one vpmaddubsw per position and token, int16 sums
// of positions before one vpmaddwd by the 8 rows' scale; IQ4_XS's signed values by their
// magnitudes and a vpmaddwd per position), AVX-512 gemm_kquant_rows16_avx512.h's over two groups
// (one vpdpbusd per position and token, a vpmulld per group, the activations in
// gemm_kquant_quads_avx512.h's copy), except one token of Q4_K_R8 and Q6_K_R8, which takes AVX2's
// a group at a time (Lanes16, below). Each vector of a dword of 8 rows is read as it is stored, where the file's order
// takes a transposition (per super-block and 8 rows, Q4_K 4 of 8 x 8 dwords and one of 4 x
// 8, Q5_K 5 and one, Q6_K 6 and one, IQ4_XS 4 and one), and from one token on: a group is
// one sequential stream, where 8 rows in the file's order are 8 short ones (which is why
// the file's types take the lanes only from 2 or more tokens).
// Must not touch: the file types' products, other weight types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/gemm_kquant_rows8_avx2.h"
#if defined(STRATA_SIMD_AVX512)
#include "kernels/simd/gemm_kquant_quads_avx512.h"
#endif

namespace {
namespace simd {

// AVX2's lanes: one group of 8 rows per tile, the Q8_K rows as they come.
template <class Form>
struct Lanes8 {
    static constexpr int kRows = 8;
    struct Acts {
        const uint8_t* x;
        size_t ldx;
    };
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t, int64_t) { return Acts{x, ldx}; }
    template <int NR, int NT>
    static void tile(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        Rows8<Form>::template tile<NT, Interleaved8>(w, ldw, NR, k / 256, acts.x, acts.ldx, t0, Y, ldy);
    }
};

#if defined(STRATA_SIMD_AVX512)
// AVX-512's: two groups of 8 rows per tile (Interleaved16), the activations in the quad
// lanes' copy (Type: the file type, whose copy order the Form reads). One token alone takes
// Form8 where one is given, the 8-row lanes of AVX2 (the Q8_K row as it comes), a group
// after the other, which is slower in cache but reads DRAM better; Q5_K_R8 gained nothing
// and IQ4_XS_R8 lost (its AVX2 form is bound by its instructions), so they take none: one
// stream at a time reads better than two (tests/bench/HISTORY.md, "K-quant 8-row layouts,
// one token on AVX-512"; a timing-only model of 16 rows as one stream did not gain).
template <class V, class Type, class Form, class Form8 = void>
struct Lanes16 {
    static constexpr bool kByRow = !std::is_void_v<Form8>;
    static constexpr int kRows = 16;
    using Quads = KQuantQuads<V, Type>;
    struct Acts {
        const uint8_t* x;
        size_t ldx;
        bool by_row;  // one token's Q8_K row (Form8's lanes), not the quad copy
    };
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if (kByRow && nt == 1) return Acts{x, ldx, true};
        const auto copy = Quads::quad_copy(x, ldx, nt, k);
        return Acts{copy.x, copy.ldx, false};
    }
    template <int NR, int NT>
    static void tile(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (kByRow && NT == 1) {
            if (acts.by_row) {
                for (int g = 0; g < NR; g += 8)
                    Rows8<Form8>::template tile<1, Interleaved8>(w + g * ldw, ldw, NR - g < 8 ? NR - g : 8, k / 256, acts.x, acts.ldx, t0,
                                                                 Y + g, ldy);
                return;
            }
        }
        Rows16<V, Form>::template tile<NT, Interleaved16>(w, ldw, NR, k / 256, acts.x, acts.ldx, t0, Y, ldy);
    }
};
#endif

// The driver's family for an 8-row layout in Lanes' tiles (whole groups: NR a multiple of 8;
// GemmGroups cuts the ranges).
template <class V, class Lanes>
struct KQuantR8 {
    using Act = strata::BlockQ8_K;
    using Acts = typename Lanes::Acts;
    static int64_t act_bytes(int64_t k) { return k / 256 * static_cast<int64_t>(sizeof(Act)); }
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) { return Lanes::prepare(x, ldx, nt, k); }
    static constexpr int kFusedTokens = 8, kFusedRows = Lanes::kRows;

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        Lanes::template tile<NR, NT>(w, ldw, k, acts, t0, Y, ldy);
    }
};

}  // namespace simd
}  // namespace
