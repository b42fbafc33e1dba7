// model/archs/qwen2.cpp — Qwen2 / Qwen2.5: the llama block with q/k/v biases and NEOX RoPE.
#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys&, HParams& hp) {
    hp.layers.assign(hp.n_layer, pre_norm({.qkv_bias = Presence::Required, .rope = RopeStyle::Neox}, GatedFfn{}));
}

const Registration registered{{"qwen2", build}};

}  // namespace

}  // namespace strata::model
