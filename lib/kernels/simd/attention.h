// kernels/simd/attention.h — flash attention's inner step written once against an ISA's
// vector traits V: a group of queries against one KV block (16 positions, keys stored
// transposed) folded into an online softmax. A query's 16 scores come from hd vector FMAs
// of a broadcast query element with a row of the transposed keys (no horizontal sums),
// and every key and value row is fetched from memory once for the whole group (the query
// heads of one KV head). Head sizes that are not a multiple of V::N, or groups larger
// than kAttendMaxGroup, take the scalar reference. Rules of simd/ headers apply (vec_ops.h).
// Must not touch: which positions a query sees (the caller passes [lo, hi)), threads.
#pragma once

#include <cstdint>

#include "kernels/simd/intrinsics.h"
#include "kernels/simd/vec_ops.h"
#include "kernels/table.h"

namespace {
namespace simd {

// NG queries' scores for the block's 16 positions, into p[g][j] (unscaled): per key
// element d one load of the transposed keys' row d, FMAs into 2 * NG independent chains.
template <class V, int NG>
void block_scores(const float* q, int hd, const uint16_t* kt, float (*p)[strata::kernels::detail::kAttendBlock]) {
    constexpr int B = strata::kernels::detail::kAttendBlock, P = B / V::N;
    using F = typename V::F;
    F s[NG][2][P];
    for (int g = 0; g < NG; ++g)
        for (int h = 0; h < 2; ++h)
            for (int i = 0; i < P; ++i) s[g][h][i] = V::zero();
    for (int d = 0; d < hd; d += 2)
        for (int h = 0; h < 2; ++h) {
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

template <class V>
void attend_f16(const float* q, int G, int hd, const uint16_t* kt, const uint16_t* v, size_t ldv, int lo, int hi, float scale,
                float cap, float* m, float* l, float* acc) {
    using strata::kernels::detail::kAttendBlock;
    using strata::kernels::detail::kAttendMaxGroup;
    using F = typename V::F;
    if (hd % V::N != 0 || hd % 2 != 0 || G > kAttendMaxGroup || kAttendBlock % V::N != 0) {
        strata::kernels::detail::attend_f16_scalar(q, G, hd, kt, v, ldv, lo, hi, scale, cap, m, l, acc);
        return;
    }
    constexpr int P = kAttendBlock / V::N;
    const int nv = hd / V::N;
    float p[kAttendMaxGroup][kAttendBlock];
    for (int g = 0; g < G; g += 4) {
        const float* qg = q + size_t(g) * hd;
        switch (G - g) {
            case 1: block_scores<V, 1>(qg, hd, kt, p + g); break;
            case 2: block_scores<V, 2>(qg, hd, kt, p + g); break;
            case 3: block_scores<V, 3>(qg, hd, kt, p + g); break;
            default: block_scores<V, 4>(qg, hd, kt, p + g); break;
        }
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
        if (corr != 1.0f) {
            float* ag = acc + size_t(g) * hd;
            for (int i = 0; i < nv; ++i) V::store(ag + i * V::N, V::mul(V::load(ag + i * V::N), V::set1(corr)));
        }
    }
    // acc[g] += p[g][j] * v_j, four vectors of acc[g] at a time kept in registers over j.
    for (int g = 0; g < G; ++g) {
        float* ag = acc + size_t(g) * hd;
        int i = 0;
        for (; i + 4 <= nv; i += 4) {
            F a0 = V::load(ag + i * V::N), a1 = V::load(ag + (i + 1) * V::N);
            F a2 = V::load(ag + (i + 2) * V::N), a3 = V::load(ag + (i + 3) * V::N);
            for (int j = lo; j < hi; ++j) {
                const uint16_t* vj = v + size_t(j) * ldv + i * V::N;
                const F pj = V::set1(p[g][j]);
                a0 = V::fma(V::load_f16(vj), pj, a0);
                a1 = V::fma(V::load_f16(vj + V::N), pj, a1);
                a2 = V::fma(V::load_f16(vj + 2 * V::N), pj, a2);
                a3 = V::fma(V::load_f16(vj + 3 * V::N), pj, a3);
            }
            V::store(ag + i * V::N, a0);
            V::store(ag + (i + 1) * V::N, a1);
            V::store(ag + (i + 2) * V::N, a2);
            V::store(ag + (i + 3) * V::N, a3);
        }
        for (; i < nv; ++i) {
            F a = V::load(ag + i * V::N);
            for (int j = lo; j < hi; ++j) a = V::fma(V::load_f16(v + size_t(j) * ldv + i * V::N), V::set1(p[g][j]), a);
            V::store(ag + i * V::N, a);
        }
    }
}

}  // namespace simd
}  // namespace
