// tensor/kquants.cpp — reference codecs of the 256-element "K" super-block formats
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K: the same bytes as GGML's *_ref quantizers (no importance
// matrix), with the scale searches of several groups run in the lanes of one vector.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/codecs.h"
#include "tensor/fp16.h"

namespace strata {

void dequantize_q2_k(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ2_K*>(vx);
    for (int64_t b = 0; b < n / QK_K; ++b) {
        const float d = fp16_to_fp32(x[b].d), dmin = fp16_to_fp32(x[b].dmin);
        const uint8_t* q = x[b].qs;
        int is = 0;
        for (int half = 0; half < QK_K; half += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part) {
                    const uint8_t sc = x[b].scales[is++];
                    const float dl = d * (sc & 0xF), ml = dmin * (sc >> 4);
                    for (int l = 0; l < 16; ++l) *y++ = dl * ((q[part * 16 + l] >> shift) & 3) - ml;
                }
            }
            q += 32;
        }
    }
}

void dequantize_q3_k(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ3_K*>(vx);
    constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
    for (int64_t b = 0; b < n / QK_K; ++b) {
        const float d_all = fp16_to_fp32(x[b].d);
        const uint8_t* q = x[b].qs;
        const uint8_t* hm = x[b].hmask;
        uint8_t m = 1;
        uint32_t aux[4];
        std::memcpy(aux, x[b].scales, 12);
        uint32_t tmp = aux[2];
        aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
        aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
        aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
        aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
        int8_t scales[16];
        std::memcpy(scales, aux, 16);
        int is = 0;
        for (int half = 0; half < QK_K; half += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part) {
                    const float dl = d_all * (scales[is++] - 32);
                    for (int l = 0; l < 16; ++l) {
                        const int ql = (q[part * 16 + l] >> shift) & 3;
                        *y++ = dl * (ql - ((hm[part * 16 + l] & m) ? 0 : 4));
                    }
                }
                m <<= 1;
            }
            q += 32;
        }
    }
}

void dequantize_q4_k(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ4_K*>(vx);
    for (int64_t b = 0; b < n / QK_K; ++b) {
        const float d = fp16_to_fp32(x[b].d), dmin = fp16_to_fp32(x[b].dmin);
        const uint8_t* q = x[b].qs;
        for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, q += 32) {
            uint8_t sc, m;
            get_scale_min_k4(is, x[b].scales, sc, m);
            const float d1 = d * sc, m1 = dmin * m;
            get_scale_min_k4(is + 1, x[b].scales, sc, m);
            const float d2 = d * sc, m2 = dmin * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
        }
    }
}

void dequantize_q5_k(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ5_K*>(vx);
    for (int64_t b = 0; b < n / QK_K; ++b) {
        const float d = fp16_to_fp32(x[b].d), dmin = fp16_to_fp32(x[b].dmin);
        const uint8_t* ql = x[b].qs;
        const uint8_t* qh = x[b].qh;
        uint8_t u1 = 1, u2 = 2;
        for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
            uint8_t sc, m;
            get_scale_min_k4(is, x[b].scales, sc, m);
            const float d1 = d * sc, m1 = dmin * m;
            get_scale_min_k4(is + 1, x[b].scales, sc, m);
            const float d2 = d * sc, m2 = dmin * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
        }
    }
}

