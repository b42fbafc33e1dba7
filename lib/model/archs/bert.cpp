// model/archs/bert.cpp — BERT encoders (all-MiniLM-L6-v2, bge-small, ...: embedding models):
// token + learned position + token-type embeddings through a LayerNorm, post-norm blocks
// (attention with q/k/v/output biases, not causal, no RoPE; then a GELU feed-forward with
// biases; a LayerNorm with bias after each residual add), no output head: the last layer's
// states are pooled into embeddings as bert.pooling_type says.
#include "model/arch.h"

namespace strata::model {
namespace {

// x = layernorm(x + attn(x)); x = layernorm(x + mlp(x)).
void build(const Keys& k, HParams& hp) {
    hp.causal = false;
    hp.learned_positions = true;
    hp.output_head = false;
    hp.n_rot = 0;
    hp.norm_eps = k.required_real("attention.layer_norm_epsilon", 0, 1);
    const Attention attention{.qkv_bias = Presence::Required, .out_bias = true};
    hp.layers.assign(hp.n_layer, Layer{{{.block = attention, .after = layer_norm(AttnOutNorm, AttnOutNormB)},
                                        {.block = Mlp{}, .after = layer_norm(LayerOutNorm, LayerOutNormB)}}});
}

const Registration registered{{"bert", build}};

}  // namespace

}  // namespace strata::model
