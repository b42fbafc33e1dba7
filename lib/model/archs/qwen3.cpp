// model/archs/qwen3.cpp — Qwen3 (dense): the llama block without biases, with a per-head
// RMSNorm of q and k before NEOX RoPE.
#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys&, HParams& hp) {
    hp.layers.assign(hp.n_layer, pre_norm({.qk_norm = QkNorm::PerHead, .rope = RopeStyle::Neox}, GatedFfn{}));
    // Qwen3-Reranker (pooling_type rank): the last token through cls.output (the LM head's
    // "yes" and "no" rows), softmaxed.
    hp.rank = {.token = Pooling::Last, .softmax = true};
}

const Registration registered{{"qwen3", build}};

}  // namespace

}  // namespace strata::model