void dequantize_q6_k(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ6_K*>(vx);
    for (int64_t b = 0; b < n / QK_K; ++b) {
        const float d = fp16_to_fp32(x[b].d);
        const uint8_t* ql = x[b].ql;
        const uint8_t* qh = x[b].qh;
        const int8_t* sc = x[b].scales;
        for (int half = 0; half < QK_K; half += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = static_cast<int8_t>((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = static_cast<int8_t>((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = static_cast<int8_t>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = static_cast<int8_t>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * sc[is + 0] * q1;
                y[l + 32] = d * sc[is + 2] * q2;
                y[l + 64] = d * sc[is + 4] * q3;
                y[l + 96] = d * sc[is + 6] * q4;
            }
        }
    }
}

// Quantizers: GGML's reference search for block scales (and mins), then a requantization
// of every element with the scales as they are finally stored (6/8-bit codes times an F16
// super-block scale). Float operations are done in GGML's order so the bytes match.
namespace {

// GGML's threshold under which a group counts as all zero.
constexpr float kGroupMaxEps = 1e-15f;

// The searches for block scales work on four groups at once (an SSE2 vector): lane g
// belongs to group g. Every lane does exactly the float operations of GGML's one-group
// functions, in the same order (vector arithmetic is IEEE per lane, and there is no FMA),
// so the result is bit-identical; the dependency chains of four groups just run side by side.
constexpr int kLanes = 4;
using f32x4 = float __attribute__((vector_size(4 * kLanes)));
using i32x4 = int32_t __attribute__((vector_size(4 * kLanes)));

f32x4 splat(float v) { return f32x4{} + v; }
i32x4 splat(int32_t v) { return i32x4{} + v; }
f32x4 to_float(i32x4 v) { return __builtin_convertvector(v, f32x4); }

// fabs per lane (clears the sign bit).
f32x4 abs(f32x4 v) {
    i32x4 bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= 0x7fffffff;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

// nearest_int per lane.
i32x4 nearest_ints(f32x4 v) {
    const f32x4 t = v + 12582912.f;
    i32x4 bits;
    std::memcpy(&bits, &t, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

// xt[i][g] = x[g*n + i]: element i of each of the kLanes groups of n values.
void load_lanes(const float* x, int n, f32x4* xt) {
    static_assert(kLanes == 4);
    for (int i = 0; i < n; ++i) xt[i] = f32x4{x[i], x[n + i], x[2 * n + i], x[3 * n + i]};
}

// The symmetric code in [-nmax, nmax) nearest to v (v = x / scale).
int symmetric_code(float v, int nmax) {
    const int l = nearest_int(v);
    return l < -nmax ? -nmax : l > nmax - 1 ? nmax - 1 : l;  // ternaries on values: vectorizable
}

// Sums of the least-squares fit x ~ scale * l with weights x^2: scale = lx / l2.
struct WeightedSums {
    float lx = 0, l2 = 0;
};

// WeightedSums of the codes of x[0..n) at inverse scale iscale, n <= 32. The codes and
// the products are computed first (a loop the compiler vectorizes), then summed in order,
// so the result is the same as adding element by element.
WeightedSums weighted_sums_at(const float* x, int n, int nmax, float iscale, int* l) {
    float plx[32], pl2[32];
    for (int i = 0; i < n; ++i) {
        l[i] = symmetric_code(iscale * x[i], nmax);
        const float w = x[i] * x[i];
        plx[i] = w * x[i] * l[i];
        pl2[i] = w * l[i] * l[i];
    }
    WeightedSums s;
    for (int i = 0; i < n; ++i) {
        s.lx += plx[i];
        s.l2 += pl2[i];
    }
    return s;
}

// The symmetric codes in [-nmax, nmax) nearest to v, per lane.
i32x4 symmetric_codes(f32x4 v, int nmax) {
    const i32x4 l = nearest_ints(v);
    const i32x4 lo = l < -nmax ? splat(-nmax) : l;
    return lo > nmax - 1 ? splat(nmax - 1) : lo;
}

// Symmetric codes L[g*n + i] in [0, 2*nmax) for kLanes groups g of n <= 32 values
// x[g*n + i], with value = scales[g] * (L - nmax). For each group: starts from the scale
// that maps the largest-magnitude element to -nmax, then tries 18 nearby scales and keeps
// the one with the smallest x^2-weighted squared error.
void make_qx_quants(int n, int nmax, const float* x, int8_t* L, float* scales) {
    f32x4 xt[32];
    load_lanes(x, n, xt);
    f32x4 amax{}, max{};
    for (int i = 0; i < n; ++i) {
        const i32x4 larger = abs(xt[i]) > amax;
        amax = larger ? abs(xt[i]) : amax;
        max = larger ? xt[i] : max;
    }
    // The codes and x^2-weighted sums of the fit x ~ scale * l at inverse scale iscale.
    i32x4 l[32];
    auto sums_at = [&](f32x4 iscale, f32x4& lx, f32x4& l2) {
        lx = l2 = f32x4{};
        for (int i = 0; i < n; ++i) {
            l[i] = symmetric_codes(iscale * xt[i], nmax);
            const f32x4 w = xt[i] * xt[i], lf = to_float(l[i]);
            lx += w * xt[i] * lf;
            l2 += w * lf * lf;
        }
    };
    f32x4 lx, l2;
    sums_at(static_cast<float>(-nmax) / max, lx, l2);
    i32x4 best_l[32];
    for (int i = 0; i < n; ++i) best_l[i] = l[i];
    f32x4 scale = l2 != 0 ? lx / l2 : splat(0.f);
    f32x4 best = scale * lx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        sums_at(-(nmax + 0.1f * is) / max, lx, l2);
        const f32x4 this_scale = lx / l2;
        const i32x4 take = (l2 > 0) & (lx * lx > best * l2);
        for (int i = 0; i < n; ++i) best_l[i] = take ? l[i] : best_l[i];
        scale = take ? this_scale : scale;
        best = take ? this_scale * lx : best;
    }
    const i32x4 zero = amax < kGroupMaxEps;
    for (int g = 0; g < kLanes; ++g) {
        scales[g] = zero[g] ? 0.f : scale[g];
        for (int i = 0; i < n; ++i) L[g * n + i] = static_cast<int8_t>(zero[g] ? 0 : best_l[i][g] + nmax);
    }
}

// Like make_qx_quants for one group of n <= 32 values, for Q3_K: after the first rounding, up to 5 passes move single codes
// when that lowers the x^2-weighted error. Returns the least-squares scale.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
    const float max = signed_absmax(x, n);
    if (std::fabs(max) < kGroupMaxEps) {
        std::memset(L, 0, static_cast<size_t>(n));
        return 0.f;
    }
    int l[32];
    WeightedSums s = weighted_sums_at(x, n, nmax, -nmax / max, l);
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(l[i]);
    for (int pass = 0; pass < 5; ++pass) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            float slx = s.lx - w * x[i] * L[i];
            if (slx <= 0) continue;
            float sl2 = s.l2 - w * L[i] * L[i];
            const int new_l = symmetric_code(x[i] * sl2 / slx, nmax);
            if (new_l == L[i]) continue;
            slx += w * x[i] * new_l;
            sl2 += w * new_l * new_l;
            if (sl2 > 0 && slx * slx * s.l2 > s.lx * s.lx * sl2) {
                L[i] = static_cast<int8_t>(new_l);
                s.lx = slx;
                s.l2 = sl2;
                ++changed;
            }
        }
        if (!changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
    return s.l2 > 0.0f ? s.lx / s.l2 : 0.0f;
}

// The scale candidates make_qkx2_quants tries, and how it measures the error.
struct QkxSearch {
    float rmin, rdelta;
    int nstep;
    bool use_mad;
};

// The asymmetric code of v (v = (x - min) / scale) in [0, nmax], per lane.
i32x4 affine_code(f32x4 v, int nmax) {
    const i32x4 l = nearest_ints(v);
    const i32x4 lo = l < 0 ? splat(0) : l;
    return lo > nmax ? splat(nmax) : lo;
}

// sum_i w_i * e(scale * L_i + min - x_i), e = |.| (use_mad) or squared, in order per lane.
f32x4 fit_error(int n, const f32x4* x, const f32x4* w, const i32x4* L, f32x4 scale, f32x4 min, bool use_mad) {
    f32x4 sum{};
    for (int i = 0; i < n; ++i) {
        const f32x4 diff = scale * to_float(L[i]) + min - x[i];
        sum += w[i] * (use_mad ? abs(diff) : diff * diff);
    }
    return sum;
}

// Asymmetric codes L[g*n + i] in [0, nmax] for kLanes groups g of n <= 32 values
// x[g*n + i], with value = scales[g] * L - mins[g]. For each group: tries nstep + 1 scale
// candidates (rmin + rdelta*k + nmax steps over the range), fits scale and min by
// weighted least squares for each, and keeps the best by weighted absolute (use_mad) or
// squared error; mins[g] >= 0.
void make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* scales,
                      float* mins, QkxSearch s) {
    f32x4 xt[32], wt[32];
    load_lanes(x, n, xt);
    load_lanes(weights, n, wt);
    f32x4 min = xt[0], max = xt[0];
    f32x4 sum_w = wt[0];
    f32x4 sum_x = sum_w * xt[0];
    for (int i = 1; i < n; ++i) {
        min = xt[i] < min ? xt[i] : min;
        max = xt[i] > max ? xt[i] : max;
        sum_w += wt[i];
        sum_x += wt[i] * xt[i];
    }
    min = min > 0 ? splat(0.f) : min;
    const f32x4 flat_min = min;  // groups with max == min keep it, with codes 0 and scale 0
    const i32x4 flat = max == min;
    f32x4 iscale = static_cast<float>(nmax) / (max - min);
    f32x4 scale = 1 / iscale;
    i32x4 best[32], aux[32];
    for (int i = 0; i < n; ++i) best[i] = affine_code(iscale * (xt[i] - min), nmax);
    f32x4 best_error = fit_error(n, xt, wt, best, scale, min, s.use_mad);
    for (int is = 0; is <= s.nstep; ++is) {
        iscale = (s.rmin + s.rdelta * is + nmax) / (max - min);
        f32x4 sum_l{}, sum_l2{}, sum_xl{};
        for (int i = 0; i < n; ++i) {
            aux[i] = affine_code(iscale * (xt[i] - min), nmax);
            const f32x4 l = to_float(aux[i]);
            sum_l += wt[i] * l;
            sum_l2 += wt[i] * l * l;
            sum_xl += wt[i] * l * xt[i];
        }
        const f32x4 D = sum_w * sum_l2 - sum_l * sum_l;
        f32x4 this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
        f32x4 this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
        const i32x4 clipped = this_min > 0;
        this_scale = clipped ? sum_xl / sum_l2 : this_scale;
        this_min = clipped ? splat(0.f) : this_min;
        const f32x4 cur_error = fit_error(n, xt, wt, aux, this_scale, this_min, s.use_mad);
        const i32x4 take = (D > 0) & (cur_error < best_error);
        for (int i = 0; i < n; ++i) best[i] = take ? aux[i] : best[i];
        best_error = take ? cur_error : best_error;
        scale = take ? this_scale : scale;
        min = take ? this_min : min;
    }
    for (int g = 0; g < kLanes; ++g) {
        scales[g] = flat[g] ? 0.f : scale[g];
        mins[g] = -(flat[g] ? flat_min[g] : min[g]);
        for (int i = 0; i < n; ++i) L[g * n + i] = static_cast<uint8_t>(flat[g] ? 0 : best[i][g]);
    }
}

// Packs 2-bit codes (Q2_K, Q3_K low bits): byte l of each 32-byte group holds elements
// l, l+32, l+64, l+96 of its 128-element half.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
    for (int half = 0; half < QK_K; half += 128)
        for (int l = 0; l < 32; ++l)
            qs[half / 4 + l] = static_cast<uint8_t>(L[half + l] | (L[half + l + 32] << 2) | (L[half + l + 64] << 4) |
                                                    (L[half + l + 96] << 6));
}

// The eight 32-element sub-block scales/mins of Q4_K and Q5_K: asymmetric codes for the
// super-block x, with GGML's weights av_x + |x| (av_x = RMS of the sub-block).
struct SubblockFit {
    float scales[QK_K / 32], mins[QK_K / 32];
    float max_scale = 0, max_min = 0;
};
SubblockFit fit_subblocks_k(const float* x, int nmax, QkxSearch search, uint8_t* L) {
    SubblockFit f;
    float weights[QK_K];
    for (int j = 0; j < QK_K / 32; ++j) {
        const float* xs = x + 32 * j;
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[32 * j + l] = av_x + std::fabs(xs[l]);
    }
    for (int j = 0; j < QK_K / 32; j += kLanes)
        make_qkx2_quants(32, nmax, x + 32 * j, weights + 32 * j, L + 32 * j, f.scales + j, f.mins + j, search);
    for (int j = 0; j < QK_K / 32; ++j) {
        if (f.scales[j] > f.max_scale) f.max_scale = f.scales[j];
        if (f.mins[j] > f.max_min) f.max_min = f.mins[j];
    }
    return f;
}

// Stores the fit as 6-bit codes (get_scale_min_k4's packing) with F16 d and dmin, then
// requantizes x against the stored values into L (codes 0..nmax).
void store_scales_k(const float* x, const SubblockFit& f, int nmax, uint8_t* scales, uint16_t& d16,
                    uint16_t& dmin16, uint8_t* L) {
    const float inv_scale = f.max_scale > 0 ? 63.f / f.max_scale : 0.f;
    const float inv_min = f.max_min > 0 ? 63.f / f.max_min : 0.f;
    for (int j = 0; j < QK_K / 32; ++j) {
        const auto ls = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * f.scales[j])));
        const auto lm = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * f.mins[j])));
        if (j < 4) {
            scales[j] = ls;
            scales[j + 4] = lm;
        } else {
            scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
            scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
            scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
        }
    }
    d16 = fp32_to_fp16(f.max_scale / 63.f);
    dmin16 = fp32_to_fp16(f.max_min / 63.f);
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, scales, sc, m);
        const float d = fp16_to_fp32(d16) * sc;
        if (!d) continue;
        const float dm = fp16_to_fp32(dmin16) * m;
        for (int i = 0; i < 32; ++i)
            L[32 * j + i] = static_cast<uint8_t>(std::max(0, std::min(nmax, nearest_int((x[32 * j + i] + dm) / d))));
    }
}

