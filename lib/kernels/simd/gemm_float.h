// kernels/simd/gemm_float.h — F32, F16 and BF16 weights against activations of the same
// type: both sides widened to F32 (exactly) and multiplied with FMAs. Activations are
// widened once per token block, weights once per step and token block.
// Must not touch: other weight families.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/vec_ops.h"

namespace {
namespace simd {

struct FBlock {
    alignas(64) float w[kStep];
};

template <class V>
struct F32Elems {
    using Elem = float;
    static typename V::F load(const float* p) { return V::load(p); }
};
template <class V>
struct F16Elems {
    using Elem = uint16_t;
    static typename V::F load(const uint16_t* p) { return V::load_f16(p); }
};
template <class V>
struct BF16Elems {
    using Elem = uint16_t;
    static typename V::F load(const uint16_t* p) { return V::load_bf16(p); }
};

// Elements [s * kStep, s * kStep + kStep) of a row of k, as floats, zero past k.
template <class V, class Elems>
void widen_step(const typename Elems::Elem* row, int64_t k, int64_t s, float* out) {
    const int64_t n = min64(kStep, k - s * kStep);
    map_row<V>(row + s * kStep, out, n, Elems::load, V::store);
    if (n < kStep) std::memset(out + n, 0, sizeof(float) * (kStep - n));
}

template <class V, template <class> class ElemsT>
struct FloatGemm {
    using F = typename V::F;
    using Elems = ElemsT<V>;
    using Elem = typename Elems::Elem;
    using WBlock = FBlock;
    static constexpr int R = V::N == 16 ? 4 : 2;
    static constexpr int T = 4;

    struct Acts {
        const float* panel;
        int64_t steps;
        const float* step(int64_t t, int64_t s) const { return panel + (t * steps + s) * kStep; }
    };
    static int64_t act_bytes(int64_t k) { return steps(k) * kStep * static_cast<int64_t>(sizeof(float)); }

    static Acts prepare(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        const int64_t ns = steps(k);
        auto* panel = static_cast<float*>(scratch(static_cast<size_t>(nt * ns * kStep) * sizeof(float)));
        for (int64_t t = 0; t < nt; ++t) {
            const auto* row = reinterpret_cast<const Elem*>(x + t * ldx);
            for (int64_t s = 0; s < ns; ++s) widen_step<V, Elems>(row, k, s, panel + (t * ns + s) * kStep);
        }
        return {panel, ns};
    }

    static void unpack(const uint8_t* row, int64_t k, int64_t s, FBlock& o) {
        widen_step<V, Elems>(reinterpret_cast<const Elem*>(row), k, s, o.w);
    }

    // Few tokens: weights widened in registers straight from the row, two vectors at a time
    // (two accumulators per pair hide the FMA latency).
    static constexpr int kFusedTokens = 4;
    static constexpr int kFusedRows = R;

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        const Elem* rows[NR];
        for (int r = 0; r < NR; ++r) rows[r] = reinterpret_cast<const Elem*>(w + r * ldw);
        const float* a[NT];
        for (int t = 0; t < NT; ++t) a[t] = acts.step(t0 + t, 0);
        F sum[2][NR][NT];
        for (int u = 0; u < 2; ++u)
            for (int r = 0; r < NR; ++r)
                for (int t = 0; t < NT; ++t) sum[u][r][t] = V::zero();
        auto madd = [&](int u, int64_t i, const F (&wv)[NR]) {
            for (int t = 0; t < NT; ++t) {
                const F av = V::load(a[t] + i);
                for (int r = 0; r < NR; ++r) sum[u][r][t] = V::fma(wv[r], av, sum[u][r][t]);
            }
        };
        int64_t i = 0;
        for (; i + 2 * V::N <= k; i += 2 * V::N) {
            F w0[NR], w1[NR];
            for (int r = 0; r < NR; ++r) {
                w0[r] = Elems::load(rows[r] + i);
                w1[r] = Elems::load(rows[r] + i + V::N);
            }
            madd(0, i, w0);
            madd(1, i + V::N, w1);
        }
        for (; i < k; i += V::N) {  // the panel is zero past k; weights through a padded copy
            F wv[NR];
            for (int r = 0; r < NR; ++r) wv[r] = Elems::load(Tail<Elem, V::N>(rows[r] + i, min64(V::N, k - i)).v);
            madd(0, i, wv);
        }
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) Y[t * ldy + r] = V::hsum(V::add(sum[0][r][t], sum[1][r][t]));
    }

    template <int NR, int NT>
    static void step(const FBlock* w, const Acts& acts, int64_t t0, int64_t s, F* acc, int64_t stride) {
        const float* a[NT];
        for (int t = 0; t < NT; ++t) a[t] = acts.step(t0 + t, s);
        F sum[NR][NT];
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) sum[r][t] = V::zero();
        for (int c = 0; c < kStep; c += V::N) {
            F wv[NR];
            for (int r = 0; r < NR; ++r) wv[r] = V::load(w[r].w + c);
            for (int t = 0; t < NT; ++t) {
                const F av = V::load(a[t] + c);
                for (int r = 0; r < NR; ++r) sum[r][t] = V::fma(wv[r], av, sum[r][t]);
            }
        }
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) acc[r * stride + t] = V::add(acc[r * stride + t], sum[r][t]);
    }
};

}  // namespace simd
}  // namespace
