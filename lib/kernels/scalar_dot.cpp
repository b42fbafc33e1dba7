// kernels/scalar_dot.cpp — the scalar reference matrix products, one dot product per
// (weight row, activation row), computed as GGML's generic vec_dot_<w>_<a> does: an
// integer dot per block, then the block scales in float, in GGML's order of operations
// (K-quants: eight float lanes per super-block, the mins through the activation bsums).
// MXFP4 and the lattice formats (IQ1_S..IQ3_S) through tensor/dot_ref.h's references, which
// are those same GGML generic dots. The SIMD variants are tested against these. Must not
// touch: SIMD, threads.
#include <cstring>
#include <iterator>
#include <vector>

#include "kernels/q3k_scales.h"
#include "kernels/table.h"
#include "tensor/blocks.h"
#include "tensor/dot_ref.h"
#include "tensor/fp16.h"
#include "tensor/repack.h"

namespace strata::kernels::detail {
namespace {

using Dot = float (*)(const void* w, const void* a, int64_t k);

float dot_f32(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const float*>(vw);
    auto* a = static_cast<const float*>(va);
    double sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += static_cast<double>(w[i] * a[i]);
    return static_cast<float>(sum);
}

template <float (*ToF32)(uint16_t)>
float dot_half(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const uint16_t*>(vw);
    auto* a = static_cast<const uint16_t*>(va);
    double sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += static_cast<double>(ToF32(w[i]) * ToF32(a[i]));
    return static_cast<float>(sum);
}

float dot_q4_0(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockQ4_0*>(vw);
    auto* a = static_cast<const BlockQ8_0*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK4_0; ++b) {
        int lo = 0, hi = 0;
        for (int j = 0; j < QK4_0 / 2; ++j) {
            lo += ((w[b].qs[j] & 0xF) - 8) * a[b].qs[j];
            hi += ((w[b].qs[j] >> 4) - 8) * a[b].qs[j + QK4_0 / 2];
        }
        sum += (lo + hi) * fp16_to_fp32(w[b].d) * fp16_to_fp32(a[b].d);
    }
    return sum;
}

float dot_q4_1(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockQ4_1*>(vw);
    auto* a = static_cast<const BlockQ8_1*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK4_1; ++b) {
        int lo = 0, hi = 0;
        for (int j = 0; j < QK4_1 / 2; ++j) {
            lo += (w[b].qs[j] & 0xF) * a[b].qs[j];
            hi += (w[b].qs[j] >> 4) * a[b].qs[j + QK4_1 / 2];
        }
        sum += (fp16_to_fp32(w[b].d) * fp16_to_fp32(a[b].d)) * (lo + hi) +
               fp16_to_fp32(w[b].m) * fp16_to_fp32(a[b].s);
    }
    return sum;
}

// The 5th bits of the two nibbles of byte j of a Q5 block, as 0x10 or 0.
inline int q5_high_lo(uint32_t qh, int j) { return ((qh >> j) << 4) & 0x10; }
inline int q5_high_hi(uint32_t qh, int j) { return (qh >> (j + 12)) & 0x10; }

float dot_q5_0(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockQ5_0*>(vw);
    auto* a = static_cast<const BlockQ8_0*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK5_0; ++b) {
        uint32_t qh;
        std::memcpy(&qh, w[b].qh, sizeof qh);
        int lo = 0, hi = 0;
        for (int j = 0; j < QK5_0 / 2; ++j) {
            lo += (((w[b].qs[j] & 0xF) | q5_high_lo(qh, j)) - 16) * a[b].qs[j];
            hi += (((w[b].qs[j] >> 4) | q5_high_hi(qh, j)) - 16) * a[b].qs[j + QK5_0 / 2];
        }
        sum += (fp16_to_fp32(w[b].d) * fp16_to_fp32(a[b].d)) * (lo + hi);
    }
    return sum;
}

