// model/arch.h — the architecture registry: one Builder per family, each defined in its
// own file under lib/model/archs/. A builder reads its family's hyperparameters, lists the
// tensors of a layer, and composes a layer from the shared blocks (model/blocks.h).
// Adding a family is adding a builder file and its line in arch.cpp; nothing outside
// lib/model/ knows architecture names. Must not touch: tensor data, kernels.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/blocks.h"
#include "model/hparams.h"

namespace strata::model {

struct Builder {
    std::string_view name;                                  // general.architecture
    void (*hparams)(const Keys& keys, HParams& hp);         // the family's keys and options
    std::span<const TensorNeed> tensors;                    // the tensors of every layer
    void (*layer)(Blocks& b, const LayerWeights& w, int l);  // one transformer block
};

// One tensor of a layer as a file of the family holds it: "blk.N.<name>", its shape (1 to
// 3 dimensions, ne[0] first) and whether the family requires it (strata-gguf synth writes
// the required ones).
struct LayerTensor {
    std::string name;
    std::vector<int64_t> ne;
    bool required;
};
std::vector<LayerTensor> layer_tensors(const HParams& hp, int layer);

// The builder for `name`, or null for an architecture strata cannot run.
const Builder* find_builder(std::string_view name);
// "llama, qwen2, ..." for messages and documentation.
std::string arch_names();

// Gemma's shared options (archs/gemma2.cpp): embeddings x sqrt(n_embd), GELU(tanh) FFN, q
// scaled before the dot by 1/sqrt(n_embd/n_head) on the 27B (n_layer == layers_27b, as
// llama.cpp tells it apart), by 1/sqrt(head_dim) otherwise.
void gemma_scales(HParams& hp, int32_t layers_27b);

// The builders (one per file in archs/).
extern const Builder kLlama, kQwen2, kQwen3, kGemma2, kGemma3, kPhi3, kGranite, kOlmo2, kQwen3Moe, kOlmoe, kBert;

}  // namespace strata::model
