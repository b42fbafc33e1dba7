// model/arch.h — the architecture registry: one Builder per family, each defined in its
// own file under lib/model/archs/. A builder reads its family's keys and states, in one
// function, the model-wide options and what every layer does (HParams::layers: residual
// branches of the blocks of model/layer.h), which the forward pass runs as stated.
// Adding a family is adding a builder file, which registers itself (`const Registration
// registered{{"name", build}};`), and its line in meson.build (the builder files are linked
// whole, so no registration is dropped); nothing outside lib/model/ knows architecture
// names. Must not touch: tensor data, kernels, running layers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/hparams.h"

namespace strata::model {

struct Builder {
    std::string_view name;                           // general.architecture
    void (*build)(const Keys& keys, HParams& hp);    // the family's keys, options and layers
};

// A builder file's registration of its builder, at static initialization.
struct Registration {
    explicit Registration(Builder builder);
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
// "bert, gemma2, ..." (in alphabetical order) for messages and documentation.
std::string arch_names();

// The layer shapes families share.
// x += scale * attn(norm(x)); x += scale * ffn(norm(x))  — llama, qwen2/3, phi3, granite, MoE.
Layer pre_norm(const Attention& attention, const Block& ffn, float scale = 1.0f);
// x += post_norm(attn(norm(x))); x += post_norm(ffn(norm(x)))  — gemma2, gemma3.
Layer sandwich_norm(const Attention& attention, const Block& ffn);

// Gemma's shared options (archs/gemma2.cpp): embeddings x sqrt(n_embd); attention with NEOX
// RoPE and q scaled before the dot by 1/sqrt(n_embd/n_head) on the 27B (n_layer ==
// layers_27b, as llama.cpp tells it apart), by 1/sqrt(head_dim) otherwise.
Attention gemma_attention(HParams& hp, int32_t layers_27b);
// Qwen3.5's hybrid layers (archs/qwen35.cpp, qwen35moe.cpp): every full_attention_interval-th
// layer gated attention (per-head q/k norms, NEOX-ordered multi-section RoPE over the text
// positions), the others Gated DeltaNet (ssm.* keys), each followed by `ffn` behind
// post_attention_norm.
void delta_net_hybrid(const Keys& keys, HParams& hp, const Block& ffn);
// LFM2's hybrid layers (archs/lfm2.cpp, lfm2moe.cpp): a gated short convolution of
// shortconv.l_cache taps where the layer's attention.head_count_kv entry is 0, attention with
// per-head q/k norms and NEOX RoPE elsewhere; each followed by a SiLU-gated FFN in the first
// `dense` layers, by `ffn` after them; the final norm is token_embd_norm.
void short_conv_hybrid(const Keys& keys, HParams& hp, int64_t dense, const Block& ffn);
// Whether layer l slides its window under llama.cpp's set_swa_pattern(n): l % n < n - 1
// (n = 0: every layer).
bool swa_layer(int l, int32_t n);

}  // namespace strata::model
