// kernels/simd/gemm_float.h — F32, F16 and BF16 weights against activations of the same
// type: both sides widened to F32 (exactly) and multiplied with FMAs. Activations are
// widened once per token block, weights once per step and token block (or, for a few
// tokens, in registers straight from the row; for one token the activations too).
// Summation order is llama.cpp's on AVX-512, so that F16/F32 products round exactly as the
// reference engine's do (another order can move a later F16 rounding of an activation
// across a boundary): for one token GGML's vec_dot (four chains of 16 float lanes over
// 64-element steps, reduced as (c0 + c2) + (c1 + c3), the tail of k % 64 added after);
// for more, tinyBLAS (one chain of 16 lanes per (row, token)). The lanes are then added as
// _mm512_reduce_add_ps does. The AVX2 variant carries 16 lanes as two vectors and gives
// bit-identical results.
// Must not touch: other weight families.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/intrinsics.h"
#include "kernels/simd/float_lanes16.h"
#include "kernels/simd/vec_ops.h"

namespace {
namespace simd {

struct FBlock {
    alignas(64) float w[kStep];
};


// Element types; tail_sum adds elements [from, k) of a one-token dot to the vector part
// as GGML's vec_dot does (F32 in float, with the FMA GCC makes of its sum += x * y;
// F16/BF16 in double).
template <class V>
struct F32Elems {
    using Elem = float;
    static typename V::F load(const float* p) { return V::load(p); }
    static float value(float x) { return x; }
    static float tail_sum(float sum, const float* w, const float* a, int64_t from, int64_t k) {
        for (int64_t i = from; i < k; ++i) sum = __builtin_fmaf(w[i], a[i], sum);  // as GCC contracts GGML's
        return sum;
    }
};
// The 16-bit types: Widen gives the vector (load) and scalar (value) widening.
template <class V, class Widen>
struct HalfElems {
    using Elem = uint16_t;
    static typename V::F load(const uint16_t* p) { return Widen::load(p); }
    static float value(uint16_t h) { return Widen::value(h); }
    static float tail_sum(float sum, const uint16_t* w, const float* a, int64_t from, int64_t k) {
        double d = sum;
        for (int64_t i = from; i < k; ++i) d += static_cast<double>(Widen::value(w[i]) * a[i]);
        return static_cast<float>(d);
    }
};
template <class V>
struct WidenF16 {
    static typename V::F load(const uint16_t* p) { return V::load_f16(p); }
    static float value(uint16_t h) { return _cvtsh_ss(h); }
};
template <class V>
struct WidenBF16 {
    static typename V::F load(const uint16_t* p) { return V::load_bf16(p); }
    static float value(uint16_t h) {
        const uint32_t bits = static_cast<uint32_t>(h) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
};
template <class V>
using F16Elems = HalfElems<V, WidenF16<V>>;
template <class V>
using BF16Elems = HalfElems<V, WidenBF16<V>>;

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
    static constexpr int T = V::N == 16 ? 4 : 2;

    // The widened panel, or (one token, prepare_fused) the activations as they come.
    struct Acts {
        const float* panel;
        int64_t steps;
        const Elem* raw = nullptr;
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

    // One token's vec_dot widens the activations as it goes, as GGML's does: the F32 panel
    // of a long row (32 KB for k = 8192, a 1B model's ffn_down) filled Zen 4's L1 beside
    // the weight stream, where its 16-bit activations take half that (tests/bench/HISTORY.md,
    // "F16 one token: activations widened as it goes").
    static Acts prepare_fused(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if (nt > 1) return prepare(x, ldx, nt, k);
        return {nullptr, 0, reinterpret_cast<const Elem*>(x)};
    }

    static void unpack(const uint8_t* row, int64_t k, int64_t s, FBlock& o) {
        widen_step<V, Elems>(reinterpret_cast<const Elem*>(row), k, s, o.w);
    }

    // Few tokens: weights widened in registers straight from the row.
    static constexpr int kFusedTokens = V::N == 16 ? 4 : 2;
    static constexpr int kFusedRows = 1;  // one sequential weight stream: see gemm_kquant.h
    using L = Lanes16<V>;
    using Acc = L;
    static Acc acc_zero() { return L::zero(); }
    static float acc_sum(const Acc& a) { return a.sum(); }

    template <int NR, int NT>
    static void fused(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        if constexpr (NT == 1) vec_dot<NR>(w, ldw, k, acts.raw, Y);
        else tiny_blas<NR, NT>(w, ldw, k, acts, t0, Y, ldy);
    }

