// kernels/simd/install_common.h — the table entries every SIMD variant takes from the
// generic code, instantiated with the including ISA's vector traits V.
// Must not touch: the entries an ISA specialises with its own intrinsics.
#pragma once

#include "kernels/simd/attention.h"
#include "kernels/simd/vec_ops.h"
#include "kernels/table.h"

namespace {
namespace simd {

template <class V>
void install_common(strata::kernels::detail::Table& t) {
    using strata::DType;
    using strata::kernels::detail::slot;
    t.convert[slot(DType::F16)] = convert_f16<V>;
    t.convert[slot(DType::BF16)] = convert_bf16<V>;
    t.rms_norm = rms_norm<V>;
    t.silu_mul = silu_mul<V>;
    t.add = add<V>;
    t.f32_to_f16 = f32_to_f16<V>;
    t.f16_to_f32 = f16_to_f32<V>;
    t.dot_f16 = dot_f16<V>;
    t.axpy_f16 = axpy_f16<V>;
    t.delta_rule = delta_rule<V>;
    t.attend_f16 = attend_f16<V>;
    t.attend_q8_0 = attend_q8_0<V>;
}

}  // namespace simd
}  // namespace
