// kernels/kernels.h — the hot loops behind the forward pass, with run-time ISA dispatch.
// Owns: activation conversion to the weight type's dot-product format, the quantized and
// float matrix products (weight-stationary: each weight block is loaded once and applied
// to every activation row of the batch), and the vector ops of a transformer layer.
// Each entry point has a scalar reference and AVX2 / AVX-512 variants picked at start-up
// from the CPU's features; tests compare every variant with the scalar one.
// Must not touch: files, models, threads (callers split work; see threadpool.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/ahead.h"
#include "tensor/dtype.h"
#include "tensor/repack.h"

namespace strata::kernels {

enum class Isa { Scalar, Avx2, Avx512 };
std::string_view isa_name(Isa isa);
Isa detected_isa();       // the best variant this CPU supports
Isa active_isa();         // the variant in use (detected unless overridden)
bool isa_supported(Isa isa);
// Overrides the variant (tests, benchmarks, STRATA_ISA=scalar|avx2|avx512 at start-up).
// Throws std::invalid_argument if the CPU lacks it.
void set_isa(Isa isa);

// GGML's vec_dot_type: the format activations are converted to before a product with
// weights of type w (F32->F32, F16->F16, BF16->BF16, Q4_0/Q5_0/Q8_0/IQ4_NL->Q8_0,
// Q4_1/Q5_1->Q8_1, Q2_K..Q6_K/IQ4_XS and their resident layouts->Q8_K). Throws for types
// that cannot be weights.
DType activation_type(DType w);
bool can_be_weight(DType w);

// The layout (tensor/repack.h) the active variant's products read a resident tensor of file
// type `file` fastest in, `rows` its rows (per slice of a 3-D tensor): with SIMD the 8-row
// layouts of Q4_K, Q5_K, Q6_K, IQ4_XS, Q8_0, Q4_0 and IQ4_NL where the rows allow, else
// Q4_K_R for Q4_K (the scalar reference: only that); other types as they are.
DType resident_layout(DType file, int64_t rows);

// Converts one row of n floats (a multiple of the block size) to activation format at, bit
// for bit as llama.cpp's x86 CPU backend does: Q8_0/Q8_1 as ggml-cpu's AVX quantize_row_q8_0
// / _q8_1 (multiplier 127 / amax, rounding half to even, which differs in some values from
// tensor/quantize.h's reference quantizers that weight files are written with), the others
// as those reference quantizers.
void convert_activations(DType at, const float* x, void* out, int64_t n);

// The rows a caller's ranges are best cut in: two 8-row groups of the 8-row layouts
// (tensor/repack.h), one AVX-512 tile. Any range works; one that cuts a group computes the
// whole group for its part.
inline constexpr int64_t kRowUnit = 2 * strata::kR8Rows;

// Matrix product, weight-stationary:
//   Y[t * ldy + r] = dot(W row r, X row t)   for r in [r0, r1), t in [0, nt)
// W rows hold k elements of type w and start ldw bytes apart; X rows hold k elements
// already converted to activation_type(w), ldx bytes apart; ldy counts floats.
// Callers split rows among threads. For nt > 8 (quantized weights; 4 for float ones) each
// call repacks its activations (cost ~ nt * k), so give each thread a few large row ranges
// rather than many small ones; for fewer tokens (decode, up to 8 sessions together) each
// row is streamed once and applied to every token at once, and any chunking works.
// Numerics: integer block dots are exact; the float steps follow llama.cpp's AVX-512 order
// bit for bit for F32/F16 (all nt) and Q8_0 (nt <= 2; on AVX2 all nt), and differ from it
// in the last bits otherwise (the scalar reference sums F32/F16 products in double).
void gemm(DType w, int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1,
          const void* X, size_t ldx, int64_t nt, float* Y, size_t ldy);
// The name of the kernel gemm runs for weights w and nt tokens on the active variant: a row
// of kernels/gemm_routes.h, the table that dispatches the products (tests, benchmarks).
std::string_view gemm_kernel(DType w, int64_t nt);

// y[i] = x[i] / sqrt(mean(x^2) + eps) * w[i]   (sum of squares in double, as GGML)
void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps);
// y[i] = (x[i] - mean(x)) / sqrt(var(x) + eps) * w[i] + b[i], as ggml_norm then mul and add
// (sums in double); one version for every ISA.
void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps);
// g[i] = silu(g[i]) * u[i]
void silu_mul(float* g, const float* u, int64_t n);
// g[i] = gelu(g[i]) * u[i], GELU's tanh form through GGML's F16 table (the input rounded
// to F16, the table value F16), as ggml_vec_geglu_f32 — bit for bit.
void gelu_mul(float* g, const float* u, int64_t n);
// g[i] = x sigmoid(alpha x) (clamp(u[i], -limit, limit) + 1), x = min(g[i], limit): OpenAI's
// clamped SwiGLU, as ggml_swiglu_oai (one version for every ISA).
void swiglu_oai_mul(float* g, const float* u, int64_t n, float alpha, float limit);
// y[i] += x[i]
void add(float* y, const float* x, int64_t n);
// F16 <-> F32 rows.
void f32_to_f16(const float* x, uint16_t* y, int64_t n);
void f16_to_f32(const uint16_t* x, float* y, int64_t n);
// dot of two F16 vectors, accumulated in F32.
float dot_f16(const uint16_t* a, const uint16_t* b, int64_t n);
// y[i] += a * x[i], x F16.
void axpy_f16(float* y, float a, const uint16_t* x, int64_t n);
// One token through one Gated DeltaNet head: the n x n state S (row j: value element j's
// weights over the key's n elements) decays, S *= decay; learns v under k by the delta rule,
// S += beta (v - S k) k^T; and is read out, o = scale S q. Row by row (each row's products
// summed in F32; the SIMD variants take n a multiple of 16, others run the scalar one).
void delta_rule(float* S, int64_t n, const float* q, const float* k, const float* v, float decay, float beta, float scale, float* o);
// Flash attention's inner step over one KV block of 16 positions: G query rows q[g] (F32,
// hd floats each, one after another) against the block's positions j in [lo, hi), whose
// keys are stored transposed (one KV head: element d of position j at kt[d * 16 + j], F16)
// and whose values are F16 rows of hd at v + j * ldv. Scores s = dot(q[g], k_j) * scale,
// then cap * tanh(s / cap) when cap > 0, fold into an online softmax: running max m[g],
// sum l[g], and accumulator acc[g * hd ..] = sum of exp(s - m[g]) * v_j (rescaled when the
// max grows). Start from m = -inf, l = 0, acc = 0; the attention output is acc / l. Calls
// over consecutive blocks compose; so do partial states, merged by rescaling to the
// larger max. Positions outside [lo, hi) are never part of the result. `ahead` is brought
// into L2 meanwhile (ahead.h).
void attend_f16(const float* q, int G, int hd, const uint16_t* kt, const uint16_t* v, size_t ldv, int lo, int hi, float scale,
                float cap, float* m, float* l, float* acc, Ahead ahead = {});
// The same over a Q8_0 block (hd a multiple of 32): keys int8 kq[d * 16 + j] times the F16
// scale ks[(d / 32) * 16 + j]; value rows of hd / 32 GGML Q8_0 blocks (F16 scale, 32 int8),
// ldv bytes apart.
void attend_q8_0(const float* q, int G, int hd, const int8_t* kq, const uint16_t* ks, const uint8_t* v, size_t ldv, int lo, int hi,
                 float scale, float cap, float* m, float* l, float* acc, Ahead ahead = {});

}  // namespace strata::kernels