// The 6-bit signed scale code (minus 32) of 16-element group j in a Q3_K scales array.
int q3k_scale(const uint8_t* scales, int j) {
    const int lo = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
    return (lo | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

}  // namespace

void quantize_row_q2_k(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ2_K*>(vy);
    constexpr float q4scale = 15.f;
    constexpr QkxSearch search{-0.5f, 0.1f, 15, true};
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        uint8_t L[QK_K];
        float weights[QK_K], mins[QK_K / 16], scales[QK_K / 16];
        for (int l = 0; l < QK_K; ++l) weights[l] = std::fabs(x[l]);
        for (int h = 0; h < QK_K; h += 16 * kLanes)
            make_qkx2_quants(16, 3, x + h, weights + h, L + h, scales + h / 16, mins + h / 16, search);
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        std::memset(y[b].scales, 0, sizeof y[b].scales);
        y[b].d = fp32_to_fp16(max_scale > 0 ? max_scale / q4scale : 0.f);
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) y[b].scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
        }
        y[b].dmin = fp32_to_fp16(max_min > 0 ? max_min / q4scale : 0.f);
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; ++j)
                y[b].scales[j] |= static_cast<uint8_t>(nearest_int(iscale * mins[j]) << 4);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = fp16_to_fp32(y[b].d) * (y[b].scales[j] & 0xF);
            if (!d) continue;
            const float dm = fp16_to_fp32(y[b].dmin) * (y[b].scales[j] >> 4);
            for (int i = 0; i < 16; ++i)
                L[16 * j + i] = static_cast<uint8_t>(std::max(0, std::min(3, nearest_int((x[16 * j + i] + dm) / d))));
        }
        pack_2bit(L, y[b].qs);
    }
}