float dot_q5_1(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockQ5_1*>(vw);
    auto* a = static_cast<const BlockQ8_1*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK5_1; ++b) {
        uint32_t qh;
        std::memcpy(&qh, w[b].qh, sizeof qh);
        int lo = 0, hi = 0;
        for (int j = 0; j < QK5_1 / 2; ++j) {
            lo += ((w[b].qs[j] & 0xF) | q5_high_lo(qh, j)) * a[b].qs[j];
            hi += ((w[b].qs[j] >> 4) | q5_high_hi(qh, j)) * a[b].qs[j + QK5_1 / 2];
        }
        sum += (fp16_to_fp32(w[b].d) * fp16_to_fp32(a[b].d)) * (lo + hi) +
               fp16_to_fp32(w[b].m) * fp16_to_fp32(a[b].s);
    }
    return sum;
}

float dot_q8_0(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockQ8_0*>(vw);
    auto* a = static_cast<const BlockQ8_0*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK8_0; ++b) {
        int isum = 0;
        for (int j = 0; j < QK8_0; ++j) isum += w[b].qs[j] * a[b].qs[j];
        sum += isum * (fp16_to_fp32(w[b].d) * fp16_to_fp32(a[b].d));
    }
    return sum;
}

float dot_q2_k(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockQ2_K*>(vw);
    auto* a = static_cast<const BlockQ8_K*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const uint8_t* sc = w[b].scales;
        int mins = 0;
        for (int j = 0; j < 16; ++j) mins += a[b].bsums[j] * (sc[j] >> 4);
        const float dall = a[b].d * fp16_to_fp32(w[b].d);
        const float dmin = a[b].d * fp16_to_fp32(w[b].dmin);
        const uint8_t* q2 = w[b].qs;
        const int8_t* q8 = a[b].qs;
        int isum = 0, is = 0;
        for (int half = 0; half < QK_K / 128; ++half, q2 += 32) {
            for (int shift = 0; shift < 8; shift += 2, q8 += 32) {
                for (int part = 0; part < 2; ++part) {
                    int s = 0;
                    for (int l = part * 16; l < part * 16 + 16; ++l) s += q8[l] * ((q2[l] >> shift) & 3);
                    isum += (sc[is++] & 0xF) * s;
                }
            }
        }
        sum += dall * isum - dmin * mins;
    }
    return sum;
}

// The K-quant accumulation shared by Q3_K..Q6_K: q holds the super-block's 256 weights as
// small integers, scale(j) the integer scale of 16-element group j; adds d * the eight
// lane sums into lanes, as GGML's generic code does.
template <class Scale>
void accumulate_k_lanes(const int8_t* q, const int8_t* q8, Scale scale, float d, float lanes[8]) {
    int32_t aux32[8] = {};
    for (int g = 0; g < QK_K / 16; ++g) {
        const int s = scale(g);
        for (int half = 0; half < 2; ++half, q += 8, q8 += 8)
            for (int l = 0; l < 8; ++l) aux32[l] += s * static_cast<int16_t>(q8[l] * q[l]);
    }
    for (int l = 0; l < 8; ++l) lanes[l] += d * aux32[l];
}

float sum_lanes(float start, const float lanes[8]) {
    for (int l = 0; l < 8; ++l) start += lanes[l];
    return start;
}

float dot_q3_k(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockQ3_K*>(vw);
    auto* a = static_cast<const BlockQ8_K*>(va);
    float lanes[8] = {};
    for (int64_t b = 0; b < k / QK_K; ++b) {
        int8_t q[QK_K];
        int8_t* p = q;
        const uint8_t* q3 = w[b].qs;
        uint8_t m = 1;
        for (int half = 0; half < QK_K / 128; ++half, q3 += 32)
            for (int shift = 0; shift < 8; shift += 2, m <<= 1, p += 32)
                for (int l = 0; l < 32; ++l)
                    p[l] = static_cast<int8_t>(((q3[l] >> shift) & 3) - ((w[b].hmask[l] & m) ? 0 : 4));
        uint32_t words[4];
        q3k_scale_words(w[b].scales, words);
        uint8_t scales[16];
        std::memcpy(scales, words, sizeof scales);
        accumulate_k_lanes(q, a[b].qs, [&](int g) { return scales[g] - 32; }, fp16_to_fp32(w[b].d) * a[b].d, lanes);
    }
    return sum_lanes(0, lanes);
}

