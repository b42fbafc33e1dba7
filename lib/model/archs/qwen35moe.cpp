// model/archs/qwen35moe.cpp — Qwen3.5/3.6 mixture of experts (Qwen3.6-35B-A3B): the Qwen3.5
// hybrid layers (delta_net_hybrid) whose FFN is a softmax-routed mixture, the chosen weights
// renormalized, plus a shared expert behind a sigmoid gate.
#include "model/arch.h"

#include <stdexcept>

namespace strata::model {
namespace {

void build(const Keys& keys, HParams& hp) {
    if (hp.n_expert == 0) throw std::runtime_error("model metadata: qwen35moe.expert_count is missing or 0");
    hp.n_ff_shexp = keys.required("expert_shared_feed_forward_length", 1, 1 << 18);
    delta_net_hybrid(keys, hp, Moe{.renormalize = true, .shared_expert = true});
}

const Registration registered{{"qwen35moe", build}};

}  // namespace

}  // namespace strata::model
