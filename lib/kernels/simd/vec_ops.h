// kernels/simd/vec_ops.h — the vector ops of a transformer layer written once against an
// ISA's vector traits V (kernels/avx2/traits.h, kernels/avx512/traits.h) and instantiated
// by each ISA's translation unit. Whole vectors first, then the tail through zero-padded
// copies, so no element is read or written past n.
// Rule for every header in simd/: anonymous namespace, no std templates or inline
// functions from other headers (each ISA's build must keep its own copy of everything).
// Must not touch: the matrix products (gemm_*.h).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/intrinsics.h"
#include "kernels/simd/float_lanes16.h"

namespace {
namespace simd {

// A vector's worth of elements starting at p, zero-padded when fewer than N remain.
template <class T, int N>
struct Tail {
    T v[N] = {};
    Tail(const T* p, int64_t n) { std::memcpy(v, p, static_cast<size_t>(n) * sizeof(T)); }
    Tail() = default;
    void copy_to(T* p, int64_t n) const { std::memcpy(p, v, static_cast<size_t>(n) * sizeof(T)); }
};

// e^x to within a few ulp for |x| < 88 (Cephes' polynomial after x = n ln2 + r); the input
// is clamped so the result stays finite.
template <class V>
typename V::F exp(typename V::F x) {
    using F = typename V::F;
    x = V::min(V::max(x, V::set1(-87.3f)), V::set1(88.3f));
    const F n = V::round(V::mul(x, V::set1(1.44269504088896341f)));
    F r = V::fnma(n, V::set1(0.693359375f), x);
    r = V::fnma(n, V::set1(-2.12194440e-4f), r);
    F p = V::set1(1.9875691500e-4f);
    p = V::fma(p, r, V::set1(1.3981999507e-3f));
    p = V::fma(p, r, V::set1(8.3334519073e-3f));
    p = V::fma(p, r, V::set1(4.1665795894e-2f));
    p = V::fma(p, r, V::set1(1.6666665459e-1f));
    p = V::fma(p, r, V::set1(5.0000001201e-1f));
    p = V::fma(p, V::mul(r, r), V::add(r, V::set1(1.0f)));
    return V::ldexp(p, n);
}

// y[i] = store(load(x[i])) for whole vectors, then the zero-padded tail.
template <class V, class In, class Out, class Load, class Store>
void map_row(const In* x, Out* y, int64_t n, Load load, Store store) {
    int64_t i = 0;
    for (; i + V::N <= n; i += V::N) store(y + i, load(x + i));
    if (i == n) return;
    const Tail<In, V::N> in(x + i, n - i);
    Tail<Out, V::N> out;
    store(out.v, load(in.v));
    out.copy_to(y + i, n - i);
}

template <class V>
void f32_to_f16(const float* x, uint16_t* y, int64_t n) {
    map_row<V>(x, y, n, V::load, V::store_f16);
}

template <class V>
void f16_to_f32(const uint16_t* x, float* y, int64_t n) {
    map_row<V>(x, y, n, V::load_f16, V::store);
}

template <class V>
void f32_to_bf16(const float* x, uint16_t* y, int64_t n) {
    map_row<V>(x, y, n, V::load, V::store_bf16);
}

template <class V>
void convert_f16(const float* x, void* out, int64_t n) {
    f32_to_f16<V>(x, static_cast<uint16_t*>(out), n);
}

template <class V>
void convert_bf16(const float* x, void* out, int64_t n) {
    f32_to_bf16<V>(x, static_cast<uint16_t*>(out), n);
}

template <class V>
void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps) {
    typename V::D acc = V::dzero();
    int64_t i = 0;
    for (; i + V::N <= n; i += V::N) acc = V::add_squares(acc, V::load(x + i));
    if (i < n) acc = V::add_squares(acc, V::load(Tail<float, V::N>(x + i, n - i).v));
    const float mean = static_cast<float>(V::dsum(acc) / static_cast<double>(n));
    const typename V::F scale = V::set1(1.0f / __builtin_sqrtf(mean + eps));
    for (i = 0; i + V::N <= n; i += V::N) V::store(y + i, V::mul(V::mul(V::load(x + i), scale), V::load(w + i)));
    if (i == n) return;
    Tail<float, V::N> out;
    const Tail<float, V::N> xt(x + i, n - i), wt(w + i, n - i);
    V::store(out.v, V::mul(V::mul(V::load(xt.v), scale), V::load(wt.v)));
    out.copy_to(y + i, n - i);
}

template <class V>
typename V::F silu_times(typename V::F g, typename V::F u) {
    const typename V::F e = exp<V>(V::sub(V::zero(), g));
    return V::mul(V::div(g, V::add(V::set1(1.0f), e)), u);
}

template <class V>
void silu_mul(float* g, const float* u, int64_t n) {
    int64_t i = 0;
    for (; i + V::N <= n; i += V::N) V::store(g + i, silu_times<V>(V::load(g + i), V::load(u + i)));
    if (i == n) return;
    Tail<float, V::N> gt(g + i, n - i);
    const Tail<float, V::N> ut(u + i, n - i);
    V::store(gt.v, silu_times<V>(V::load(gt.v), V::load(ut.v)));
    gt.copy_to(g + i, n - i);
}

template <class V>
void add(float* y, const float* x, int64_t n) {
    int64_t i = 0;
    for (; i + V::N <= n; i += V::N) V::store(y + i, V::add(V::load(y + i), V::load(x + i)));
    if (i == n) return;
    Tail<float, V::N> yt(y + i, n - i);
    const Tail<float, V::N> xt(x + i, n - i);
    V::store(yt.v, V::add(V::load(yt.v), V::load(xt.v)));
    yt.copy_to(y + i, n - i);
}

// kernels.h's delta_rule, n a multiple of V::N: per row, the decayed row's dot with k, then
// the updated row's dot with q, each in one vector accumulator.
template <class V>
void delta_rule(float* S, int64_t n, const float* q, const float* k, const float* v, float decay, float beta, float scale, float* o) {
    const typename V::F dec = V::set1(decay);
    for (int64_t j = 0; j < n; ++j) {
        float* row = S + j * n;
        typename V::F acc = V::zero();
        for (int64_t i = 0; i < n; i += V::N) {
            const typename V::F s = V::mul(V::load(row + i), dec);
            V::store(row + i, s);
            acc = V::fma(s, V::load(k + i), acc);
        }
        const typename V::F d = V::set1((v[j] - V::hsum(acc)) * beta);
        acc = V::zero();
        for (int64_t i = 0; i < n; i += V::N) {
            const typename V::F s = V::fma(d, V::load(k + i), V::load(row + i));
            V::store(row + i, s);
            acc = V::fma(s, V::load(q + i), acc);
        }
        o[j] = V::hsum(acc) * scale;
    }
}

// In GGML's vec_dot_f16 order (its AVX-512 build): four chains of 16 float lanes over
// 64-element steps, reduced (c0 + c2) + (c1 + c3), the n % 64 tail added in double.
template <class V>
float dot_f16(const uint16_t* a, const uint16_t* b, int64_t n) {
    using L = Lanes16<V>;
    L acc[4] = {L::zero(), L::zero(), L::zero(), L::zero()};
    const int64_t whole = n / 64 * 64;
    for (int64_t i = 0; i < whole; i += 64)
        for (int c = 0; c < 4; ++c) acc[c].fma(L::load(V::load_f16, a + i + 16 * c), L::load(V::load_f16, b + i + 16 * c));
    acc[0].add(acc[2]);
    acc[1].add(acc[3]);
    acc[0].add(acc[1]);
    double sum = acc[0].sum();
    for (int64_t i = whole; i < n; ++i) sum += static_cast<double>(_cvtsh_ss(a[i]) * _cvtsh_ss(b[i]));
    return static_cast<float>(sum);
}

template <class V>
void axpy_f16(float* y, float a, const uint16_t* x, int64_t n) {
    const typename V::F av = V::set1(a);
    int64_t i = 0;
    for (; i + V::N <= n; i += V::N) V::store(y + i, V::fma(V::load_f16(x + i), av, V::load(y + i)));
    if (i == n) return;
    Tail<float, V::N> yt(y + i, n - i);
    const Tail<uint16_t, V::N> xt(x + i, n - i);
    V::store(yt.v, V::fma(V::load_f16(xt.v), av, V::load(yt.v)));
    yt.copy_to(y + i, n - i);
}

}  // namespace simd
}  // namespace
