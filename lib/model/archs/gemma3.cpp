// model/archs/gemma3.cpp — Gemma 3 (text): Gemma 2's sandwich-norm block without
// soft-capping, with a per-head RMSNorm of q and k, a sliding window on 5 of every 6 layers
// (attention.sliding_window_pattern when present), local layers on their own RoPE base
// (rope.freq_base_swa, default 10000) without scaling, global layers with the file's scaling.
#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys& k, HParams& hp) {
    const int32_t window = k.required("attention.sliding_window", 1, 1 << 24);
    const int32_t pattern = k.optional("attention.sliding_window_pattern", 6, 0, hp.n_layer + 1);
    hp.rope_swa = Rope{.base = k.real("rope.freq_base_swa", 10000.0, 1, 1e12), .n_ctx_orig = hp.rope.n_ctx_orig};
    Attention attention = gemma_attention(hp, 62);
    attention.qk_norm = QkNorm::PerHead;
    for (int l = 0; l < hp.n_layer; ++l) {
        attention.window = swa_layer(l, pattern) ? window : 0;
        hp.layers.push_back(sandwich_norm(attention, GatedFfn{.act = FfnAct::GeluTanh}));
    }
}

const Registration registered{{"gemma3", build}};

}  // namespace

}  // namespace strata::model