    // One token, in GGML's vec_dot order. Rows longer than kL1Acts bytes (intrinsics.h:
    // an 8B model's ffn_down, k = 14336; a 1B model's, k = 8192, in F16) bring the weights
    // kFarAhead bytes ahead into L2 and kNearAhead into L1, as gemm_kquant.h's narrow_row does:
    // before, the weights streaming through L1 pushed the activations out (F16 16 or 28 KB).
    // The distances and the row lengths that gain were measured (tests/bench/HISTORY.md, "F16
    // one token: long rows' prefetch").
    // Shorter rows did not gain (8192x2048, 14336x4096), so they keep the hardware's
    // prefetchers alone.
    template <int NR>
    static void vec_dot(const uint8_t* w, size_t ldw, int64_t k, const Elem* a, float* Y) {
        const Elem* rows[NR];
        for (int r = 0; r < NR; ++r) rows[r] = reinterpret_cast<const Elem*>(w + r * ldw);
        L sum[NR][4];
        for (int r = 0; r < NR; ++r)
            for (int c = 0; c < 4; ++c) sum[r][c] = L::zero();
        const int64_t whole = k / 64 * 64;
        const bool long_row = k * int64_t(sizeof(Elem)) > kL1Acts;
        for (int64_t i = 0; i < whole; i += 64) {
            if (long_row)
                for (int r = 0; r < NR; ++r) {
                    const auto* at = reinterpret_cast<const char*>(rows[r] + i);
                    prefetch_bytes<2>(at + kFarAhead, 64 * sizeof(Elem));
                    prefetch_bytes(at + kNearAhead, 64 * sizeof(Elem));
                }
            for (int c = 0; c < 4; ++c) {
                const L av = L::load(Elems::load, a + i + 16 * c);
                for (int r = 0; r < NR; ++r) sum[r][c].fma(L::load(Elems::load, rows[r] + i + 16 * c), av);
            }
        }
        float tail[64];
        for (int64_t i = whole; i < k; ++i) tail[i - whole] = Elems::value(a[i]);
        for (int r = 0; r < NR; ++r) {
            sum[r][0].add(sum[r][2]);
            sum[r][1].add(sum[r][3]);
            sum[r][0].add(sum[r][1]);
            Y[r] = Elems::tail_sum(sum[r][0].sum(), rows[r] + whole, tail, 0, k - whole);
        }
    }

    // Several tokens, in tinyBLAS's order.
    template <int NR, int NT>
    static void tiny_blas(const uint8_t* w, size_t ldw, int64_t k, const Acts& acts, int64_t t0, float* Y, size_t ldy) {
        const Elem* rows[NR];
        for (int r = 0; r < NR; ++r) rows[r] = reinterpret_cast<const Elem*>(w + r * ldw);
        const float* a[NT];
        for (int t = 0; t < NT; ++t) a[t] = acts.step(t0 + t, 0);
        L sum[NR][NT];
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) sum[r][t] = L::zero();
        for (int64_t i = 0; i < k; i += 16) {
            L wv[NR];
            if (i + 16 <= k) {
                for (int r = 0; r < NR; ++r) wv[r] = L::load(Elems::load, rows[r] + i);
            } else {  // the panel is zero past k; weights through a padded copy
                for (int r = 0; r < NR; ++r) wv[r] = L::load(Elems::load, Tail<Elem, 16>(rows[r] + i, k - i).v);
            }
            for (int t = 0; t < NT; ++t) {
                const L av = L::load(V::load, a[t] + i);
                for (int r = 0; r < NR; ++r) sum[r][t].fma(wv[r], av);
            }
        }
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) Y[t * ldy + r] = sum[r][t].sum();
    }

    // Continues each (row, token) chain through step s.
    template <int NR, int NT>
    static void step(const FBlock* w, const Acts& acts, int64_t t0, int64_t s, Acc* acc, int64_t stride) {
        const float* a[NT];
        for (int t = 0; t < NT; ++t) a[t] = acts.step(t0 + t, s);
        L sum[NR][NT];
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) sum[r][t] = acc[r * stride + t];
        for (int c = 0; c < kStep; c += 16) {
            L wv[NR];
            for (int r = 0; r < NR; ++r) wv[r] = L::load(V::load, w[r].w + c);
            for (int t = 0; t < NT; ++t) {
                const L av = L::load(V::load, a[t] + c);
                for (int r = 0; r < NR; ++r) sum[r][t].fma(wv[r], av);
            }
        }
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) acc[r * stride + t] = sum[r][t];
    }
};

}  // namespace simd
}  // namespace
