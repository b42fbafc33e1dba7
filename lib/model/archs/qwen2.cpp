// model/archs/qwen2.cpp — Qwen2 / Qwen2.5: the llama block with q/k/v biases and NEOX RoPE.
#include "model/arch.h"

namespace strata::model {
namespace {

constexpr TensorNeed kTensors[] = {{AttnNorm}, {Wq}, {Wk}, {Wv}, {Bq}, {Bk}, {Bv}, {Wo}, {FfnNorm}, {Gate}, {Up}, {Down}};

void hparams(const Keys&, HParams& hp) { hp.rope_style = RopeStyle::Neox; }

}  // namespace

const Builder kQwen2{"qwen2", hparams, kTensors, pre_norm_layer};

}  // namespace strata::model
