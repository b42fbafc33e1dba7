// tensor/quantize.cpp — per-type dispatch of the reference codecs, and the plain
// (F32/F16/BF16) and 8-bit activation formats (Q8_0, Q8_1, Q8_K).
#include "tensor/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tensor/blocks.h"
#include "tensor/codecs.h"
#include "tensor/fp16.h"
#include "tensor/repack.h"

namespace strata {

void quantize_row_q8_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(vy);
    for (int64_t b = 0; b < n / QK8_0; ++b, x += QK8_0) {
        float amax = 0;
        for (int j = 0; j < QK8_0; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; ++j) y[b].qs[j] = static_cast<int8_t>(std::roundf(x[j] * id));
    }
}

void quantize_row_q8_1(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ8_1*>(vy);
    for (int64_t b = 0; b < n / QK8_1; ++b, x += QK8_1) {
        float amax = 0;
        for (int j = 0; j < QK8_1; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < QK8_1; ++j) {
            y[b].qs[j] = static_cast<int8_t>(std::roundf(x[j] * id));
            sum += y[b].qs[j];
        }
        y[b].s = fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

void quantize_row_q8_k(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ8_K*>(vy);
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        float max = 0, amax = 0;
        for (int j = 0; j < QK_K; ++j) {
            float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        if (!amax) {
            y[b].d = 0;
            std::memset(y[b].qs, 0, QK_K);
            std::memset(y[b].bsums, 0, sizeof y[b].bsums);
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < QK_K; ++j) {
            int v = nearest_int(iscale * x[j]);
            y[b].qs[j] = static_cast<int8_t>(v < 127 ? v : 127);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            int sum = 0;
            for (int i = 0; i < 16; ++i) sum += y[b].qs[j * 16 + i];
            y[b].bsums[j] = static_cast<int16_t>(sum);
        }
        y[b].d = 1 / iscale;
    }
}

namespace {

void dequantize_q8_0(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ8_0*>(vx);
    for (int64_t b = 0; b < n / QK8_0; ++b) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < QK8_0; ++j) *y++ = x[b].qs[j] * d;
    }
}

void dequantize_q8_1(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ8_1*>(vx);
    for (int64_t b = 0; b < n / QK8_1; ++b) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < QK8_1; ++j) *y++ = x[b].qs[j] * d;
    }
}

void dequantize_q8_k(const void* vx, float* y, int64_t n) {
    auto* x = static_cast<const BlockQ8_K*>(vx);
    for (int64_t b = 0; b < n / QK_K; ++b)
        for (int j = 0; j < QK_K; ++j) *y++ = x[b].d * x[b].qs[j];
}

// Rejects a row length that is negative or not a whole number of t's blocks.
void check_row_length(const char* what, DType t, int64_t n) {
    const uint32_t block = dtype_info(t).block_elems;
    if (n < 0 || n % block != 0)
        throw std::invalid_argument(std::string(what) + ": " + std::to_string(n) + " elements is not a multiple of " +
                                    std::string(dtype_name(t)) + "'s block of " + std::to_string(block));
}

}  // namespace

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
    check_row_length("dequantize_row", t, n);
    switch (t) {
        case DType::F32: std::memcpy(dst, src, n * sizeof(float)); return;
        case DType::F16: {
            auto* s = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(s[i]);
            return;
        }
        case DType::BF16: {
            auto* s = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(s[i]);
            return;
        }
        case DType::Q8_0: dequantize_q8_0(src, dst, n); return;
        case DType::Q8_1: dequantize_q8_1(src, dst, n); return;
        case DType::Q8_K: dequantize_q8_k(src, dst, n); return;
        case DType::Q4_0: dequantize_q4_0(src, dst, n); return;
        case DType::Q4_1: dequantize_q4_1(src, dst, n); return;
        case DType::Q5_0: dequantize_q5_0(src, dst, n); return;
        case DType::Q5_1: dequantize_q5_1(src, dst, n); return;
        case DType::Q2_K: dequantize_q2_k(src, dst, n); return;
        case DType::Q3_K: dequantize_q3_k(src, dst, n); return;
        case DType::Q4_K: dequantize_q4_k(src, dst, n); return;
        case DType::Q4_K_R:  // a block at a time back in Q4_K's order
            for (int64_t b = 0; b < n / QK_K; ++b) {
                BlockQ4_K natural;
                q4_k_from_resident(static_cast<const BlockQ4_K*>(src) + b, &natural, 1);
                dequantize_q4_k(&natural, dst + b * QK_K, QK_K);
            }
            return;
        case DType::Q5_K: dequantize_q5_k(src, dst, n); return;
        case DType::Q6_K: dequantize_q6_k(src, dst, n); return;
        case DType::IQ4_NL: dequantize_iq4_nl(src, dst, n); return;
        case DType::IQ4_XS: dequantize_iq4_xs(src, dst, n); return;
        case DType::MXFP4: dequantize_mxfp4(src, dst, n); return;
        default: break;
    }
    if (is_lattice_type(t)) return dequantize_lattice(t, src, dst, n);
    throw std::invalid_argument("dequantize_row: type " + std::string(dtype_name(t)) + " has no float values");
}

// Every file type with float values can be read; the lattice formats (which need an
// importance matrix to be written) and the resident layouts are only read.
bool can_dequantize(DType t) { return can_quantize(t) || is_lattice_type(t) || t == DType::Q4_K_R; }

bool can_quantize(DType t) {
    switch (t) {
        case DType::F32: case DType::F16: case DType::BF16:
        case DType::Q8_0: case DType::Q8_1: case DType::Q8_K:
        case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1:
        case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q5_K: case DType::Q6_K:
        case DType::IQ4_NL: case DType::IQ4_XS: case DType::MXFP4:
            return true;
        default: return false;
    }
}

void quantize_row(DType t, const float* src, void* dst, int64_t n) {
    check_row_length("quantize_row", t, n);
    switch (t) {
        case DType::F32: std::memcpy(dst, src, n * sizeof(float)); return;
        case DType::F16: {
            auto* d = static_cast<uint16_t*>(dst);
            for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_fp16(src[i]);
            return;
        }
        case DType::BF16: {
            auto* d = static_cast<uint16_t*>(dst);
            for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_bf16(src[i]);
            return;
        }
        case DType::Q8_0: quantize_row_q8_0(src, dst, n); return;
        case DType::Q8_1: quantize_row_q8_1(src, dst, n); return;
        case DType::Q8_K: quantize_row_q8_k(src, dst, n); return;
        case DType::Q4_0: quantize_row_q4_0(src, dst, n); return;
        case DType::Q4_1: quantize_row_q4_1(src, dst, n); return;
        case DType::Q5_0: quantize_row_q5_0(src, dst, n); return;
        case DType::Q5_1: quantize_row_q5_1(src, dst, n); return;
        case DType::Q2_K: quantize_row_q2_k(src, dst, n); return;
        case DType::Q3_K: quantize_row_q3_k(src, dst, n); return;
        case DType::Q4_K: quantize_row_q4_k(src, dst, n); return;
        case DType::Q5_K: quantize_row_q5_k(src, dst, n); return;
        case DType::Q6_K: quantize_row_q6_k(src, dst, n); return;
        case DType::IQ4_NL: quantize_row_iq4_nl(src, dst, n); return;
        case DType::IQ4_XS: quantize_row_iq4_xs(src, dst, n); return;
        case DType::MXFP4: quantize_row_mxfp4(src, dst, n); return;
        default: break;
    }
    throw std::invalid_argument("quantize_row: cannot quantize to " + std::string(dtype_name(t)));
}

}  // namespace strata
