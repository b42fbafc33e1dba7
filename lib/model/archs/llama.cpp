// model/archs/llama.cpp — Llama 1/2/3 and everything converted as "llama" (Mistral,
// TinyLlama, SmolLM, llama2.c): pre-norm blocks, optional q/k/v biases, normal RoPE
// (rope_freqs and linear/YaRN scaling come with the shared keys), SiLU-gated FFN.
// llama.cpp ignores llama.attention.sliding_window (Mistral 7B runs with full attention
// there), and so does this builder.
#include "model/arch.h"

namespace strata::model {
namespace {

constexpr TensorNeed kTensors[] = {{AttnNorm}, {Wq}, {Wk}, {Wv}, {Bq, false}, {Bk, false}, {Bv, false},
                                   {Wo}, {FfnNorm}, {Gate}, {Up}, {Down}};

void hparams(const Keys&, HParams&) {}

}  // namespace

const Builder kLlama{"llama", hparams, kTensors, pre_norm_layer};

}  // namespace strata::model
