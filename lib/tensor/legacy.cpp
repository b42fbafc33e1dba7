// tensor/legacy.cpp — reference codecs of the 32-element block formats Q4_0, Q4_1,
// Q5_0, Q5_1 (GGML's *_ref quantizers, without an importance matrix).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/codecs.h"
#include "tensor/fp16.h"

namespace strata {

void dequantize_q4_0(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ4_0*>(vx);
    for (int64_t b = 0; b < n / QK4_0; ++b, y += QK4_0) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < QK4_0 / 2; ++j) {
            y[j] = ((x[b].qs[j] & 0x0F) - 8) * d;
            y[j + QK4_0 / 2] = ((x[b].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantize_q4_1(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ4_1*>(vx);
    for (int64_t b = 0; b < n / QK4_1; ++b, y += QK4_1) {
        const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
        for (int j = 0; j < QK4_1 / 2; ++j) {
            y[j] = (x[b].qs[j] & 0x0F) * d + m;
            y[j + QK4_1 / 2] = (x[b].qs[j] >> 4) * d + m;
        }
    }
}

void dequantize_q5_0(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ5_0*>(vx);
    for (int64_t b = 0; b < n / QK5_0; ++b, y += QK5_0) {
        const float d = fp16_to_fp32(x[b].d);
        uint32_t qh;
        std::memcpy(&qh, x[b].qh, sizeof qh);
        for (int j = 0; j < QK5_0 / 2; ++j) {
            const uint8_t xh0 = ((qh >> j) << 4) & 0x10;
            const uint8_t xh1 = (qh >> (j + 12)) & 0x10;
            y[j] = (((x[b].qs[j] & 0x0F) | xh0) - 16) * d;
            y[j + QK5_0 / 2] = (((x[b].qs[j] >> 4) | xh1) - 16) * d;
        }
    }
}

void dequantize_q5_1(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ5_1*>(vx);
    for (int64_t b = 0; b < n / QK5_1; ++b, y += QK5_1) {
        const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
        uint32_t qh;
        std::memcpy(&qh, x[b].qh, sizeof qh);
        for (int j = 0; j < QK5_1 / 2; ++j) {
            const uint8_t xh0 = ((qh >> j) << 4) & 0x10;
            const uint8_t xh1 = (qh >> (j + 12)) & 0x10;
            y[j] = ((x[b].qs[j] & 0x0F) | xh0) * d + m;
            y[j + QK5_1 / 2] = ((x[b].qs[j] >> 4) | xh1) * d + m;
        }
    }
}

// Quantizers. Each 32-element block is encoded independently; the rounding is GGML's:
// add the code offset plus 0.5 and truncate toward zero, clamping the top code.
namespace {

constexpr int kBlock = 32;  // QK4_0 = QK4_1 = QK5_0 = QK5_1

// Codes 0 .. 2^Bits-1 for a block with a signed scale d = max / -2^(Bits-1), where max
// is the element of largest magnitude (it gets code 0). Returns d.
template <int Bits>
float symmetric_codes(const float* x, uint8_t* q) {
    constexpr int half = 1 << (Bits - 1);
    const float d = signed_absmax(x, kBlock) / -half;
    const float id = d ? 1.0f / d : 0.0f;
    for (int j = 0; j < kBlock; ++j)
        q[j] = static_cast<uint8_t>(std::min<int8_t>(2 * half - 1, static_cast<int8_t>(x[j] * id + (half + 0.5f))));
    return d;
}

// Codes 0 .. 2^Bits-1 for a block stored as d * code + min. Returns d; min goes to *min_out.
template <int Bits>
float affine_codes(const float* x, uint8_t* q, float* min_out) {
    constexpr int top = (1 << Bits) - 1;
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < kBlock; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / top;
    const float id = d ? 1.0f / d : 0.0f;
    for (int j = 0; j < kBlock; ++j)
        q[j] = static_cast<uint8_t>(std::min<int8_t>(top, static_cast<int8_t>((x[j] - min) * id + 0.5f)));
    *min_out = min;
    return d;
}

// Element j's code in the low nibble of qs[j], element j + 16's in the high nibble; for
// 5-bit codes the fifth bit of element j goes to bit j of the returned qh word.
uint32_t pack_codes(const uint8_t* q, uint8_t* qs) {
    uint32_t qh = 0;
    for (int j = 0; j < kBlock / 2; ++j) {
        const uint8_t lo = q[j], hi = q[j + kBlock / 2];
        qs[j] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
        qh |= static_cast<uint32_t>(lo >> 4) << j;
        qh |= static_cast<uint32_t>(hi >> 4) << (j + kBlock / 2);
    }
    return qh;
}

}  // namespace

void quantize_row_q4_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ4_0*>(vy);
    uint8_t q[kBlock];
    for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock) {
        y[b].d = fp32_to_fp16(symmetric_codes<4>(x, q));
        pack_codes(q, y[b].qs);
    }
}

void quantize_row_q4_1(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ4_1*>(vy);
    uint8_t q[kBlock];
    for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock) {
        float min;
        y[b].d = fp32_to_fp16(affine_codes<4>(x, q, &min));
        y[b].m = fp32_to_fp16(min);
        pack_codes(q, y[b].qs);
    }
}

void quantize_row_q5_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ5_0*>(vy);
    uint8_t q[kBlock];
    for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock) {
        y[b].d = fp32_to_fp16(symmetric_codes<5>(x, q));
        const uint32_t qh = pack_codes(q, y[b].qs);
        std::memcpy(y[b].qh, &qh, sizeof qh);
    }
}

void quantize_row_q5_1(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ5_1*>(vy);
    uint8_t q[kBlock];
    for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock) {
        float min;
        y[b].d = fp32_to_fp16(affine_codes<5>(x, q, &min));
        y[b].m = fp32_to_fp16(min);
        const uint32_t qh = pack_codes(q, y[b].qs);
        std::memcpy(y[b].qh, &qh, sizeof qh);
    }
}

}  // namespace strata
