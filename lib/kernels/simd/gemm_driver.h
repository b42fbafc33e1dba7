// kernels/simd/gemm_driver.h — the weight-stationary loop nest every SIMD matrix product
// shares. The k dimension is cut into steps of 256 elements. For each block of tokens and
// each tile of R weight rows, every step's weights are unpacked once (into a form the
// integer or float FMAs read directly) and then applied to all the tokens of the block,
// T at a time with R x T accumulators; partial sums live in a small per-tile array.
// A family (gemm_kquant.h, gemm_legacy.h, gemm_float.h) supplies:
//   Acc, acc_zero(), acc_sum(a)  a partial sum of one (row, token) and its final float
//   WBlock                       one row's unpacked step
//   R, T                         the register tile
//   act_bytes(k)                 bytes of prepared activations per token
//   Acts prepare(X, ldx, nt, k)  the activations of a token block, and
//        Acts::step(t, s)        a pointer to token t's data for step s
//   unpack(row, k, s, WBlock&)   weights of one row, step s (zero past k)
//   step<NR, NT>(w, acts, t, s, acc, stride)
//                                adds step s of NR rows x NT tokens into acc[r * stride + t]
//   kFusedTokens                 the most tokens fused<NR, NT> takes at once,
//   kFusedRows, fused<NR, NT>(w, ldw, k, acts, t, Y, ldy)
//                                the whole product of NR rows x NT tokens, unpacking in
//                                registers (weights are used too few times to store them)
//   prepare_fused(X, ldx, nt, k) optional: the activations as fused reads them (else prepare)
// Gemm's entries (the kernels gemm_routes.h's rows name): few, up to kFusedTokens through
// fused; blocks, any number through fused, a block of tokens at a time in equal chunks of
// up to kFusedTokens (from 9 tokens on at least 4, so never under the lanes' minimum; a
// family only used so needs no Acc, WBlock, R, T, unpack, step); many, through the steps.
// GemmGroups runs blocks over an 8-row layout's whole groups.
// Must not touch: type-specific arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "tensor/repack.h"

namespace {
namespace simd {

constexpr int64_t kStep = 256;          // elements per step, the K-quant super-block
constexpr int64_t kMaxTokenBlock = 64;  // tokens sharing one unpacking of the weights
constexpr int64_t kActBudget = 256 * 1024;  // bytes of activations per token block (L2)

inline int64_t steps(int64_t k) { return (k + kStep - 1) / kStep; }
inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Per-thread, grow-only, 64-byte aligned scratch for prepared activations: allocated on
// first use and when a larger problem comes, never in the steady state.
class Scratch {
public:
    ~Scratch() { std::free(data_); }
    void* get(size_t bytes) {
        if (bytes > size_) {
            std::free(data_);
            data_ = nullptr;
            size_ = 0;
            const size_t rounded = (bytes + 63) / 64 * 64;
            data_ = std::aligned_alloc(64, rounded);
            if (!data_) throw std::bad_alloc();
            size_ = rounded;
        }
        return data_;
    }

private:
    void* data_ = nullptr;
    size_t size_ = 0;
};

inline void* scratch(size_t bytes) {
    thread_local Scratch s;
    return s.get(bytes);
}

// Calls fn(Count<n>{}) for a run-time n in [1, Max], so tiles are compile-time sized.
template <int N>
struct Count {
    static constexpr int value = N;
};
template <int Max, class Fn>
void with_count(int n, Fn&& fn) {
    if constexpr (Max >= 1) {
        if (n == Max) return fn(Count<Max>{});
        with_count<Max - 1>(n, fn);
    }
}

template <class V, class K>
struct Gemm {
    static void few(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt,
                    float* Y, size_t ldy) {
        fused(k, static_cast<const uint8_t*>(W), ldw, r0, r1, static_cast<const uint8_t*>(X), ldx, nt, Y, ldy);
    }
    static void blocks(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt,
                       float* Y, size_t ldy) {
        fused_blocks(k, static_cast<const uint8_t*>(W), ldw, r0, r1, static_cast<const uint8_t*>(X), ldx, nt, Y, ldy);
    }
    static void many(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt,
                     float* Y, size_t ldy) {
        stepped(k, static_cast<const uint8_t*>(W), ldw, r0, r1, static_cast<const uint8_t*>(X), ldx, nt, Y, ldy);
    }

    // Any number of tokens through the fused path: blocks of them whose activations stay
    // within kActBudget, each in equal chunks.
    static void fused_blocks(int64_t k, const uint8_t* w, size_t ldw, int64_t r0, int64_t r1, const uint8_t* x, size_t ldx,
                             int64_t nt, float* Y, size_t ldy) {
        const int64_t block = token_block(k, K::kFusedTokens);
        for (int64_t t0 = 0; t0 < nt; t0 += block)
            fused(k, w, ldw, r0, r1, x + t0 * ldx, ldx, min64(block, nt - t0), Y + t0 * ldy, ldy);
    }

    // Tokens sharing one pass over the weights: as many as kActBudget holds, in multiples of
    // `unit`, at most kMaxTokenBlock.
    static int64_t token_block(int64_t k, int64_t unit) {
        const int64_t block = min64(kMaxTokenBlock, kActBudget / K::act_bytes(k)) / unit * unit;
        return block < unit ? unit : block;
    }

