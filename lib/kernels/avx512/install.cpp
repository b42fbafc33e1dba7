// kernels/avx512/install.cpp — the AVX-512 (F, BW, VL, DQ, VNNI) table entries: the generic SIMD
// code of kernels/simd/ instantiated with 16-float vectors. Must not touch: other ISAs.
#include "kernels/avx512/traits.h"
#include "kernels/simd/vec_ops.h"
#include "kernels/table.h"

namespace strata::kernels::detail {

void install_avx512(Table& t) {
    t.convert[slot(DType::F16)] = simd::convert_f16<V>;
    t.convert[slot(DType::BF16)] = simd::convert_bf16<V>;
    t.rms_norm = simd::rms_norm<V>;
    t.silu_mul = simd::silu_mul<V>;
    t.add = simd::add<V>;
    t.f32_to_f16 = simd::f32_to_f16<V>;
    t.f16_to_f32 = simd::f16_to_f32<V>;
    t.dot_f16 = simd::dot_f16<V>;
    t.axpy_f16 = simd::axpy_f16<V>;
}

}  // namespace strata::kernels::detail
