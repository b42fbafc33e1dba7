// model/archs/gemma2.cpp — Gemma 2: embeddings x sqrt(n_embd), norms before and after
// attention and FFN, NEOX RoPE, q scaled before the dot (1/sqrt(n_embd/n_head) for the
// 46-layer 27B, 1/sqrt(head_dim) otherwise, as llama.cpp), attention scores and logits
// soft-capped, a sliding window on even layers, GELU(tanh)-gated FFN, tied embeddings.
// The converter already added Gemma's +1 to every norm weight.
#include <cmath>

#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys& k, HParams& hp) {
    const int32_t window = k.required("attention.sliding_window", 1, 1 << 24);
    hp.final_softcap = k.real("final_logit_softcapping", 30.0, 1e-3, 1e6);
    Attention attention = gemma_attention(hp, 46);
    attention.softcap = k.real("attn_logit_softcapping", 50.0, 1e-3, 1e6);
    for (int l = 0; l < hp.n_layer; ++l) {
        attention.window = swa_layer(l, 2) ? window : 0;
        hp.layers.push_back(sandwich_norm(attention, GatedFfn{.act = FfnAct::GeluTanh}));
    }
}

const Registration registered{{"gemma2", build}};

}  // namespace

Attention gemma_attention(HParams& hp, int32_t layers_27b) {
    hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
    const int32_t d = hp.n_layer == layers_27b ? hp.n_embd / hp.n_head : hp.head_dim;
    return {.rope = RopeStyle::Neox, .kq_scale = 1.0f / std::sqrt(static_cast<float>(d)), .scale_q = true};
}

}  // namespace strata::model
