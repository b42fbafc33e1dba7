// kernels/simd/float_lanes16.h — 16 float lanes whatever the vector width, so that sums come out
// in the order of llama.cpp's AVX-512 kernels on both variants: lane-wise FMA chains, then
// the upper 8 lanes onto the lower 8 and the halving of _mm512_reduce_add_ps.
// Must not touch: anything else.
#pragma once

namespace {
namespace simd {

// 16 float lanes as 16 / V::N vectors (lane i of part p is lane 16-chunk index p * N + i).
template <class V>
struct Lanes16 {
    static constexpr int P = 16 / V::N;
    typename V::F part[P];

    static Lanes16 zero() {
        Lanes16 z;
        for (int p = 0; p < P; ++p) z.part[p] = V::zero();
        return z;
    }
    template <class Load, class Elem>
    static Lanes16 load(Load load_one, const Elem* x) {
        Lanes16 v;
        for (int p = 0; p < P; ++p) v.part[p] = load_one(x + p * V::N);
        return v;
    }
    // this += w * a, lane by lane.
    void fma(const Lanes16& w, const Lanes16& a) {
        for (int p = 0; p < P; ++p) part[p] = V::fma(w.part[p], a.part[p], part[p]);
    }
    void add(const Lanes16& o) {
        for (int p = 0; p < P; ++p) part[p] = V::add(part[p], o.part[p]);
    }
    // Upper 8 lanes onto the lower 8, then V::hsum's halving (as _mm512_reduce_add_ps).
    float sum() const {
        if constexpr (P == 1) return V::hsum(part[0]);
        else return V::hsum(V::add(part[1], part[0]));
    }
};

}  // namespace simd
}  // namespace
