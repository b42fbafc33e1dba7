// kernels/dispatch.cpp — the public kernel API: CPU feature detection, the choice of
// variant (STRATA_ISA=scalar|avx2|avx512 overrides it at start-up), argument checks, and
// forwarding to the active variant's table. Compiled without -m flags, so it runs on any
// x86-64. Must not touch: the kernels themselves.
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <string>

#include "kernels/gemm_routes.h"
#include "kernels/kernels.h"
#include "kernels/table.h"
#include "tensor/dot_ref.h"
#include "tensor/repack.h"

namespace strata::kernels {
namespace {

using detail::slot;
using detail::Table;

// F16C from CPUID directly: clang's __builtin_cpu_supports does not know "f16c".
bool cpu_has_f16c() {
#if defined(__x86_64__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
#else
    return false;
#endif
}

bool cpu_has_avx2() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c() && __builtin_cpu_supports("bmi2");
#else
    return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__)
    return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
}

// Whether every row of gemm_routes.h for `isa` is installed in t, as its route.
bool has_every_row(const Table& t, Isa isa) {
    for (const detail::GemmRow& row : detail::kGemmRows) {
        if (row.isa != isa) continue;
        const auto& routes = t.gemm[slot(row.w)];
        const auto hit = std::find_if(std::begin(routes), std::end(routes), [&](const detail::GemmRoute& r) {
            return r.fn && r.kernel == row.kernel && r.max_tokens == row.max_tokens;
        });
        if (hit == std::end(routes)) return false;
    }
    return true;
}

// One table per variant, each built on the one below it so that an entry point a
// variant does not specialise falls back to the next-best one.
struct Tables {
    Table scalar, avx2, avx512;
    Tables() {
        detail::install_scalar(scalar);
        avx2 = scalar;
#if defined(__x86_64__)
        detail::avx2::install(avx2);
#endif
        avx512 = avx2;
#if defined(__x86_64__)
        detail::avx512::install(avx512);
#endif
#if defined(__x86_64__)
        for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
#else
        for (Isa isa : {Isa::Scalar})
#endif
            if (!has_every_row(of(isa), isa))
                throw std::logic_error("kernels: a row of gemm_routes.h for " + std::string(isa_name(isa)) + " has no kernel");
    }
    const Table& of(Isa isa) const { return isa == Isa::Avx512 ? avx512 : isa == Isa::Avx2 ? avx2 : scalar; }
};

const Tables& tables() {
    static const Tables t;
    return t;
}

std::atomic<const Table*> g_table{nullptr};
std::atomic<Isa> g_isa{Isa::Scalar};

Isa isa_from_name(std::string_view name) {
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
        if (isa_name(isa) == name) return isa;
    throw std::invalid_argument("STRATA_ISA=" + std::string(name) + ": expected scalar, avx2 or avx512");
}

// The variant chosen at start-up: STRATA_ISA if set, else the best the CPU has.
const Table& table() {
    if (const Table* t = g_table.load(std::memory_order_acquire)) return *t;
    const char* env = std::getenv("STRATA_ISA");
    set_isa(env && *env ? isa_from_name(env) : detected_isa());
    return *g_table.load(std::memory_order_acquire);
}

bool is_activation_type(DType t) {
    switch (t) {
        case DType::F32: case DType::F16: case DType::BF16:
        case DType::Q8_0: case DType::Q8_1: case DType::Q8_K:
            return true;
        default: return false;
    }
}

// The route of weights w for nt tokens (the table's rows of a type cover every count).
const detail::GemmRoute& route(DType w, int64_t nt) {
    const detail::GemmRoute* r = table().gemm[slot(w)];
    int i = 0;
    while (i + 1 < detail::kMaxRoutes && nt > r[i].max_tokens) ++i;
    return r[i];
}

void check_multiple(const char* what, DType t, int64_t n) {
    if (n < 0 || n % dtype_info(t).block_elems != 0)
        throw std::invalid_argument(std::string(what) + ": " + std::to_string(n) + " elements is not a multiple of " +
                                    std::string(dtype_name(t)) + "'s block size");
}

}  // namespace

namespace detail {

void install_products(Table& t, Isa isa, const GemmProduct* products, size_t n) {
    for (const GemmRow& row : kGemmRows) {
        if (row.isa != isa) continue;
        const GemmProduct* end = products + n;
        const GemmProduct* p = std::find_if(products, end, [&](const GemmProduct& q) { return q.kernel == row.kernel && q.w == row.w; });
        if (p == end) continue;
        GemmRoute* routes = t.gemm[slot(row.w)];
        if (row.min_tokens == 1) std::fill(routes, routes + kMaxRoutes, GemmRoute{});
        GemmRoute* free = std::find_if(routes, routes + kMaxRoutes, [](const GemmRoute& r) { return !r.fn; });
        *free = GemmRoute{row.max_tokens, p->fn, row.kernel};  // rows_are_contiguous(): there is room
    }
}

}  // namespace detail

std::string_view isa_name(Isa isa) {
    switch (isa) {
        case Isa::Scalar: return "scalar";
        case Isa::Avx2: return "avx2";
        case Isa::Avx512: return "avx512";
    }
    return "unknown";
}

bool isa_supported(Isa isa) {
    switch (isa) {
        case Isa::Scalar: return true;
        case Isa::Avx2: return cpu_has_avx2();
        case Isa::Avx512: return cpu_has_avx512();
    }
    return false;
}

