// tensor/legacy.cpp — reference codecs of the 32-element block formats Q4_0, Q4_1,
// Q5_0, Q5_1 (GGML's *_ref quantizers, without an importance matrix).
#include <cmath>
#include <cstring>
#include <stdexcept>

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

// Quantizers: filled in with GGML's reference algorithms.
void quantize_row_q4_0(const float*, void*, int64_t) { throw std::logic_error("quantize Q4_0: not implemented yet"); }
void quantize_row_q4_1(const float*, void*, int64_t) { throw std::logic_error("quantize Q4_1: not implemented yet"); }
void quantize_row_q5_0(const float*, void*, int64_t) { throw std::logic_error("quantize Q5_0: not implemented yet"); }
void quantize_row_q5_1(const float*, void*, int64_t) { throw std::logic_error("quantize Q5_1: not implemented yet"); }

}  // namespace strata
