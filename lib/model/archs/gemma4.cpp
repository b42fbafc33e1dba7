// model/archs/gemma4.cpp — Gemma 4 (text), as llama.cpp runs it: embeddings x sqrt(n_embd);
// sliding-window and global layers (attention.sliding_window_pattern, one flag per layer)
// with their own head sizes (key_length_swa / key_length), kv heads (head_count_kv per
// layer), rotated dimensions and RoPE bases; the global layers' angles divided by
// rope_freqs; per-head q/k norms, v normalised without a weight, scores not scaled; global
// layers without attn_v use k as v; the last attention.shared_kv_layers layers read the
// keys and values of the last earlier layer of their kind. Sandwich norms around attention
// and the GELU-gated FFN; on MoE layers (ffn_gate_inp present) that FFN runs beside the
// experts, each side normalised after, the router reading the stream. The E models add a
// per-layer input (embedding_length_per_layer_input) after the FFN; layer_output_scale
// scales a layer's output; the logits are soft-capped (30 when the key is absent).
#include <cmath>
#include <stdexcept>

#include "model/arch.h"

namespace strata::model {
namespace {

// The FFN branch of layer l: the dense GELU FFN, or on MoE layers it and the experts side by
// side (ffn_norm -> FFN -> post_ffw_norm_1, pre_ffw_norm_2 -> experts -> post_ffw_norm_2),
// post_ffw_norm over their sum.
Branch ffn_branch(const HParams& hp) {
    const GatedFfn dense{.act = FfnAct::GeluTanh};
    if (hp.n_expert == 0) return {.pre = rms_norm(FfnNorm), .block = dense, .post = rms_norm(PostFfnNorm)};
    const Moe experts{.act = FfnAct::GeluTanh, .renormalize = true, .gating = Gating::Softmax, .fused_gate_up = Presence::Optional, .scaled_router = true};
    return {.block = Parallel{{{.pre = rms_norm(FfnNorm), .block = dense, .post = rms_norm(PostFfnNorm1)},
                               {.pre = rms_norm(PreFfnNorm2), .block = experts, .post = rms_norm(PostFfnNorm2)}}},
            .post = rms_norm(PostFfnNorm)};
}

// The layer each layer reads keys and values from: its own, or for the last `shared`
// layers the last earlier layer of the same kind that keeps its own.
int32_t kv_source(const std::vector<int32_t>& sliding, int l, int first_shared) {
    if (l < first_shared) return -1;
    for (int s = first_shared - 1; s >= 0; --s)
        if (sliding[size_t(s)] == sliding[size_t(l)]) return s;
    throw std::runtime_error("model metadata: gemma4 layer " + std::to_string(l) + " shares keys and values, but no earlier layer of its kind has them");
}

void build(const Keys& k, HParams& hp) {
    const int32_t window = k.required("attention.sliding_window", 1, 1 << 24);
    const std::vector<int32_t> sliding = k.per_layer("attention.sliding_window_pattern", 0, 0, 1, hp.n_layer);
    const int32_t first_shared = hp.n_layer - k.optional("attention.shared_kv_layers", 0, 0, hp.n_layer - 1);
    const int32_t hd_swa = k.optional("attention.key_length_swa", hp.head_dim, 2, 1024);
    if (k.optional("attention.value_length_swa", hd_swa, 2, 1024) != hd_swa || k.optional("attention.value_length", hp.head_dim, 2, 1024) != hp.head_dim)
        throw std::runtime_error("model metadata: gemma4 needs value_length = key_length (and the same for sliding layers)");
    hp.final_softcap = k.real("final_logit_softcapping", 30.0, 1e-3, 1e6);
    hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
    hp.n_embd_per_layer = k.optional("embedding_length_per_layer_input", 0, 0, 1 << 14);
    hp.rope_swa = Rope{.base = k.real("rope.freq_base_swa", 10000.0, 1, 1e12), .n_ctx_orig = hp.rope.n_ctx_orig,
                       .n_rot = k.optional("rope.dimension_count_swa", hd_swa, 2, hd_swa), .factors = false};
    for (int l = 0; l < hp.n_layer; ++l) {
        const bool swa = sliding[size_t(l)] != 0;
        const Attention attention{.head_dim = swa ? hd_swa : hp.head_dim, .qk_norm = QkNorm::PerHead, .rope = RopeStyle::Neox, .kq_scale = 1.0f,
                                  .window = swa ? window : 0, .v_proj = Presence::Optional, .v_norm = true,
                                  .kv_source = kv_source(sliding, l, first_shared)};
        Layer layer{{{.pre = rms_norm(AttnNorm), .block = attention, .post = rms_norm(PostAttnNorm)}, ffn_branch(hp)}};
        if (hp.n_embd_per_layer > 0) layer.branches.push_back({.block = PerLayerInput{}, .post = rms_norm(PerLayerPostNorm)});
        layer.out_scale = Presence::Optional;
        hp.layers.push_back(std::move(layer));
    }
}

const Registration registered{{"gemma4", build}};

}  // namespace

}  // namespace strata::model
