// kernels/scalar.cpp — the scalar reference of activation conversion and the vector ops,
// with GGML's CPU numerics (rms_norm sums squares in double; silu is x / (1 + e^-x)),
// the install function that fills a Table with every scalar entry point, and LayerNorm,
// which has one version for every ISA (encoders are small).
// Must not touch: SIMD, threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/table.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"
#include "tensor/repack.h"

namespace strata::kernels::detail {

void install_scalar_gemm(Table& t);  // scalar_dot.cpp

namespace {

void convert_f32(const float* x, void* out, int64_t n) { std::memcpy(out, x, n * sizeof(float)); }

void f32_to_f16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

void f16_to_f32(const uint16_t* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
}

void convert_f16(const float* x, void* out, int64_t n) { f32_to_f16(x, static_cast<uint16_t*>(out), n); }

void convert_bf16(const float* x, void* out, int64_t n) {
    auto* y = static_cast<uint16_t*>(out);
    for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_bf16(x[i]);
}

// Q8_0 / Q8_1 activations as ggml-cpu's x86 quantize_row_q8_0 / _q8_1 (the AVX code every
// x86 build of llama.cpp runs): multiplier 127 / amax, rounding half to even. Not the
// reference quantizer weight files are written with (1 / (amax / 127), half away from
// zero): the two round some values differently, a whole quantum apart.
template <class Block>
void convert_q8_32(const float* x, void* out, int64_t n) {
    auto* y = static_cast<Block*>(out);
    for (int64_t b = 0; b < n / 32; ++b, x += 32) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f, id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[b].d = fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < 32; ++j) sum += y[b].qs[j] = static_cast<int8_t>(std::nearbyint(x[j] * id));
        if constexpr (requires { y[b].s; }) y[b].s = fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * w[i];
}

void silu_mul(float* g, const float* u, int64_t n) {
    for (int64_t i = 0; i < n; ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

// GGML's table: gelu of every F16 value, rounded to F16.
const std::vector<uint16_t>& gelu_table() {
    static const std::vector<uint16_t> table = [] {
        std::vector<uint16_t> t(1 << 16);
        for (size_t i = 0; i < t.size(); ++i) {
            const float x = fp16_to_fp32(static_cast<uint16_t>(i));
            t[i] = fp32_to_fp16(0.5f * x * (1.0f + std::tanh(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x))));
        }
        return t;
    }();
    return table;
}

void gelu_mul(float* g, const float* u, int64_t n) {
    const auto& table = gelu_table();
    for (int64_t i = 0; i < n; ++i) {
        const float x = g[i];
        g[i] = x <= -10.0f ? 0.0f : x >= 10.0f ? x * u[i] : fp16_to_fp32(table[fp32_to_fp16(x)]) * u[i];
    }
}

void add(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

float dot_f16(const uint16_t* a, const uint16_t* b, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(a[i]) * fp16_to_fp32(b[i]));
    return static_cast<float>(sum);
}

void axpy_f16(float* y, float a, const uint16_t* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += fp16_to_fp32(x[i]) * a;
}

}  // namespace

namespace {

// The online-softmax step over positions [lo, hi) of a block, with key(d, j) and
// value(j, i) giving element d of position j's key and element i of its value.
template <class Key, class Value>
void attend_scalar(const float* q, int G, int hd, int lo, int hi, float scale, float cap, float* m, float* l, float* acc, Key key,
                   Value value) {
    float s[kAttendBlock];
    for (int g = 0; g < G; ++g) {
        const float* qg = q + size_t(g) * hd;
        float* ag = acc + size_t(g) * hd;
        float mx = m[g];
        for (int j = lo; j < hi; ++j) {
            float d = 0;
            for (int i = 0; i < hd; ++i) d += key(i, j) * qg[i];
            d *= scale;
            if (cap > 0) d = cap * std::tanh(d / cap);
            s[j] = d;
            mx = std::max(mx, d);
        }
        const float corr = std::exp(m[g] - mx);
        l[g] *= corr;
        for (int i = 0; i < hd; ++i) ag[i] *= corr;
        for (int j = lo; j < hi; ++j) {
            const float p = std::exp(s[j] - mx);
            l[g] += p;
            for (int i = 0; i < hd; ++i) ag[i] += p * value(j, i);
        }
        m[g] = mx;
    }
}

// The reference brings `ahead` into L2 (prefetcht1) before its work, in one go.
void prefetch(Ahead ahead) {
    const char* c = static_cast<const char*>(ahead.p);
    for (size_t off = 0; off < ahead.bytes; off += 64) __builtin_prefetch(c + off, 0, 2);
}

}  // namespace

void attend_f16_scalar(const float* q, int G, int hd, const uint16_t* kt, const uint16_t* v, size_t ldv, int lo, int hi, float scale,
                       float cap, float* m, float* l, float* acc, Ahead ahead) {
    prefetch(ahead);
    attend_scalar(
        q, G, hd, lo, hi, scale, cap, m, l, acc, [&](int d, int j) { return fp16_to_fp32(kt[size_t(d) * kAttendBlock + j]); },
        [&](int j, int i) { return fp16_to_fp32(v[size_t(j) * ldv + i]); });
}

void attend_q8_0_scalar(const float* q, int G, int hd, const int8_t* kq, const uint16_t* ks, const uint8_t* v, size_t ldv, int lo,
                        int hi, float scale, float cap, float* m, float* l, float* acc, Ahead ahead) {
    prefetch(ahead);
    attend_scalar(
        q, G, hd, lo, hi, scale, cap, m, l, acc,
        [&](int d, int j) { return fp16_to_fp32(ks[size_t(d / 32) * kAttendBlock + j]) * kq[size_t(d) * kAttendBlock + j]; },
        [&](int j, int i) {
            const uint8_t* block = v + size_t(j) * ldv + size_t(i / 32) * 34;
            uint16_t d;
            std::memcpy(&d, block, 2);
            return fp16_to_fp32(d) * reinterpret_cast<const int8_t*>(block + 2)[i % 32];
        });
}

void delta_rule_scalar(float* S, int64_t n, const float* q, const float* k, const float* v, float decay, float beta, float scale, float* o) {
    for (int64_t j = 0; j < n; ++j) {
        float* row = S + j * n;
        float sk = 0;
        for (int64_t i = 0; i < n; ++i) sk += (row[i] *= decay) * k[i];
        const float d = (v[j] - sk) * beta;
        float sq = 0;
        for (int64_t i = 0; i < n; ++i) sq += (row[i] += d * k[i]) * q[i];
        o[j] = sq * scale;
    }
}

void install_scalar(Table& t) {
    install_scalar_gemm(t);
    for (size_t i = 0; i < kTypeSlots; ++i) t.resident[i] = row_layout_of(static_cast<DType>(i));
    t.convert[slot(DType::F32)] = convert_f32;
    t.convert[slot(DType::F16)] = convert_f16;
    t.convert[slot(DType::BF16)] = convert_bf16;
    t.convert[slot(DType::Q8_0)] = convert_q8_32<BlockQ8_0>;
    t.convert[slot(DType::Q8_1)] = convert_q8_32<BlockQ8_1>;
    t.convert[slot(DType::Q8_K)] = quantize_row_q8_k;
    t.rms_norm = rms_norm;
    t.silu_mul = silu_mul;
    t.gelu_mul = gelu_mul;
    t.add = add;
    t.f32_to_f16 = f32_to_f16;
    t.f16_to_f32 = f16_to_f32;
    t.dot_f16 = dot_f16;
    t.axpy_f16 = axpy_f16;
    t.delta_rule = delta_rule_scalar;
    t.attend_f16 = attend_f16_scalar;
    t.attend_q8_0 = attend_q8_0_scalar;
}

}  // namespace strata::kernels::detail

namespace strata::kernels {

void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += x[i];
    const float mean = static_cast<float>(sum / n);
    double sum2 = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i] - mean;
        y[i] = v;
        sum2 += double(v * v);
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(sum2 / n) + eps);
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] * scale * w[i] + b[i];
}

void swiglu_oai_mul(float* g, const float* u, int64_t n, float alpha, float limit) {
    for (int64_t i = 0; i < n; ++i) {
        const float x = std::min(g[i], limit);
        g[i] = x / (1.0f + std::exp(alpha * -x)) * (std::clamp(u[i], -limit, limit) + 1.0f);
    }
}

}  // namespace strata::kernels
