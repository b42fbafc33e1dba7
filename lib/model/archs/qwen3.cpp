// model/archs/qwen3.cpp — Qwen3 (dense): the llama block without biases, with a per-head
// RMSNorm of q and k before NEOX RoPE.
#include "model/arch.h"

namespace strata::model {
namespace {

constexpr TensorNeed kTensors[] = {{AttnNorm}, {Wq}, {Wk}, {Wv}, {QNorm}, {KNorm}, {Wo}, {FfnNorm}, {Gate}, {Up}, {Down}};

void hparams(const Keys&, HParams& hp) {
    hp.rope_style = RopeStyle::Neox;
    hp.qk_norm = QkNorm::PerHead;
}

}  // namespace

const Builder kQwen3{"qwen3", hparams, kTensors, pre_norm_layer};

}  // namespace strata::model