void quantize_row_q3_k(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ3_K*>(vy);
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        for (int j = 0; j < QK_K / 16; ++j) scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
        const float max_scale = signed_absmax(scales, QK_K / 16);
        std::memset(y[b].scales, 0, sizeof y[b].scales);
        if (max_scale) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) {
                const int l = std::max(-32, std::min(31, static_cast<int>(static_cast<int8_t>(nearest_int(iscale * scales[j]))))) + 32;
                if (j < 8)
                    y[b].scales[j] = static_cast<uint8_t>(l & 0xF);
                else
                    y[b].scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
                y[b].scales[j % 4 + 8] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
            }
            y[b].d = fp32_to_fp16(1 / iscale);
        } else {
            y[b].d = fp32_to_fp16(0.f);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = fp16_to_fp32(y[b].d) * q3k_scale(y[b].scales, j);
            if (!d) continue;
            for (int i = 0; i < 16; ++i)
                L[16 * j + i] = static_cast<int8_t>(std::max(-4, std::min(3, nearest_int(x[16 * j + i] / d))) + 4);
        }
        // The high bit of element j goes to bit j / 32 of hmask[j % 32].
        std::memset(y[b].hmask, 0, sizeof y[b].hmask);
        uint8_t low[QK_K];
        for (int j = 0; j < QK_K; ++j) {
            if (L[j] > 3) y[b].hmask[j % 32] |= static_cast<uint8_t>(1 << (j / 32));
            low[j] = static_cast<uint8_t>(L[j] & 3);
        }
        pack_2bit(low, y[b].qs);
    }
}

