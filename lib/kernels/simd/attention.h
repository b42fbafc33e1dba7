// kernels/simd/attention.h — flash attention's inner step written once against an ISA's
// vector traits V: a group of queries against one KV block (16 positions, keys stored
// transposed) folded into an online softmax. A query's 16 scores come from hd vector FMAs
// of a broadcast query element with a row of the transposed keys (no horizontal sums),
// and every key and value row is fetched from memory once for the whole group (the query
// heads of one KV head). Head sizes that are not a multiple of V::N, or groups larger
// than kAttendMaxGroup, take the scalar reference. Rules of simd/ headers apply (vec_ops.h).
// Must not touch: which positions a query sees (the caller passes [lo, hi)), threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/intrinsics.h"
#include "kernels/simd/vec_ops.h"
#include "kernels/table.h"

namespace {
namespace simd {

// Ahead's 64-byte lines for a key loop of n steps: line i at step i, the lines from n on
// after the loop (rest). Empty when there is nothing to bring in.
struct AheadLines {
    const char* first = nullptr;
    size_t lines = 0;
    AheadLines() = default;
    explicit AheadLines(strata::kernels::Ahead a) {
        if (!a.p || a.bytes == 0) return;
        const auto at = reinterpret_cast<uintptr_t>(a.p);
        first = reinterpret_cast<const char*>(at / 64 * 64);
        lines = (at % 64 + a.bytes + 63) / 64;
    }
    void step(int i) const {
        if (size_t(i) < lines) _mm_prefetch(first + size_t(i) * 64, _MM_HINT_T1);
    }
    void rest(int n) const {
        for (size_t i = size_t(n); i < lines; ++i) _mm_prefetch(first + i * 64, _MM_HINT_T1);
    }
};

// NG queries' scores for the block's 16 positions, into p[g][j] (unscaled): per key
// element d one load of the transposed keys' row d, FMAs into 2 * NG independent chains,
// and line d of `ahead`. Keys are F16, or Q8_0: int8 rows with an F16 scale per position
// for each 32 elements.
template <class V, int NG>
void block_scores(const float* q, int hd, const uint16_t* kt, float (*p)[strata::kernels::detail::kAttendBlock], const AheadLines& ahead) {
    constexpr int B = strata::kernels::detail::kAttendBlock, P = B / V::N;
    using F = typename V::F;
    F s[NG][2][P];
    for (int g = 0; g < NG; ++g)
        for (int h = 0; h < 2; ++h)
            for (int i = 0; i < P; ++i) s[g][h][i] = V::zero();
    for (int d = 0; d < hd; d += 2)
        for (int h = 0; h < 2; ++h) {
            ahead.step(d + h);
            F k[P];
            for (int i = 0; i < P; ++i) k[i] = V::load_f16(kt + size_t(d + h) * B + i * V::N);
            for (int g = 0; g < NG; ++g) {
                const F qd = V::set1(q[size_t(g) * hd + d + h]);
                for (int i = 0; i < P; ++i) s[g][h][i] = V::fma(k[i], qd, s[g][h][i]);
            }
        }
    for (int g = 0; g < NG; ++g)
        for (int i = 0; i < P; ++i) V::store(p[g] + i * V::N, V::add(s[g][0][i], s[g][1][i]));
}

template <class V, int NG>
void block_scores_q8(const float* q, int hd, const int8_t* kq, const uint16_t* ks, float (*p)[strata::kernels::detail::kAttendBlock],
                     const AheadLines& ahead) {
    constexpr int B = strata::kernels::detail::kAttendBlock, P = B / V::N;
    using F = typename V::F;
    F s[NG][P];
    for (int g = 0; g < NG; ++g)
        for (int i = 0; i < P; ++i) s[g][i] = V::zero();
    for (int c = 0; c < hd / 32; ++c) {
        F part[NG][2][P];
        for (int g = 0; g < NG; ++g)
            for (int h = 0; h < 2; ++h)
                for (int i = 0; i < P; ++i) part[g][h][i] = V::zero();
        for (int d = c * 32; d < c * 32 + 32; d += 2)
            for (int h = 0; h < 2; ++h) {
                ahead.step(d + h);
                F k[P];
                for (int i = 0; i < P; ++i) k[i] = V::load_i8(kq + size_t(d + h) * B + i * V::N);
                for (int g = 0; g < NG; ++g) {
                    const F qd = V::set1(q[size_t(g) * hd + d + h]);
                    for (int i = 0; i < P; ++i) part[g][h][i] = V::fma(k[i], qd, part[g][h][i]);
                }
            }
        for (int i = 0; i < P; ++i) {
            const F scale = V::load_f16(ks + size_t(c) * B + i * V::N);
            for (int g = 0; g < NG; ++g) s[g][i] = V::fma(V::add(part[g][0][i], part[g][1][i]), scale, s[g][i]);
        }
    }
    for (int g = 0; g < NG; ++g)
        for (int i = 0; i < P; ++i) V::store(p[g] + i * V::N, s[g][i]);
}

// f(g, NG) for the G queries of a group, four at a time (NG a std::integral_constant).
template <class Step>
void in_fours(int G, Step f) {
    for (int g = 0; g < G; g += 4) {
        switch (G - g) {
            case 1: f(g, std::integral_constant<int, 1>()); break;
            case 2: f(g, std::integral_constant<int, 2>()); break;
            case 3: f(g, std::integral_constant<int, 3>()); break;
            default: f(g, std::integral_constant<int, 4>()); break;
        }
    }
}

// acc[g] *= corr where the running max grew.
template <class V>
void rescale(float* acc, int hd, float corr) {
    if (corr == 1.0f) return;
    for (int i = 0; i < hd / V::N; ++i) V::store(acc + i * V::N, V::mul(V::load(acc + i * V::N), V::set1(corr)));
}

// softmax_step over all 16 positions of a block without a soft cap (every block of a long
// sequence but its ends): max and sum as vector reductions, no per-position branches.
template <class V>
void softmax_whole_block(int G, int hd, float (*p)[strata::kernels::detail::kAttendBlock], float scale, float* m, float* l,
                         float* acc) {
    constexpr int P = strata::kernels::detail::kAttendBlock / V::N;
    using F = typename V::F;
    for (int g = 0; g < G; ++g) {
        F x[P];
        F top = V::set1(m[g]);
        for (int i = 0; i < P; ++i) {
            x[i] = V::mul(V::load(p[g] + i * V::N), V::set1(scale));
            top = V::max(top, x[i]);
        }
        // Most blocks of a long sequence do not raise the running max: then it stays, with no
        // reduction, exponential or rescaling (the same values as taking them).
        const bool grew = V::any_gt(top, V::set1(m[g]));
        const float mx = grew ? V::hmax(top) : m[g];
        F sum = V::zero();
        for (int i = 0; i < P; ++i) {
            x[i] = exp<V>(V::sub(x[i], V::set1(mx)));
            V::store(p[g] + i * V::N, x[i]);
            sum = V::add(sum, x[i]);
        }
        const float block_sum = V::hsum(sum);
        if (!grew) {
            l[g] += block_sum;
            continue;
        }
        const float corr = __builtin_expf(m[g] - mx);  // 0 while nothing was seen (m = -inf)
        l[g] = l[g] * corr + block_sum;
        m[g] = mx;
        rescale<V>(acc + size_t(g) * hd, hd, corr);
    }
}

// The online-softmax update of every query of the group from its raw scores p[g][0..16)
// over positions [lo, hi): p[g][j] becomes the weight exp(s - m[g]) (0 outside the range),
// and acc[g] is rescaled when the max grows.
template <class V>
void softmax_step(int G, int hd, float (*p)[strata::kernels::detail::kAttendBlock], int lo, int hi, float scale, float cap, float* m,
                  float* l, float* acc) {
    using strata::kernels::detail::kAttendBlock;
    constexpr int P = kAttendBlock / V::N;
    if (lo == 0 && hi == kAttendBlock && cap == 0) {
        softmax_whole_block<V>(G, hd, p, scale, m, l, acc);
        return;
    }
    for (int g = 0; g < G; ++g) {
        float mx = m[g];
        for (int i = 0; i < P; ++i) V::store(p[g] + i * V::N, V::mul(V::load(p[g] + i * V::N), V::set1(scale)));
        for (int j = lo; j < hi; ++j) {
            if (cap > 0) p[g][j] = cap * __builtin_tanhf(p[g][j] / cap);
            mx = p[g][j] > mx ? p[g][j] : mx;
        }
        for (int i = 0; i < P; ++i) V::store(p[g] + i * V::N, exp<V>(V::sub(V::load(p[g] + i * V::N), V::set1(mx))));
        const float corr = __builtin_expf(m[g] - mx);  // 0 while nothing was seen (m = -inf)
        float sum = l[g] * corr;
        for (int j = 0; j < kAttendBlock; ++j) {
            if (j < lo || j >= hi) p[g][j] = 0.0f;
            sum += p[g][j];
        }
        l[g] = sum;
        m[g] = mx;
        rescale<V>(acc + size_t(g) * hd, hd, corr);
    }
}

// acc[g] += p[g][j] * d_j * x_j over j in [lo, hi) for NG queries, on C vectors of the head
// from `at` (query g's at at + g * hd): row(j, x) converts row j's C vectors into x once for
// the NG queries (it was once per query) and returns its scale d_j (1 for F16, exact). NG x
// C sums stay in registers over j, and every sum adds the positions in order, so the
// results are those of one query at a time; with softmax_whole_block a token's attention
// took a third less (tests/bench/HISTORY.md, "attention: values once per group").
template <class V, int NG, int C, class Row>
void values_pass(const float (*p)[strata::kernels::detail::kAttendBlock], int hd, int lo, int hi, float* at, Row row) {
    using F = typename V::F;
    F a[NG][C];
    for (int g = 0; g < NG; ++g)
        for (int c = 0; c < C; ++c) a[g][c] = V::load(at + size_t(g) * hd + c * V::N);
    for (int j = lo; j < hi; ++j) {
        F x[C];
        const float d = row(j, x);
        for (int g = 0; g < NG; ++g) {
            const F w = V::set1(p[g][j] * d);
            for (int c = 0; c < C; ++c) a[g][c] = V::fma(x[c], w, a[g][c]);
        }
    }
    for (int g = 0; g < NG; ++g)
        for (int c = 0; c < C; ++c) V::store(at + size_t(g) * hd + c * V::N, a[g][c]);
}

// F16 value rows: values_pass over the whole head, 4 vectors at a time on AVX-512 (16 sums
// of 4 queries in registers), 2 on AVX2 (8 of its 16 registers), then one at a time.
template <class V, int NG, int C>
void values_f16(const float (*p)[strata::kernels::detail::kAttendBlock], int hd, const uint16_t* v, size_t ldv, int lo, int hi,
                float* acc, int i) {
    values_pass<V, NG, C>(p, hd, lo, hi, acc + i * V::N, [&](int j, typename V::F* x) {
        for (int c = 0; c < C; ++c) x[c] = V::load_f16(v + size_t(j) * ldv + (i + c) * V::N);
        return 1.0f;
    });
}
template <class V, int NG>
void group_values(const float (*p)[strata::kernels::detail::kAttendBlock], int hd, const uint16_t* v, size_t ldv, int lo, int hi,
                  float* acc) {
    constexpr int C = V::N == 16 ? 4 : 2;
    const int nv = hd / V::N;
    int i = 0;
    for (; i + C <= nv; i += C) values_f16<V, NG, C>(p, hd, v, ldv, lo, hi, acc, i);
    for (; i < nv; ++i) values_f16<V, NG, 1>(p, hd, v, ldv, lo, hi, acc, i);
}

// The key loop of the first four queries brings `ahead` in (the others' would repeat it).
template <class V>
void attend_f16(const float* q, int G, int hd, const uint16_t* kt, const uint16_t* v, size_t ldv, int lo, int hi, float scale,
                float cap, float* m, float* l, float* acc, strata::kernels::Ahead ahead) {
    using strata::kernels::detail::kAttendBlock;
    using strata::kernels::detail::kAttendMaxGroup;
    if (hd % V::N != 0 || hd % 2 != 0 || G > kAttendMaxGroup || kAttendBlock % V::N != 0) {
        strata::kernels::detail::attend_f16_scalar(q, G, hd, kt, v, ldv, lo, hi, scale, cap, m, l, acc, ahead);
        return;
    }
    float p[kAttendMaxGroup][kAttendBlock];
    const AheadLines lines(ahead);
    in_fours(G, [&](int g, auto ng) {
        block_scores<V, decltype(ng)::value>(q + size_t(g) * hd, hd, kt, p + g, g == 0 ? lines : AheadLines());
    });
    lines.rest(hd);
    softmax_step<V>(G, hd, p, lo, hi, scale, cap, m, l, acc);
    in_fours(G, [&](int g, auto ng) { group_values<V, decltype(ng)::value>(p + g, hd, v, ldv, lo, hi, acc + size_t(g) * hd); });
}

// Q8_0 value rows (hd / 32 blocks of an F16 scale d and 32 int8): values_pass over each
// 32-value block, its 2 vectors at once on AVX-512, 2 of its 4 at a time on AVX2 (8 sums
// of 4 queries in registers either way).
template <class V, int NG>
void group_values_q8(const float (*p)[strata::kernels::detail::kAttendBlock], int hd, const uint8_t* v, size_t ldv, int lo, int hi,
                     float* acc) {
    constexpr int R = 32 / V::N, C = 2;
    for (int c = 0; c < hd / 32; ++c)
        for (int i = 0; i < R; i += C)
            values_pass<V, NG, C>(p, hd, lo, hi, acc + c * 32 + i * V::N, [&](int j, typename V::F* x) {
                const uint8_t* block = v + size_t(j) * ldv + size_t(c) * 34;
                uint16_t d;
                __builtin_memcpy(&d, block, 2);
                const int8_t* qs = reinterpret_cast<const int8_t*>(block + 2);
                for (int k = 0; k < C; ++k) x[k] = V::load_i8(qs + (i + k) * V::N);
                return _cvtsh_ss(d);
            });
}

// The same over a Q8_0 block: keys int8 kq [hd][16] with F16 scales ks [hd / 32][16],
// value rows of hd / 32 GGML Q8_0 blocks (F16 scale, 32 int8) ldv bytes apart.
template <class V>
void attend_q8_0(const float* q, int G, int hd, const int8_t* kq, const uint16_t* ks, const uint8_t* v, size_t ldv, int lo, int hi,
                 float scale, float cap, float* m, float* l, float* acc, strata::kernels::Ahead ahead) {
    using strata::kernels::detail::kAttendBlock;
    using strata::kernels::detail::kAttendMaxGroup;
    if (hd % 32 != 0 || G > kAttendMaxGroup || kAttendBlock % V::N != 0) {
        strata::kernels::detail::attend_q8_0_scalar(q, G, hd, kq, ks, v, ldv, lo, hi, scale, cap, m, l, acc, ahead);
        return;
    }
    float p[kAttendMaxGroup][kAttendBlock];
    const AheadLines lines(ahead);
    in_fours(G, [&](int g, auto ng) {
        block_scores_q8<V, decltype(ng)::value>(q + size_t(g) * hd, hd, kq, ks, p + g, g == 0 ? lines : AheadLines());
    });
    lines.rest(hd);
    softmax_step<V>(G, hd, p, lo, hi, scale, cap, m, l, acc);
    in_fours(G, [&](int g, auto ng) { group_values_q8<V, decltype(ng)::value>(p + g, hd, v, ldv, lo, hi, acc + size_t(g) * hd); });
}

}  // namespace simd
}  // namespace
