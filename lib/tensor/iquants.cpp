// tensor/iquants.cpp — reference codecs of the non-linear 4-bit formats IQ4_NL (blocks of
// 32) and IQ4_XS (super-blocks of 256 with 6-bit sub-block scales), as GGML defines them;
// the quantizers are GGML's without an importance matrix (each element weighted by x^2),
// with its search over 15 candidate scales per 32-element block.
// Must not touch: other formats, kernels.
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/codecs.h"
#include "tensor/fp16.h"

namespace strata {
namespace {

// One sub-block of 32 weights: dl * the table value of each code (low nibbles first).
void dequantize_iq4_codes(const uint8_t* qs, float dl, float* y) {
    for (int j = 0; j < 16; ++j) {
        y[j] = dl * kIQ4NLValues[qs[j] & 0xF];
        y[j + 16] = dl * kIQ4NLValues[qs[j] >> 4];
    }
}

constexpr int kTries = 7;              // candidate scales (itry + values[0]) / max, itry in [-7, 7]
constexpr float kGroupMaxEps = 1e-15f;  // blocks below this magnitude are all zero

// The code whose table value is nearest to v (the lower one on a tie), as GGML's
// best_index_int8.
uint8_t nearest_code(float v) {
    const int8_t* val = kIQ4NLValues;
    if (v <= val[0]) return 0;
    if (v >= val[15]) return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (v < val[mid]) hi = mid;
        else lo = mid;
    }
    return static_cast<uint8_t>(v - val[hi - 1] < val[hi] - v ? hi - 1 : hi);
}

// The weighted least-squares scale of 32 values xb for the codes nearest to id * xb:
// sum(w q x) and sum(w q^2); codes go to L when L is not null.
void fit(const float* xb, const float* w, float id, float& sumqx, float& sumq2, uint8_t* L) {
    sumqx = sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
        const uint8_t l = nearest_code(id * xb[j]);
        if (L) L[j] = l;
        const float q = kIQ4NLValues[l];
        sumqx += w[j] * q * xb[j];
        sumq2 += w[j] * q * q;
    }
}

// The best scale of one 32-element block (0 for an all-zero block).
float block_scale(const float* xb) {
    float w[32], amax = 0, max = 0;
    for (int j = 0; j < 32; ++j) {
        w[j] = xb[j] * xb[j];
        const float ax = std::fabs(xb[j]);
        if (ax > amax) {
            amax = ax;
            max = xb[j];
        }
    }
    if (amax < kGroupMaxEps) return 0;
    float sumqx, sumq2;
    fit(xb, w, 1 / (-max / kIQ4NLValues[0]), sumqx, sumq2, nullptr);
    float d = sumqx / sumq2, best = d * sumqx;
    for (int itry = -kTries; itry <= kTries; ++itry) {
        fit(xb, w, (itry + kIQ4NLValues[0]) / max, sumqx, sumq2, nullptr);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

// Codes of 32 values for the inverse scale id, packed as the formats store them.
void pack_codes(const float* xb, float id, uint8_t* qs) {
    uint8_t L[32];
    for (int j = 0; j < 32; ++j) L[j] = nearest_code(id * xb[j]);
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(L[j] | L[j + 16] << 4);
}

}  // namespace

void quantize_row_iq4_nl(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockIQ4_NL*>(vy);
    for (int64_t b = 0; b < n / QK4_NL; ++b, x += QK4_NL) {
        const float d = block_scale(x);
        y[b].d = fp32_to_fp16(d);
        pack_codes(x, d ? 1 / d : 0, y[b].qs);
    }
}

// The eight sub-block scales are rounded to 6-bit multiples of the super-block's d =
// -(the scale of largest magnitude) / 32, and the codes chosen again for the rounded scale.
void quantize_row_iq4_xs(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockIQ4_XS*>(vy);
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        float scales[QK_K / 32], max_scale = 0, amax_scale = 0;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            scales[ib] = block_scale(x + 32 * ib);
            if (std::fabs(scales[ib]) > amax_scale) {
                amax_scale = std::fabs(scales[ib]);
                max_scale = scales[ib];
            }
        }
        const float d = -max_scale / 32;
        const float id = d ? 1 / d : 0.f;
        y[b].d = fp32_to_fp16(d);
        y[b].scales_h = 0;
        std::memset(y[b].scales_l, 0, sizeof y[b].scales_l);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            int l = nearest_int(id * scales[ib]);
            l = l < -32 ? -32 : l > 31 ? 31 : l;
            const float dl = d * l;
            pack_codes(x + 32 * ib, dl ? 1 / dl : 0.f, y[b].qs + 16 * ib);
            l += 32;
            y[b].scales_l[ib / 2] |= static_cast<uint8_t>((l & 0xF) << 4 * (ib % 2));
            y[b].scales_h |= static_cast<uint16_t>((l >> 4) << 2 * ib);
        }
    }
}

void dequantize_iq4_nl(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockIQ4_NL*>(vx);
    for (int64_t b = 0; b < n / QK4_NL; ++b, y += QK4_NL) dequantize_iq4_codes(x[b].qs, fp16_to_fp32(x[b].d), y);
}

void dequantize_iq4_xs(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockIQ4_XS*>(vx);
    for (int64_t b = 0; b < n / QK_K; ++b) {
        const float d = fp16_to_fp32(x[b].d);
        for (int ib = 0; ib < QK_K / 32; ++ib, y += 32)
            dequantize_iq4_codes(x[b].qs + 16 * ib, d * (iq4xs_scale(x[b], ib) - 32), y);
    }
}

}  // namespace strata