Isa detected_isa() {
    static const Isa best = cpu_has_avx512() ? Isa::Avx512 : cpu_has_avx2() ? Isa::Avx2 : Isa::Scalar;
    return best;
}

Isa active_isa() {
    table();
    return g_isa.load(std::memory_order_relaxed);
}

void set_isa(Isa isa) {
    if (!isa_supported(isa))
        throw std::invalid_argument("kernel variant " + std::string(isa_name(isa)) + " is not supported by this CPU");
    g_isa.store(isa, std::memory_order_relaxed);
    g_table.store(&tables().of(isa), std::memory_order_release);
}

bool can_be_weight(DType w) {
    switch (w) {
        case DType::F32: case DType::F16: case DType::BF16:
        case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q8_0:
        case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q5_K: case DType::Q6_K:
        case DType::IQ4_NL: case DType::IQ4_XS: case DType::Q4_K_R:
            return true;
        default: return has_dot_ref(w) || file_type_of_r8(w).has_value();  // dot_ref: MXFP4, IQ1_S..IQ3_S
    }
}

DType activation_type(DType w) {
    if (const std::optional<DType> file = file_type_of_r8(w)) w = *file;
    switch (w) {
        case DType::F32: case DType::F16: case DType::BF16: return w;
        case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: case DType::IQ4_NL: return DType::Q8_0;
        case DType::Q4_1: case DType::Q5_1: return DType::Q8_1;
        case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q5_K: case DType::Q6_K:
        case DType::IQ4_XS: case DType::Q4_K_R:
            return DType::Q8_K;
        default: break;
    }
    if (has_dot_ref(w)) return dot_ref_activation(w);  // MXFP4: Q8_0; IQ1_S..IQ3_S: Q8_K
    throw std::invalid_argument("type " + std::string(dtype_name(w)) + " cannot be a matrix-product weight");
}

DType resident_layout(DType file, int64_t rows) {
    const DType chosen = table().resident[slot(file)];
    return can_keep_as(file, chosen, rows) ? chosen : row_layout_of(file);
}

void convert_activations(DType at, const float* x, void* out, int64_t n) {
    if (!is_activation_type(at))
        throw std::invalid_argument("convert_activations: " + std::string(dtype_name(at)) + " is not an activation type");
    check_multiple("convert_activations", at, n);
    table().convert[slot(at)](x, out, n);
}

void gemm(DType w, int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx,
          int64_t nt, float* Y, size_t ldy) {
    const DType at = activation_type(w);
    check_multiple("gemm", w, k);
    check_multiple("gemm", at, k);
    if (r0 < 0 || r1 < r0 || nt < 0) throw std::invalid_argument("gemm: bad row or token range");
    if (r1 == r0 || nt == 0) return;
    route(w, nt).fn(k, W, ldw, r0, r1, X, ldx, nt, Y, ldy);
}

std::string_view gemm_kernel(DType w, int64_t nt) {
    activation_type(w);  // throws for types that cannot be weights
    if (nt < 1) throw std::invalid_argument("gemm_kernel: no tokens");
    return detail::kernel_name(route(w, nt).kernel);
}

void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps) { table().rms_norm(x, w, y, n, eps); }
void silu_mul(float* g, const float* u, int64_t n) { table().silu_mul(g, u, n); }
void gelu_mul(float* g, const float* u, int64_t n) { table().gelu_mul(g, u, n); }
void add(float* y, const float* x, int64_t n) { table().add(y, x, n); }
void f32_to_f16(const float* x, uint16_t* y, int64_t n) { table().f32_to_f16(x, y, n); }
void f16_to_f32(const uint16_t* x, float* y, int64_t n) { table().f16_to_f32(x, y, n); }
float dot_f16(const uint16_t* a, const uint16_t* b, int64_t n) { return table().dot_f16(a, b, n); }
void axpy_f16(float* y, float a, const uint16_t* x, int64_t n) { table().axpy_f16(y, a, x, n); }
void delta_rule(float* S, int64_t n, const float* q, const float* k, const float* v, float decay, float beta, float scale, float* o) {
    if (n % detail::kDeltaRuleStep != 0) return detail::delta_rule_scalar(S, n, q, k, v, decay, beta, scale, o);
    table().delta_rule(S, n, q, k, v, decay, beta, scale, o);
}
void attend_f16(const float* q, int G, int hd, const uint16_t* kt, const uint16_t* v, size_t ldv, int lo, int hi, float scale,
                float cap, float* m, float* l, float* acc, Ahead ahead) {
    if (lo < 0 || hi > detail::kAttendBlock || lo >= hi) throw std::invalid_argument("attend_f16: bad position range");
    table().attend_f16(q, G, hd, kt, v, ldv, lo, hi, scale, cap, m, l, acc, ahead);
}
void attend_q8_0(const float* q, int G, int hd, const int8_t* kq, const uint16_t* ks, const uint8_t* v, size_t ldv, int lo, int hi,
                 float scale, float cap, float* m, float* l, float* acc, Ahead ahead) {
    if (lo < 0 || hi > detail::kAttendBlock || lo >= hi || hd % 32 != 0) throw std::invalid_argument("attend_q8_0: bad range or head size");
    table().attend_q8_0(q, G, hd, kq, ks, v, ldv, lo, hi, scale, cap, m, l, acc, ahead);
}

}  // namespace strata::kernels
