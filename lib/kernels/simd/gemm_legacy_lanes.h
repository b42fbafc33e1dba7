// kernels/simd/gemm_legacy_lanes.h — what the row-lane products of the 32-element block types
// share (gemm_legacy_rows16.h on AVX-512, gemm_legacy_rows8.h on AVX2): the activations'
// copy, made once per product (block by block with the tokens side by side, each block's
// scale as a float, -off times its quants' sum and Q8_1's s), and the choice by token count
// between the lanes' tile and Legacy's narrow_row.
// Must not touch: the lanes' tiles, Legacy's paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_legacy.h"

namespace {
namespace simd {

// A token's block as the row lanes read it: the quants, the scale as a float, -off times the
// quants' sum, and Q8_1's s (Q4_1, Q5_1).
struct Q8Lane {
    int8_t q[32];
    float d;
    int32_t off;
    float s;
};

// Legacy, with products of Tiles::kMinTokens..8 tokens in Tiles::tile<NT>(w, ldw, nr, blocks,
// lanes, nt, Y, ldy) (token t's block b at lanes[b * nt + t]).
template <class V, class Type, class Tiles>
struct LegacyLanes : Legacy<V, Type> {
    using Base = Legacy<V, Type>;
    using Act = typename Base::Act;

    // Legacy's panel, or (from kMinTokens) the lanes' copy.
    struct Acts : Base::Acts {
        const Q8Lane* lanes = nullptr;
        int64_t nt = 0;
    };
    // The lanes take every product the driver hands them (gemm_driver.h): on AVX2 all of them,
    // in chunks of up to 8 tokens; on AVX-512 GemmX4 hands them up to kX4ChunkedTokens.
    static constexpr bool kFusedAll = true;
    static int64_t act_bytes(int64_t k) { return k / 32 * static_cast<int64_t>(sizeof(Q8Lane)); }
    static Acts prepare(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) { return Acts{Base::prepare(x, ldx, nt, k)}; }
    static Acts prepare_fused(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if (nt < Tiles::kMinTokens) return prepare(x, ldx, nt, k);
        const int64_t nb = k / 32;
        auto* lanes = static_cast<Q8Lane*>(scratch(static_cast<size_t>(nb * nt) * sizeof(Q8Lane)));
        for (int64_t t = 0; t < nt; ++t) {
            const Act* a = reinterpret_cast<const Act*>(x + t * ldx);
            for (int64_t b = 0; b < nb; ++b) {
                Q8Lane& o = lanes[b * nt + t];
                std::memcpy(o.q, a[b].qs, sizeof o.q);
                o.d = half_f(a[b].d);
                int32_t sum = 0;
                for (int8_t q : a[b].qs) sum += q;
                o.off = -Type::kOffset * sum;
                if constexpr (Type::kMin) o.s = half_f(a[b].s);
                else o.s = 0.0f;
            }
        }
        Acts acts{};
        acts.lanes = lanes;
        acts.nt = nt;
        return acts;
    }

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (NT >= Tiles::kMinTokens) Tiles::template tile<NT>(w, ldw, NR, k / 32, acts.lanes + t0, acts.nt, Y, ldy);
        else Base::template fused<NR, NT>(w, ldw, k, acts, t0, Y, ldy);
    }
};

}  // namespace simd
}  // namespace
