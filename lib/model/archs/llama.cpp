// model/archs/llama.cpp — Llama 1/2/3 and everything converted as "llama" (Mistral,
// TinyLlama, SmolLM, llama2.c; Mixtral): pre-norm blocks, optional q/k/v biases, normal RoPE
// (rope_freqs and linear/YaRN scaling come with the shared keys), SiLU-gated FFN or mixture of experts.
// llama.cpp ignores llama.attention.sliding_window (Mistral 7B runs with full attention
// there), and so does this builder.
#include "model/arch.h"

namespace strata::model {
namespace {

// With expert_count (Mixtral) the FFN is a mixture of experts, their weights renormalized.
void build(const Keys&, HParams& hp) {
    const Block ffn = hp.n_expert > 0 ? Block{Moe{}} : Block{GatedFfn{}};
    hp.layers.assign(hp.n_layer, pre_norm({.qkv_bias = Presence::Optional}, ffn));
}

const Registration registered{{"llama", build}};

}  // namespace

}  // namespace strata::model
