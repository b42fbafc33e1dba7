// model/archs/lfm2moe.cpp — LFM2-MoE (LFM2-8B-A1B): the LFM2 hybrid layers (short_conv_hybrid)
// whose FFN after the first leading_dense_block_count layers is a mixture of experts routed
// by sigmoids, chosen with the selection bias exp_probs_b, their weights renormalized.
#include <stdexcept>

#include "model/arch.h"

namespace strata::model {
namespace {

constexpr int64_t kSigmoidGating = 2;  // llama.cpp's expert_gating_func for a sigmoid router

void build(const Keys& keys, HParams& hp) {
    if (hp.n_expert == 0) throw std::runtime_error("model metadata: lfm2moe.expert_count is missing or 0");
    if (keys.optional("expert_gating_func", kSigmoidGating, 0, 3) != kSigmoidGating)
        throw std::runtime_error("model metadata: lfm2moe.expert_gating_func is not 2 (sigmoid; the only router strata runs for lfm2moe)");
    const int64_t dense = keys.optional("leading_dense_block_count", 0, 0, hp.n_layer);
    short_conv_hybrid(keys, hp, dense, Moe{.renormalize = true, .gating = Gating::Sigmoid});
}

const Registration registered{{"lfm2moe", build}};

}  // namespace

}  // namespace strata::model
