// kernels/simd/install.cpp — one SIMD variant's table: the generic vector ops and the
// matrix products of every weight family. Compiled once per ISA (see simd/isa.h).
#include "kernels/simd/install_common.h"
#include "kernels/simd/isa.h"
#include "kernels/simd/quantize_acts.h"

namespace strata::kernels::detail::STRATA_SIMD_NS {

void install(Table& t) {
    simd::install_common<V>(t);
    t.convert[slot(DType::Q8_0)] = simd::quantize_q8_0;
    t.convert[slot(DType::Q8_1)] = simd::quantize_q8_1;
    t.convert[slot(DType::Q8_K)] = simd::quantize_q8_k;
    install_float_gemm(t);
    install_legacy_gemm(t);
    install_kquant_gemm(t);
    install_lattice_gemm(t);
}

}  // namespace strata::kernels::detail::STRATA_SIMD_NS
