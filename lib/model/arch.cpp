// model/arch.cpp — the list of builders.
#include "model/arch.h"

#include <array>

namespace strata::model {
namespace {

const std::array<const Builder*, 11> kBuilders = {&kLlama, &kQwen2,   &kQwen3, &kGemma2,   &kGemma3, &kPhi3,
                                                  &kGranite, &kOlmo2, &kQwen3Moe, &kOlmoe, &kBert};

}  // namespace

const Builder* find_builder(std::string_view name) {
    for (const auto* b : kBuilders)
        if (b->name == name) return b;
    return nullptr;
}

std::string arch_names() {
    std::string s;
    for (const auto* b : kBuilders) s += (s.empty() ? "" : ", ") + std::string(b->name);
    return s;
}

}  // namespace strata::model
