// model/archs/lfm2.cpp — LFM2 (Liquid AI): gated short convolutions in the layers whose
// attention.head_count_kv is 0, grouped-query attention with per-head q/k norms and NEOX RoPE
// in the others, a SiLU-gated FFN after each (short_conv_hybrid); the final norm is the
// file's token_embd_norm.
#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys& keys, HParams& hp) { short_conv_hybrid(keys, hp, hp.n_layer, GatedFfn{}); }

const Registration registered{{"lfm2", build}};

}  // namespace

}  // namespace strata::model
