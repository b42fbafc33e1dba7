// tensor/kquants.cpp — reference codecs of the 256-element "K" super-block formats
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (GGML's *_ref quantizers, without an importance matrix).
#include <cmath>
#include <cstring>
#include <stdexcept>

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

// Quantizers: filled in with GGML's reference algorithms.
void quantize_row_q2_k(const float*, void*, int64_t) { throw std::logic_error("quantize Q2_K: not implemented yet"); }
void quantize_row_q3_k(const float*, void*, int64_t) { throw std::logic_error("quantize Q3_K: not implemented yet"); }
void quantize_row_q4_k(const float*, void*, int64_t) { throw std::logic_error("quantize Q4_K: not implemented yet"); }
void quantize_row_q5_k(const float*, void*, int64_t) { throw std::logic_error("quantize Q5_K: not implemented yet"); }
void quantize_row_q6_k(const float*, void*, int64_t) { throw std::logic_error("quantize Q6_K: not implemented yet"); }

}  // namespace strata