    // Many tokens: every step's weights unpacked once per tile of R rows and token block.
    static void stepped(int64_t k, const uint8_t* w, size_t ldw, int64_t r0, int64_t r1, const uint8_t* x, size_t ldx,
                        int64_t nt, float* Y, size_t ldy) {
        constexpr int R = K::R;
        const int64_t block = token_block(k, K::T);
        for (int64_t t0 = 0; t0 < nt; t0 += block) {
            const int64_t tb = min64(block, nt - t0);
            const typename K::Acts acts = K::prepare(x + t0 * ldx, ldx, tb, k);
            for (int64_t r = r0; r < r1; r += R) {
                with_count<R>(static_cast<int>(min64(R, r1 - r)), [&](auto nr) {
                    row_tile<decltype(nr)::value>(k, w + r * ldw, ldw, acts, tb, Y + t0 * ldy + r, ldy);
                });
            }
        }
    }

    // Few tokens (blocks: a block of them): the family unpacks each weight block in
    // registers for all of them, or for each of their chunks in turn (equal chunks of up to
    // kFusedTokens) while a tile of rows stays in cache.
    static void fused(int64_t k, const uint8_t* w, size_t ldw, int64_t r0, int64_t r1, const uint8_t* x, size_t ldx,
                      int64_t nt, float* Y, size_t ldy) {
        const typename K::Acts acts = prepare_fused(x, ldx, nt, k);
        const int64_t chunks = (nt + K::kFusedTokens - 1) / K::kFusedTokens;
        for (int64_t r = r0; r < r1; r += K::kFusedRows) {
            for (int64_t c = 0; c < chunks; ++c) {
                const int64_t t0 = nt * c / chunks, n = nt * (c + 1) / chunks - t0;
                with_count<K::kFusedRows>(static_cast<int>(min64(K::kFusedRows, r1 - r)), [&](auto nr) {
                    with_count<K::kFusedTokens>(static_cast<int>(n), [&](auto ntc) {
                        K::template fused<decltype(nr)::value, decltype(ntc)::value>(w + r * ldw, ldw, k, acts, t0,
                                                                                     Y + t0 * ldy + r, ldy);
                    });
                });
            }
        }
    }

    static typename K::Acts prepare_fused(const uint8_t* x, size_t ldx, int64_t nt, int64_t k) {
        if constexpr (requires { K::prepare_fused(x, ldx, nt, k); }) return K::prepare_fused(x, ldx, nt, k);
        else return K::prepare(x, ldx, nt, k);
    }

    template <int NR>
    static void row_tile(int64_t k, const uint8_t* w, size_t ldw, const typename K::Acts& acts, int64_t tb, float* Y,
                         size_t ldy) {
        constexpr int T = K::T;
        alignas(64) typename K::Acc acc[NR * kMaxTokenBlock];
        for (int r = 0; r < NR; ++r)
            for (int64_t t = 0; t < tb; ++t) acc[r * kMaxTokenBlock + t] = K::acc_zero();
        alignas(64) typename K::WBlock wb[NR];
        const int64_t full = tb / T * T;
        for (int64_t s = 0; s < steps(k); ++s) {
            for (int r = 0; r < NR; ++r) K::unpack(w + r * ldw, k, s, wb[r]);
            for (int64_t t = 0; t < full; t += T) K::template step<NR, T>(wb, acts, t, s, acc + t, kMaxTokenBlock);
            if (full < tb) {
                with_count<T - 1>(static_cast<int>(tb - full), [&](auto nt) {
                    K::template step<NR, decltype(nt)::value>(wb, acts, full, s, acc + full, kMaxTokenBlock);
                });
            }
        }
        for (int r = 0; r < NR; ++r)
            for (int64_t t = 0; t < tb; ++t) Y[t * ldy + r] = K::acc_sum(acc[r * kMaxTokenBlock + t]);
    }
};

// Gemm's blocks over an 8-row layout (tensor/repack.h), whose family K takes whole groups of
// 8 rows: rows [r0, r1) as the whole groups within through Gemm, and a group that r0 or r1 cuts
// computed whole into a buffer, its rows in the range copied out.
template <class V, class K>
struct GemmGroups {
    static constexpr int64_t G = strata::kR8Rows;
    static void run(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                    size_t ldy) {
        const int64_t first = (r0 + G - 1) / G * G, last = r1 / G * G;
        if (first <= last) {
            if (r0 < first) part(k, W, ldw, first - G, r0, first, X, ldx, nt, Y, ldy);
            if (first < last) Gemm<V, K>::blocks(k, W, ldw, first, last, X, ldx, nt, Y, ldy);
            if (last < r1) part(k, W, ldw, last, last, r1, X, ldx, nt, Y, ldy);
        } else {
            part(k, W, ldw, last, r0, r1, X, ldx, nt, Y, ldy);  // within one group
        }
    }

    // Rows [lo, hi) of the group whose first row is g, through a scratch of its own (the
    // activations' is in use; no std container, whose out-of-line code this variant's flags
    // would build, see kernels/table.h).
    static void part(int64_t k, const void* W, size_t ldw, int64_t g, int64_t lo, int64_t hi, const void* X, size_t ldx, int64_t nt,
                     float* Y, size_t ldy) {
        thread_local Scratch buffer;
        auto* group = static_cast<float*>(buffer.get(static_cast<size_t>(nt * G) * sizeof(float)));
        Gemm<V, K>::blocks(k, static_cast<const uint8_t*>(W) + g * ldw, ldw, 0, G, X, ldx, nt, group, G);
        for (int64_t t = 0; t < nt; ++t)
            for (int64_t r = lo; r < hi; ++r) Y[t * ldy + r] = group[t * G + r - g];
    }
};

}  // namespace simd
}  // namespace