// The eight 6-bit scales and mins of a Q4_K/Q5_K super-block.
void k4_scales_mins(const uint8_t* packed, uint8_t scales[8], uint8_t mins[8]) {
    for (int j = 0; j < 8; ++j) get_scale_min_k4(j, packed, scales[j], mins[j]);
}

int k4_min_sum(const BlockQ8_K& a, const uint8_t mins[8]) {
    int s = 0;
    for (int j = 0; j < QK_K / 16; ++j) s += a.bsums[j] * mins[j / 2];
    return s;
}

// Q4_K and Q5_K differ only in how the weights unpack; Unpack fills q[256].
template <class Block, class Unpack>
float dot_k4(const void* vw, const void* va, int64_t k, Unpack unpack) {
    auto* w = static_cast<const Block*>(vw);
    auto* a = static_cast<const BlockQ8_K*>(va);
    float lanes[8] = {};
    float sum = 0;
    for (int64_t b = 0; b < k / QK_K; ++b) {
        int8_t q[QK_K];
        unpack(w[b], q);
        uint8_t scales[8], mins[8];
        k4_scales_mins(w[b].scales, scales, mins);
        const int min_sum = k4_min_sum(a[b], mins);
        accumulate_k_lanes(q, a[b].qs, [&](int g) { return static_cast<int>(scales[g / 2]); },
                           fp16_to_fp32(w[b].d) * a[b].d, lanes);
        sum -= fp16_to_fp32(w[b].dmin) * a[b].d * min_sum;
    }
    return sum_lanes(sum, lanes);
}

float dot_q4_k(const void* vw, const void* va, int64_t k) {
    return dot_k4<BlockQ4_K>(vw, va, k, [](const BlockQ4_K& x, int8_t* q) {
        for (int j = 0; j < QK_K / 64; ++j, q += 64)
            for (int l = 0; l < 32; ++l) {
                q[l] = static_cast<int8_t>(x.qs[32 * j + l] & 0xF);
                q[l + 32] = static_cast<int8_t>(x.qs[32 * j + l] >> 4);
            }
    });
}

// Q4_K_R (tensor/repack.h): the row back in Q4_K's order, then as Q4_K.
float dot_q4_k_r(const void* vw, const void* va, int64_t k) {
    thread_local std::vector<BlockQ4_K> row;
    row.resize(static_cast<size_t>(k / QK_K));
    q4_k_from_resident(vw, row.data(), k / QK_K);
    return dot_q4_k(row.data(), va, k);
}

float dot_q5_k(const void* vw, const void* va, int64_t k) {
    return dot_k4<BlockQ5_K>(vw, va, k, [](const BlockQ5_K& x, int8_t* q) {
        uint8_t m = 1;
        for (int j = 0; j < QK_K / 64; ++j, q += 64, m <<= 2)
            for (int l = 0; l < 32; ++l) {
                q[l] = static_cast<int8_t>((x.qs[32 * j + l] & 0xF) + ((x.qh[l] & m) ? 16 : 0));
                q[l + 32] = static_cast<int8_t>((x.qs[32 * j + l] >> 4) + ((x.qh[l] & (m << 1)) ? 16 : 0));
            }
    });
}

