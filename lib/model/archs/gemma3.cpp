// model/archs/gemma3.cpp — Gemma 3 (text): Gemma 2's sandwich-norm block without
// soft-capping, with a per-head RMSNorm of q and k, a sliding window on 5 of every 6 layers
// (attention.sliding_window_pattern when present), local layers on their own RoPE base
// (rope.freq_base_swa, default 10000) without scaling, global layers with the file's scaling.
#include "model/arch.h"

namespace strata::model {
namespace {

constexpr TensorNeed kTensors[] = {{AttnNorm}, {Wq}, {Wk}, {Wv}, {QNorm}, {KNorm}, {Wo}, {PostAttnNorm},
                                   {FfnNorm},  {Gate}, {Up}, {Down}, {PostFfnNorm}};

void hparams(const Keys& k, HParams& hp) {
    hp.rope_style = RopeStyle::Neox;
    hp.qk_norm = QkNorm::PerHead;
    hp.n_swa = k.required("attention.sliding_window", 1, 1 << 24);
    hp.set_swa_pattern(k.optional("attention.sliding_window_pattern", 6, 0, hp.n_layer + 1));
    hp.rope_swa = Rope{.base = k.real("rope.freq_base_swa", 10000.0, 1, 1e12), .n_ctx_orig = hp.rope.n_ctx_orig};
    gemma_scales(hp, 62);
}

}  // namespace

const Builder kGemma3{"gemma3", hparams, kTensors, sandwich_norm_layer};

}  // namespace strata::model