void quantize_row_q4_k(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ4_K*>(vy);
    constexpr QkxSearch search{-1.f, 0.1f, 20, false};
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        uint8_t L[QK_K];
        const SubblockFit fit = fit_subblocks_k(x, 15, search, L);
        store_scales_k(x, fit, 15, y[b].scales, y[b].d, y[b].dmin, L);
        for (int j = 0; j < QK_K; j += 64)
            for (int l = 0; l < 32; ++l) y[b].qs[j / 2 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
}

void quantize_row_q5_k(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ5_K*>(vy);
    constexpr QkxSearch search{-0.5f, 0.1f, 15, false};
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        uint8_t L[QK_K];
        const SubblockFit fit = fit_subblocks_k(x, 31, search, L);
        store_scales_k(x, fit, 31, y[b].scales, y[b].d, y[b].dmin, L);
        // Low nibbles as Q4_K; the fifth bit of element j + 64k (+32) goes to bit 2k (2k+1) of qh[j].
        std::memset(y[b].qh, 0, sizeof y[b].qh);
        for (int j = 0, k = 0; j < QK_K; j += 64, ++k) {
            for (int l = 0; l < 32; ++l) {
                const uint8_t l1 = L[j + l], l2 = L[j + l + 32];
                y[b].qh[l] |= static_cast<uint8_t>(((l1 >> 4) << (2 * k)) | ((l2 >> 4) << (2 * k + 1)));
                y[b].qs[j / 2 + l] = static_cast<uint8_t>((l1 & 0xF) | ((l2 & 0xF) << 4));
            }
        }
    }
}

