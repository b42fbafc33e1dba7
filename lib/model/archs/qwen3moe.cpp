// model/archs/qwen3moe.cpp — Qwen3 mixture of experts (Qwen3-30B-A3B, 235B-A22B): the
// Qwen3 block (per-head q/k RMSNorm, NEOX RoPE, no biases) whose FFN is a softmax-routed
// mixture (expert_feed_forward_length rows per expert), the chosen weights renormalized.
#include "model/arch.h"

#include <stdexcept>

namespace strata::model {
namespace {

void build(const Keys&, HParams& hp) {
    if (hp.n_expert == 0) throw std::runtime_error("model metadata: qwen3moe.expert_count is missing or 0");
    hp.layers.assign(hp.n_layer, pre_norm({.qk_norm = QkNorm::PerHead, .rope = RopeStyle::Neox}, Moe{.renormalize = true}));
}

const Registration registered{{"qwen3moe", build}};

}  // namespace

}  // namespace strata::model
