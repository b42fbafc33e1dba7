// model/archs/bert.cpp — BERT encoders (all-MiniLM-L6-v2, bge-small, ...: embedding models):
// token + learned position + token-type embeddings through a LayerNorm, post-norm blocks
// (attention with q/k/v/output biases, not causal, no RoPE; then a GELU feed-forward with
// biases; a LayerNorm with bias after each residual add), no output head: the last layer's
// states are pooled into embeddings as bert.pooling_type says.
#include "model/arch.h"

namespace strata::model {
namespace {

constexpr TensorNeed kTensors[] = {{Wq}, {Wk}, {Wv}, {Bq}, {Bk}, {Bv}, {Wo}, {Bo}, {AttnOutNorm}, {AttnOutNormB},
                                   {Up}, {UpB}, {Down}, {DownB}, {LayerOutNorm}, {LayerOutNormB}};

void hparams(const Keys& k, HParams& hp) {
    hp.causal = false;
    hp.learned_positions = true;
    hp.output_head = false;
    hp.n_rot = 0;
    hp.ffn_act = FfnAct::GeluTanh;
    hp.norm_eps = k.required_real("attention.layer_norm_epsilon", 0, 1);
}

}  // namespace

const Builder kBert{"bert", hparams, kTensors, post_layer_norm_layer};

}  // namespace strata::model
