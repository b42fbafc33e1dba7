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

// Quantizers. Each block is encoded independently; the rounding is GGML's: add the
// offset plus 0.5 and truncate toward zero, clamping the top code.
namespace {

// The element of largest magnitude (the first of equal ones), with its sign.
float signed_absmax(const float* x, int n) {
    float amax = 0, max = 0;
    for (int j = 0; j < n; ++j) {
        const float a = std::fabs(x[j]);
        if (amax < a) {
            amax = a;
            max = x[j];
        }
    }
    return max;
}

struct Range {
    float min, max;
};
Range value_range(const float* x, int n) {
    Range r{FLT_MAX, -FLT_MAX};
    for (int j = 0; j < n; ++j) {
        if (x[j] < r.min) r.min = x[j];
        if (x[j] > r.max) r.max = x[j];
    }
    return r;
}

// Stores the 5-bit codes of elements j and j + 16: low nibbles in qs[j], fifth bits in qh.
void put_5bit_pair(int j, uint8_t lo, uint8_t hi, uint8_t* qs, uint32_t& qh) {
    qs[j] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
    qh |= static_cast<uint32_t>((lo & 0x10) >> 4) << j;
    qh |= static_cast<uint32_t>((hi & 0x10) >> 4) << (j + 16);
}

}  // namespace

void quantize_row_q4_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ4_0*>(vy);
    for (int64_t b = 0; b < n / QK4_0; ++b, x += QK4_0) {
        const float d = signed_absmax(x, QK4_0) / -8;
        const float id = d ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        for (int j = 0; j < QK4_0 / 2; ++j) {
            const auto lo = std::min<int8_t>(15, static_cast<int8_t>(x[j] * id + 8.5f));
            const auto hi = std::min<int8_t>(15, static_cast<int8_t>(x[j + QK4_0 / 2] * id + 8.5f));
            y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void quantize_row_q4_1(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ4_1*>(vy);
    for (int64_t b = 0; b < n / QK4_1; ++b, x += QK4_1) {
        const Range r = value_range(x, QK4_1);
        const float d = (r.max - r.min) / 15;
        const float id = d ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        y[b].m = fp32_to_fp16(r.min);
        for (int j = 0; j < QK4_1 / 2; ++j) {
            const auto lo = std::min<int8_t>(15, static_cast<int8_t>((x[j] - r.min) * id + 0.5f));
            const auto hi = std::min<int8_t>(15, static_cast<int8_t>((x[j + QK4_1 / 2] - r.min) * id + 0.5f));
            y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void quantize_row_q5_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ5_0*>(vy);
    for (int64_t b = 0; b < n / QK5_0; ++b, x += QK5_0) {
        const float d = signed_absmax(x, QK5_0) / -16;
        const float id = d ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < QK5_0 / 2; ++j) {
            const auto lo = std::min<int8_t>(31, static_cast<int8_t>(x[j] * id + 16.5f));
            const auto hi = std::min<int8_t>(31, static_cast<int8_t>(x[j + QK5_0 / 2] * id + 16.5f));
            put_5bit_pair(j, static_cast<uint8_t>(lo), static_cast<uint8_t>(hi), y[b].qs, qh);
        }
        std::memcpy(y[b].qh, &qh, sizeof qh);
    }
}

void quantize_row_q5_1(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ5_1*>(vy);
    for (int64_t b = 0; b < n / QK5_1; ++b, x += QK5_1) {
        const Range r = value_range(x, QK5_1);
        const float d = (r.max - r.min) / 31;
        const float id = d ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        y[b].m = fp32_to_fp16(r.min);
        uint32_t qh = 0;
        for (int j = 0; j < QK5_1 / 2; ++j) {
            const auto lo = static_cast<uint8_t>((x[j] - r.min) * id + 0.5f);
            const auto hi = static_cast<uint8_t>((x[j + QK5_1 / 2] - r.min) * id + 0.5f);
            put_5bit_pair(j, lo, hi, y[b].qs, qh);
        }
        std::memcpy(y[b].qh, &qh, sizeof qh);
    }
}

}  // namespace strata