float dot_q6_k(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockQ6_K*>(vw);
    auto* a = static_cast<const BlockQ8_K*>(va);
    float lanes[8] = {};
    for (int64_t b = 0; b < k / QK_K; ++b) {
        int8_t q[QK_K];
        const uint8_t* ql = w[b].ql;
        const uint8_t* qh = w[b].qh;
        for (int half = 0; half < QK_K / 128; ++half, ql += 64, qh += 32)
            for (int l = 0; l < 32; ++l) {
                int8_t* p = q + half * 128 + l;
                p[0] = static_cast<int8_t>(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
                p[32] = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
                p[64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                p[96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            }
        accumulate_k_lanes(q, a[b].qs, [&](int g) { return static_cast<int>(w[b].scales[g]); },
                           fp16_to_fp32(w[b].d) * a[b].d, lanes);
    }
    return sum_lanes(0, lanes);
}

// The integer dot of 32 IQ4 codes (low nibbles: elements 0..15, high: 16..31) with 32 int8
// activations.
int iq4_codes_dot(const uint8_t* qs, const int8_t* q8) {
    int lo = 0, hi = 0;
    for (int j = 0; j < 16; ++j) {
        lo += q8[j] * kIQ4NLValues[qs[j] & 0xF];
        hi += q8[j + 16] * kIQ4NLValues[qs[j] >> 4];
    }
    return lo + hi;
}

float dot_iq4_nl(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockIQ4_NL*>(vw);
    auto* a = static_cast<const BlockQ8_0*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK4_NL; ++b)
        sum += (fp16_to_fp32(a[b].d) * fp16_to_fp32(w[b].d)) * iq4_codes_dot(w[b].qs, a[b].qs);
    return sum;
}

float dot_iq4_xs(const void* vw, const void* va, int64_t k) {
    auto* w = static_cast<const BlockIQ4_XS*>(vw);
    auto* a = static_cast<const BlockQ8_K*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const float d4d8 = fp16_to_fp32(w[b].d) * a[b].d;
        for (int ib = 0; ib < QK_K / 32; ++ib)
            sum += d4d8 * (iq4xs_scale(w[b], ib) - 32) * iq4_codes_dot(w[b].qs + 16 * ib, a[b].qs + 32 * ib);
    }
    return sum;
}

// MXFP4 and the lattice formats: tensor/dot_ref.h's reference, GGML's generic dot.
template <DType W>
float dot_by_ref(const void* w, const void* a, int64_t k) {
    return dot_ref(W, w, a, k);
}

// Reference gemm: every (row, token) pair through one dot product. Rows outermost, so a
// weight row stays in cache while it meets every activation row.
template <Dot dot>
void gemm_by_dots(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx,
                  int64_t nt, float* Y, size_t ldy) {
    auto* w = static_cast<const uint8_t*>(W);
    auto* x = static_cast<const uint8_t*>(X);
    for (int64_t r = r0; r < r1; ++r)
        for (int64_t t = 0; t < nt; ++t) Y[t * ldy + r] = dot(w + r * ldw, x + t * ldx, k);
}

// An 8-row layout (tensor/repack.h: Q4_K_R8, ...): each row back in its file type's
// order out of its group, then through that type's dot.
template <DType Layout, Dot dot>
void gemm_by_r8_rows(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                     size_t ldy) {
    const DType file = *file_type_of_r8(Layout);
    thread_local std::vector<uint8_t> row;
    row.resize(dtype_bytes(file, k));
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t g = r / kR8Rows * kR8Rows;
        row_from_r8(Layout, static_cast<const uint8_t*>(W) + g * ldw, static_cast<int>(r - g), row.data(), k / dtype_info(file).block_elems);
        for (int64_t t = 0; t < nt; ++t) Y[t * ldy + r] = dot(row.data(), static_cast<const uint8_t*>(X) + t * ldx, k);
    }
}

