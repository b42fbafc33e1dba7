// model/archs/qwen35.cpp — Qwen3.5 (dense): Gated DeltaNet layers with gated full attention
// every full_attention_interval-th layer (delta_net_hybrid), a SiLU-gated FFN after each.
#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys& keys, HParams& hp) { delta_net_hybrid(keys, hp, GatedFfn{}); }

const Registration registered{{"qwen35", build}};

}  // namespace

}  // namespace strata::model
