// model/arch.h — the architecture table: one row per `general.architecture` saying
// how that family's layers differ (RoPE style, biases, ...). Adding a family is
// adding a row (and, if it needs a new kind of layer, a step in forward.cpp).
// Must not touch: tensor data, kernels.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace strata::model {

enum class RopeStyle {
    Normal,  // rotate adjacent pairs (2i, 2i+1) — llama (the converter permuted Q/K for it)
    Neox,    // rotate (i, i + n_rot/2) — qwen2
};

struct ArchInfo {
    std::string_view name;        // general.architecture
    RopeStyle rope;
    bool qkv_bias;                // attn_q/k/v.bias present in every layer
};

// The row for `name`, or nullopt for an architecture strata cannot run.
std::optional<ArchInfo> find_arch(std::string_view name);
std::span<const ArchInfo> known_archs();

}  // namespace strata::model
