// model/archs/gpt_oss.cpp — gpt-oss (OpenAI's open-weight MoE, llama.cpp's LLM_ARCH_OPENAI_MOE):
// q/k/v/o biases, NEOX RoPE (YaRN in the released files, the same on every layer), scores
// scaled by 1/sqrt(n_rot), a per-head attention sink, a sliding window on even layers
// (attention.sliding_window_pattern when present); the FFN after post_attention_norm is a
// mixture of experts with router and expert biases, the chosen experts' weights a softmax
// over their logits, and the clamped SwiGLU.
#include <cmath>
#include <stdexcept>

#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys& k, HParams& hp) {
    if (hp.n_expert == 0) throw std::runtime_error("model metadata: gpt-oss.expert_count is missing or 0");
    const int32_t window = k.required("attention.sliding_window", 1, 1 << 24);
    const int32_t pattern = k.optional("attention.sliding_window_pattern", 2, 0, hp.n_layer + 1);
    Attention attention{.qkv_bias = Presence::Required, .out_bias = true, .rope = RopeStyle::Neox,
                        .kq_scale = 1.0f / std::sqrt(static_cast<float>(hp.n_rot)), .sinks = true};
    const Moe experts{.act = FfnAct::SwigluOai, .renormalize = false, .gating = Gating::SoftmaxChosen, .biases = true};
    for (int l = 0; l < hp.n_layer; ++l) {
        attention.window = swa_layer(l, pattern) ? window : 0;
        hp.layers.push_back({{{.pre = rms_norm(AttnNorm), .block = attention}, {.pre = rms_norm(PostAttnNorm), .block = experts}}});
    }
}

const Registration registered{{"gpt-oss", build}};

}  // namespace

}  // namespace strata::model
