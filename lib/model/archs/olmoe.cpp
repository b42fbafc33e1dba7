// model/archs/olmoe.cpp — OLMoE (AI2's 1B-active / 7B mixture of experts): a pre-norm
// block with q and k RMS-normalized over the whole projection before NEOX RoPE, and a
// softmax-routed mixture of feed_forward_length-wide experts whose chosen weights are not
// renormalized.
#include "model/arch.h"

#include <stdexcept>

namespace strata::model {
namespace {

void build(const Keys&, HParams& hp) {
    if (hp.n_expert == 0) throw std::runtime_error("model metadata: olmoe.expert_count is missing or 0");
    hp.layers.assign(hp.n_layer, pre_norm({.qk_norm = QkNorm::Whole, .rope = RopeStyle::Neox}, Moe{.renormalize = false}));
}

const Registration registered{{"olmoe", build}};

}  // namespace

}  // namespace strata::model
