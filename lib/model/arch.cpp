// model/arch.cpp — the rows of the architecture table.
#include "model/arch.h"

#include <array>

namespace strata::model {
namespace {

constexpr std::array kArchs = {
    // Llama 1/2/3, Mistral, TinyLlama and llama2.c conversions all say "llama".
    ArchInfo{"llama", RopeStyle::Normal, false},
    ArchInfo{"qwen2", RopeStyle::Neox, true},
};

}  // namespace

std::optional<ArchInfo> find_arch(std::string_view name) {
    for (const auto& a : kArchs)
        if (a.name == name) return a;
    return std::nullopt;
}

std::span<const ArchInfo> known_archs() { return kArchs; }

}  // namespace strata::model
