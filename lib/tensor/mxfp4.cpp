// tensor/mxfp4.cpp — the MXFP4 codec (OCP microscaling FP4, gpt-oss's native type) as GGML
// defines it: dequantization, the reference quantizer (quantize_row_mxfp4_ref) and the dot
// product with Q8_0 activations in the order of GGML's generic ggml_vec_dot_mxfp4_q8_0.
// Must not touch: other formats, kernels.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/codecs.h"
#include "tensor/fp16.h"

namespace strata {

// 2^(e - 128): the E8M0 value 2^(e - 127) halved, because the E2M1 table holds doubled
// values. e = 0 and 1 give the subnormals 2^-128 and 2^-127. No NaN (e = 255 is 2^127), as
// in GGML.
namespace {

// The code whose value code * d is nearest to x, the first of equal ones (0 before -0).
uint8_t nearest_fp4(float x, float d) {
    uint8_t best = 0;
    float best_err = std::fabs(kMXFP4Values[0] * d - x);
    for (uint8_t i = 1; i < 16; ++i) {
        const float err = std::fabs(kMXFP4Values[i] * d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

// The shared exponent of a block whose largest magnitude is amax: the largest E2M1 value
// (6 = 1.5 * 2^2) times 2^(floor(log2 amax) - 2) covers amax. The float-to-byte conversion
// goes through int as x86 builds of GGML do (it matters only for amax < 2^-125).
uint8_t mxfp4_exponent(float amax) {
    if (!(amax > 0.0f)) return 0;
    return static_cast<uint8_t>(static_cast<int>(std::floor(std::log2(amax)) - 2 + 127));
}

}  // namespace

void dequantize_mxfp4(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockMXFP4*>(vx);
    for (int64_t b = 0; b < n / QK_MXFP4; ++b, y += QK_MXFP4) {
        const float d = mxfp4_scale(x[b].e);
        for (int j = 0; j < QK_MXFP4 / 2; ++j) {
            y[j] = kMXFP4Values[x[b].qs[j] & 0xF] * d;
            y[j + QK_MXFP4 / 2] = kMXFP4Values[x[b].qs[j] >> 4] * d;
        }
    }
}

void quantize_row_mxfp4(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockMXFP4*>(vy);
    for (int64_t b = 0; b < n / QK_MXFP4; ++b, x += QK_MXFP4) {
        float amax = 0;
        for (int j = 0; j < QK_MXFP4; ++j) amax = std::fmax(amax, std::fabs(x[j]));
        y[b].e = mxfp4_exponent(amax);
        const float d = mxfp4_scale(y[b].e);
        for (int j = 0; j < QK_MXFP4 / 2; ++j)
            y[b].qs[j] = static_cast<uint8_t>(nearest_fp4(x[j], d) | nearest_fp4(x[j + QK_MXFP4 / 2], d) << 4);
    }
}

float dot_mxfp4_q8_0(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockMXFP4*>(vw);
    auto* a = static_cast<const BlockQ8_0*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK_MXFP4; ++b) {
        const float d = fp16_to_fp32(a[b].d) * mxfp4_scale(w[b].e);
        int lo = 0, hi = 0;
        for (int j = 0; j < QK_MXFP4 / 2; ++j) {
            lo += a[b].qs[j] * kMXFP4Values[w[b].qs[j] & 0xF];
            hi += a[b].qs[j + QK_MXFP4 / 2] * kMXFP4Values[w[b].qs[j] >> 4];
        }
        sum += d * (lo + hi);
    }
    return sum;
}

}  // namespace strata