void quantize_row_q6_k(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ6_K*>(vy);
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        for (int ib = 0; ib < QK_K / 16; ib += kLanes) make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, scales + ib);
        const float max_scale = signed_absmax(scales, QK_K / 16);
        if (std::fabs(max_scale) < kGroupMaxEps) {
            std::memset(&y[b], 0, sizeof y[b]);
            continue;
        }
        const float iscale = -128.f / max_scale;
        y[b].d = fp32_to_fp16(1 / iscale);
        for (int ib = 0; ib < QK_K / 16; ++ib)
            y[b].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = fp16_to_fp32(y[b].d) * y[b].scales[j];
            if (!d) continue;
            for (int i = 0; i < 16; ++i)
                L[16 * j + i] = static_cast<int8_t>(std::max(-32, std::min(31, nearest_int(x[16 * j + i] / d))) + 32);
        }
        // Element h*128 + l + 32k: low nibble in ql (k = 0,1 low half of byte l / l+32;
        // k = 2,3 high half), top two bits at bits 2k of qh[h*32 + l].
        uint8_t* ql = y[b].ql;
        uint8_t* qh = y[b].qh;
        for (int h = 0; h < QK_K; h += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; ++l) {
                const int q1 = L[h + l], q2 = L[h + l + 32], q3 = L[h + l + 64], q4 = L[h + l + 96];
                ql[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
                ql[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
                qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
            }
        }
    }
}

}  // namespace strata