// The reference's kernels; gemm_routes.h's rows say which serves what.
constexpr GemmProduct kScalarProducts[] = {
    {Kernel::ScalarDots, DType::F32, gemm_by_dots<dot_f32>},
    {Kernel::ScalarDots, DType::F16, gemm_by_dots<dot_half<fp16_to_fp32>>},
    {Kernel::ScalarDots, DType::BF16, gemm_by_dots<dot_half<bf16_to_fp32>>},
    {Kernel::ScalarDots, DType::Q4_0, gemm_by_dots<dot_q4_0>},
    {Kernel::ScalarDots, DType::Q4_1, gemm_by_dots<dot_q4_1>},
    {Kernel::ScalarDots, DType::Q5_0, gemm_by_dots<dot_q5_0>},
    {Kernel::ScalarDots, DType::Q5_1, gemm_by_dots<dot_q5_1>},
    {Kernel::ScalarDots, DType::Q8_0, gemm_by_dots<dot_q8_0>},
    {Kernel::ScalarDots, DType::Q2_K, gemm_by_dots<dot_q2_k>},
    {Kernel::ScalarDots, DType::Q3_K, gemm_by_dots<dot_q3_k>},
    {Kernel::ScalarDots, DType::Q4_K, gemm_by_dots<dot_q4_k>},
    {Kernel::ScalarDots, DType::Q4_K_R, gemm_by_dots<dot_q4_k_r>},
    {Kernel::ScalarR8Rows, DType::Q4_K_R8, gemm_by_r8_rows<DType::Q4_K_R8, dot_q4_k>},
    {Kernel::ScalarR8Rows, DType::Q6_K_R8, gemm_by_r8_rows<DType::Q6_K_R8, dot_q6_k>},
    {Kernel::ScalarR8Rows, DType::Q5_K_R8, gemm_by_r8_rows<DType::Q5_K_R8, dot_q5_k>},
    {Kernel::ScalarR8Rows, DType::IQ4_XS_R8, gemm_by_r8_rows<DType::IQ4_XS_R8, dot_iq4_xs>},
    {Kernel::ScalarR8Rows, DType::Q8_0_R8, gemm_by_r8_rows<DType::Q8_0_R8, dot_q8_0>},
    {Kernel::ScalarR8Rows, DType::Q4_0_R8, gemm_by_r8_rows<DType::Q4_0_R8, dot_q4_0>},
    {Kernel::ScalarR8Rows, DType::IQ4_NL_R8, gemm_by_r8_rows<DType::IQ4_NL_R8, dot_iq4_nl>},
    {Kernel::ScalarDots, DType::Q5_K, gemm_by_dots<dot_q5_k>},
    {Kernel::ScalarDots, DType::Q6_K, gemm_by_dots<dot_q6_k>},
    {Kernel::ScalarDots, DType::IQ4_NL, gemm_by_dots<dot_iq4_nl>},
    {Kernel::ScalarDots, DType::IQ4_XS, gemm_by_dots<dot_iq4_xs>},
    {Kernel::ScalarDots, DType::MXFP4, gemm_by_dots<dot_by_ref<DType::MXFP4>>},
    {Kernel::ScalarDots, DType::IQ1_S, gemm_by_dots<dot_by_ref<DType::IQ1_S>>},
    {Kernel::ScalarDots, DType::IQ1_M, gemm_by_dots<dot_by_ref<DType::IQ1_M>>},
    {Kernel::ScalarDots, DType::IQ2_XXS, gemm_by_dots<dot_by_ref<DType::IQ2_XXS>>},
    {Kernel::ScalarDots, DType::IQ2_XS, gemm_by_dots<dot_by_ref<DType::IQ2_XS>>},
    {Kernel::ScalarDots, DType::IQ2_S, gemm_by_dots<dot_by_ref<DType::IQ2_S>>},
    {Kernel::ScalarDots, DType::IQ3_XXS, gemm_by_dots<dot_by_ref<DType::IQ3_XXS>>},
    {Kernel::ScalarDots, DType::IQ3_S, gemm_by_dots<dot_by_ref<DType::IQ3_S>>},
};

}  // namespace

void install_scalar_gemm(Table& t) { install_products(t, Isa::Scalar, kScalarProducts, std::size(kScalarProducts)); }

}  // namespace strata::kernels::detail
