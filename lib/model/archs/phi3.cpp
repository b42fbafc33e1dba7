// model/archs/phi3.cpp — Phi-3 / 3.5 / 4-mini: fused attn_qkv and fused gate/up (ffn_up
// holds both), NEOX RoPE (possibly partial), q scaled by 1/sqrt(head_dim) before the dot,
// LongRoPE: rope_factors_long when the sequence's context (its cache capacity, padded to
// 256 as llama.cpp pads n_ctx) exceeds rope.scaling.original_context_length, else
// rope_factors_short, and
// rope.scaling.attn_factor on cos/sin. llama.cpp ignores phi3.attention.sliding_window; so
// does this builder.
#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys& k, HParams& hp) {
    hp.longrope = true;
    hp.rope.attn_factor = hp.rope_swa.attn_factor = k.real("rope.scaling.attn_factor", 1.0, 1e-3, 1e3);
    const Attention attention{.fused_qkv = true, .rope = RopeStyle::Neox, .scale_q = true};
    hp.layers.assign(hp.n_layer, pre_norm(attention, GatedFfn{.fused = true}));
}

const Registration registered{{"phi3", build}};

}  // namespace

}  // namespace strata::model
