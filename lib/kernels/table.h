// kernels/table.h — internal: the per-ISA table of kernel entry points behind kernels.h.
// Owns: the function-pointer types, the Table struct (the matrix products' routes by weight
// type and token count, filled from gemm_routes.h's rows; a slot per activation type and
// per vector op) and the install functions each ISA's translation unit provides.
// An ISA's install function overwrites only the slots it implements, so a table built as
// scalar → avx2 → avx512 falls back to the next-best variant for anything left out.
// Plain arrays, no std templates: ISA translation units include this header, and an
// out-of-line copy of a std inline function built with AVX-512 flags could be the one the
// linker keeps. Must not touch: CPU detection and the public API (dispatch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/ahead.h"
#include "kernels/gemm_routes.h"
#include "tensor/dtype.h"

namespace strata::kernels::detail {

using GemmFn = void (*)(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X,
                        size_t ldx, int64_t nt, float* Y, size_t ldy);
using ConvertFn = void (*)(const float* x, void* out, int64_t n);

// Slots are indexed by the DType id; there is one for every id of the type table.
constexpr size_t kTypeSlots = kDTypeIdLimit;
constexpr size_t slot(DType t) { return static_cast<size_t>(t); }

// A kernel of the rows of gemm_routes.h, for one weight type: `fn` serves up to max_tokens.
struct GemmRoute {
    int64_t max_tokens = 0;
    GemmFn fn = nullptr;
    Kernel kernel = Kernel::ScalarDots;
};

// One kernel a family's source provides, for weight type w.
struct GemmProduct {
    Kernel kernel;
    DType w;
    GemmFn fn;
};

struct Table {
    GemmRoute gemm[kTypeSlots][kMaxRoutes] = {};  // by weight type, in token order
    ConvertFn convert[kTypeSlots] = {};  // by activation type
    // By file type: the layout (tensor/repack.h) this variant's products read a resident
    // tensor fastest in, where its rows allow it (kernels.h's resident_layout).
    DType resident[kTypeSlots] = {};
    void (*rms_norm)(const float* x, const float* w, float* y, int64_t n, float eps) = nullptr;
    void (*silu_mul)(float* g, const float* u, int64_t n) = nullptr;
    void (*gelu_mul)(float* g, const float* u, int64_t n) = nullptr;
    void (*add)(float* y, const float* x, int64_t n) = nullptr;
    void (*f32_to_f16)(const float* x, uint16_t* y, int64_t n) = nullptr;
    void (*f16_to_f32)(const uint16_t* x, float* y, int64_t n) = nullptr;
    float (*dot_f16)(const uint16_t* a, const uint16_t* b, int64_t n) = nullptr;
    void (*axpy_f16)(float* y, float a, const uint16_t* x, int64_t n) = nullptr;
    void (*delta_rule)(float* S, int64_t n, const float* q, const float* k, const float* v, float decay, float beta, float scale,
                       float* o) = nullptr;
    void (*attend_f16)(const float* q, int G, int hd, const uint16_t* kt, const uint16_t* v, size_t ldv, int lo, int hi,
                       float scale, float cap, float* m, float* l, float* acc, Ahead ahead) = nullptr;
    void (*attend_q8_0)(const float* q, int G, int hd, const int8_t* kq, const uint16_t* ks, const uint8_t* v, size_t ldv, int lo,
                        int hi, float scale, float cap, float* m, float* l, float* acc, Ahead ahead) = nullptr;
};

// attend_f16: positions per KV block, and the largest query group the SIMD variants take
// (the scalar reference takes any; the SIMD variants hand it what they cannot take).
constexpr int kAttendBlock = 16, kAttendMaxGroup = 64;
// delta_rule: the SIMD variants take rows of a multiple of kDeltaRuleStep floats.
constexpr int64_t kDeltaRuleStep = 16;
void delta_rule_scalar(float* S, int64_t n, const float* q, const float* k, const float* v, float decay, float beta, float scale, float* o);
void attend_f16_scalar(const float* q, int G, int hd, const uint16_t* kt, const uint16_t* v, size_t ldv, int lo, int hi, float scale,
                       float cap, float* m, float* l, float* acc, Ahead ahead);
void attend_q8_0_scalar(const float* q, int G, int hd, const int8_t* kq, const uint16_t* ks, const uint8_t* v, size_t ldv, int lo,
                        int hi, float scale, float cap, float* m, float* l, float* acc, Ahead ahead);

// Installs the rows of gemm_routes.h for `isa` whose (kernel, weight type) `products` has
// (n of them): a type's first row replaces the routes a lower variant installed.
// dispatch.cpp, compiled without -m flags.
void install_products(Table& t, Isa isa, const GemmProduct* products, size_t n);

// Fill every slot (scalar) or override the slots an ISA implements (simd/install.cpp,
// compiled once per variant). The AVX-512 variant may assume AVX2/FMA/F16C too;
// dispatch.cpp installs avx2 before avx512.
void install_scalar(Table& t);
namespace avx2 {
void install(Table& t);
}
namespace avx512 {
void install(Table& t);
}

}  // namespace strata::kernels::detail
