// tests/unit/test_isa.h — the kernel variants this CPU runs, and a guard that selects one of
// them for a scope (the tests that check a result on every variant share these).
#pragma once

#include <vector>

#include "kernels/kernels.h"

namespace strata::test {

// Scalar, AVX2 and AVX-512, those this CPU supports.
inline std::vector<kernels::Isa> supported_isas() {
    std::vector<kernels::Isa> out;
    for (kernels::Isa isa : {kernels::Isa::Scalar, kernels::Isa::Avx2, kernels::Isa::Avx512})
        if (kernels::isa_supported(isa)) out.push_back(isa);
    return out;
}

// Selects a kernel variant until the end of the scope, then the one that was active.
struct UseIsa {
    kernels::Isa saved = kernels::active_isa();
    explicit UseIsa(kernels::Isa isa) { kernels::set_isa(isa); }
    ~UseIsa() { kernels::set_isa(saved); }
    UseIsa(const UseIsa&) = delete;
    UseIsa& operator=(const UseIsa&) = delete;
};

}  // namespace strata::test
