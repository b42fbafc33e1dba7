// model/archs/granite.cpp — IBM Granite 3.x (dense): the llama block with four
// multipliers: embeddings x embedding_scale, each block's output x residual_scale before
// the residual add, attention scores x attention.scale, logits / logit_scale.
#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys& k, HParams& hp) {
    hp.embd_scale = k.required_real("embedding_scale", 1e-6, 1e6);
    const float residual = k.required_real("residual_scale", 1e-6, 1e6);
    const float attn = k.required_real("attention.scale", 0, 1e6);  // 0: 1/sqrt(head_dim)
    hp.logit_scale = 1.0f / k.required_real("logit_scale", 1e-6, 1e6);
    hp.layers.assign(hp.n_layer, pre_norm({.qkv_bias = Presence::Optional, .kq_scale = attn}, GatedFfn{}, residual));
}

const Registration registered{{"granite", build}};

}  // namespace

}  // namespace strata::model
