// kernels/simd/gemm_kquant_r8.h — products of the 8-row layouts Q4_K_R8 and Q6_K_R8
// (tensor/repack.h: Q4_K's or Q6_K's rows interleaved by dword, 8 at a time, at load)
// against Q8_K activations, for both variants and every token count: gemm_kquant_rows8.h's
// lanes (a row in each int32 lane, one vpmaddubsw per position and token, int16 sums of
// positions before one vpmaddwd by the 8 rows' scale), reading each vector of a dword of 8
// rows as it is stored where the file's order takes a transposition (Q4_K per super-block
// 4 of 8 x 8 dwords and one of 4 x 8, Q6_K 6 and one), and from one token on: the 8 rows are
// one sequential stream, where 8 rows in the file's order are 8 short ones (which is why
// the file's types take the lanes from 2 tokens, Q6_K from 5, and narrow_row below).
// Must not touch: the file types' products, other weight types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/gemm_kquant_rows8.h"
#include "tensor/repack.h"

namespace {
namespace simd {

template <class V, class Form>
struct KQuantR8 {
    using Act = strata::BlockQ8_K;
    struct Acts {
        const uint8_t* x;
        size_t ldx;
    };
    static int64_t act_bytes(int64_t k) { return k / 256 * static_cast<int64_t>(sizeof(Act)); }
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t, int64_t) { return Acts{x, ldx}; }
    static constexpr int kFusedTokens = 8, kFusedRows = strata::kR8Rows;
    static constexpr bool kFusedAll = true;

    // NR rows of the group at w (all 8 are read; NR < 8 only where a range ends in a group).
    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        Rows8<Form>::template tile<NT, Interleaved8>(w, ldw, NR, k / 256, acts.x, acts.ldx, t0, Y, ldy);
    }

    // Rows [r0, r1): the whole groups within through the driver; a group that r0 or r1 cuts
    // is computed whole into a buffer and its rows in the range copied out.
    static void run(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                    size_t ldy) {
        constexpr int64_t G = strata::kR8Rows;
        const int64_t first = (r0 + G - 1) / G * G, last = r1 / G * G;
        if (first <= last) {
            if (r0 < first) part(k, W, ldw, first - G, r0, first, X, ldx, nt, Y, ldy);
            if (first < last) Gemm<V, KQuantR8>::run(k, W, ldw, first, last, X, ldx, nt, Y, ldy);
            if (last < r1) part(k, W, ldw, last, last, r1, X, ldx, nt, Y, ldy);
        } else {
            part(k, W, ldw, last, r0, r1, X, ldx, nt, Y, ldy);  // within one group
        }
    }

    // Rows [lo, hi) of the group whose first row is g.
    static void part(int64_t k, const void* W, size_t ldw, int64_t g, int64_t lo, int64_t hi, const void* X, size_t ldx, int64_t nt,
                     float* Y, size_t ldy) {
        constexpr int64_t G = strata::kR8Rows;
        thread_local std::vector<float> group;
        group.resize(static_cast<size_t>(nt * G));
        Gemm<V, KQuantR8>::run(k, static_cast<const uint8_t*>(W) + g * ldw, ldw, 0, G, X, ldx, nt, group.data(), G);
        for (int64_t t = 0; t < nt; ++t)
            for (int64_t r = lo; r < hi; ++r) Y[t * ldy + r] = group[static_cast<size_t>(t * G + r - g)];
    }
};

}  // namespace simd
}  // namespace
