// model/archs/granite.cpp — IBM Granite 3.x (dense): the llama block with four
// multipliers: embeddings x embedding_scale, each block's output x residual_scale before
// the residual add, attention scores x attention.scale, logits / logit_scale.
#include "model/arch.h"

namespace strata::model {
namespace {

constexpr TensorNeed kTensors[] = {{AttnNorm}, {Wq}, {Wk}, {Wv}, {Bq, false}, {Bk, false}, {Bv, false},
                                   {Wo}, {FfnNorm}, {Gate}, {Up}, {Down}};

void hparams(const Keys& k, HParams& hp) {
    hp.embd_scale = k.required_real("embedding_scale", 1e-6, 1e6);
    hp.residual_scale = k.required_real("residual_scale", 1e-6, 1e6);
    const float attn = k.required_real("attention.scale", 0, 1e6);
    if (attn != 0.0f) hp.kq_scale = attn;
    hp.logit_scale = 1.0f / k.required_real("logit_scale", 1e-6, 1e6);
}

}  // namespace

const Builder kGranite{"granite", hparams, kTensors, pre_norm_layer};

}  // namespace strata::model
