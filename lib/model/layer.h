// model/layer.h — what one layer of a model does, as its family's builder states it
// (lib/model/archs/): a list of residual branches, each a block (attention with its
// options, a gated feed-forward, a mixture of experts, a plain feed-forward, a Gated
// DeltaNet recurrent mixer, a gated short convolution, a per-layer input, blocks run side
// by side) between the norms around it; the tensors ("blk.N.<name>") each block and norm
// reads, with their shapes; and the words `strata-gguf info` describes them with. The forward pass runs
// these values (blocks.cpp); a new kind of block is a new type in Block, its tensors and
// words (layer.cpp) and how it runs (blocks.cpp).
// Must not touch: running the blocks, tensor data, architecture names.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace strata::model {

struct HParams;

// The tensors a layer may have ("blk.N.<name>"; names in model.cpp).
enum Slot : int {
    AttnNorm, Wq, Wk, Wv, Wqkv, Wo, Bq, Bk, Bv, QNorm, KNorm, PostAttnNorm,
    FfnNorm, Gate, Up, Down, PostFfnNorm,
    Router, GateExps, UpExps, DownExps,  // mixture of experts
    Bo, AttnOutNorm, AttnOutNormB, UpB, DownB, LayerOutNorm, LayerOutNormB,  // post-norm encoders (LayerNorm with bias)
    Sinks, RouterB, GateExpsB, UpExpsB, DownExpsB,  // attention sinks; router and expert biases
    AttnGate, SsmConv, SsmDt, SsmA, SsmAlpha, SsmBeta, SsmNorm, SsmOut,      // Gated DeltaNet (with Wqkv)
    GateInpShexp, GateShexp, UpShexp, DownShexp,                            // a mixture's shared expert
    ConvIn, ConvKernel, ConvOut,                                            // a gated short convolution
    ExpProbsB,                                                              // a sigmoid router's selection bias
    RouterScale, GateUpExps, DownExpsScale,              // a router's input scale, fused gate/up experts, experts' output scales
    PreFfnNorm2, PostFfnNorm1, PostFfnNorm2,             // norms around a dense FFN and experts side by side
    PerLayerGate, PerLayerProj, PerLayerPostNorm,        // a per-layer input
    LayerOutScale,                                       // one value scaling the layer's output
    kSlots
};

enum class RopeStyle {
    Normal,  // rotate adjacent pairs (2i, 2i+1) — llama (the converter permuted Q/K for it)
    Neox,    // rotate (i, i + n_rot/2) — qwen2 and most later families
};

// Per-head RMSNorm of q and k (qwen3, gemma3), or over the whole projection (olmo2).
enum class QkNorm { None, PerHead, Whole };

// The gated feed-forward's activation: act(gate) * up. SwigluOai, OpenAI's clamped
// SwiGLU: min(gate, 7) * sigmoid(1.702 min(gate, 7)) * (clamp(up, -7, 7) + 1), as ggml_swiglu_oai.
enum class FfnAct { Silu, GeluTanh, SwigluOai };

// Whether a layer's file has some tensors: never, when it has them, always.
enum class Presence { None, Optional, Required };

// RMSNorm with a weight (rms_eps), or LayerNorm with a weight and a bias (norm_eps);
// none when weight is kSlots.
struct Norm {
    Slot weight = kSlots;
    Slot bias = kSlots;
    explicit operator bool() const { return weight != kSlots; }
};
constexpr Norm rms_norm(Slot weight) { return {weight}; }
constexpr Norm layer_norm(Slot weight, Slot bias) { return {weight, bias}; }

// Self-attention: q/k/v projections, q/k norms, RoPE (n_rot pairs; none when 0), the F16
// KV cache, grouped-query attention (causal unless HParams::causal is false), the output
// projection. Its shape is the model's unless the builder gives its own (HParams::from_gguf
// fills in what it left 0).
struct Attention {
    int32_t n_head = 0, n_head_kv = 0, head_dim = 0;  // 0: the model's (attention.head_count_kv per layer)
    bool fused_qkv = false;                // one attn_qkv matrix split as [q | k | v]
    Presence qkv_bias = Presence::None;    // attn_{q,k,v}.bias
    bool out_bias = false;                 // attn_output.bias
    QkNorm qk_norm = QkNorm::None;         // attn_{q,k}_norm
    RopeStyle rope = RopeStyle::Normal;
    float kq_scale = 0;                    // scale of the scores; 0: 1/sqrt(head_dim)
    bool scale_q = false;                  // kq_scale multiplies q before the F16 dot instead
    float softcap = 0;                     // scores -> cap tanh(scores / cap); 0: off
    int32_t window = 0;                    // > 0: attend to the last `window` positions only (the
                                           // cache keeps only them), RoPE from HParams::rope_swa
    bool sinks = false;                    // attn_sinks: one logit per head added to the softmax's
                                           // denominator (weighting no value)
    bool gated = false;                    // attn_q holds per head [q | gate] (2 q_dim rows); the
                                           // output is multiplied by sigmoid(gate) before attn_output
    Presence v_proj = Presence::Required;  // Optional: without attn_v, v is the k projection
    bool v_norm = false;                   // v RMS-normalized per head, without a weight
    int32_t kv_source = -1;                // >= 0: attends to that earlier layer's keys and values
                                           // (kept once, there) and projects no k, v of its own

    int32_t q_dim() const { return n_head * head_dim; }
    int32_t kv_dim() const { return n_head_kv * head_dim; }
};

// down(act(gate) * up), n_ff wide.
struct GatedFfn {
    FfnAct act = FfnAct::Silu;
    bool fused = false;  // ffn_up holds [gate; up] (2 n_ff rows), no ffn_gate
    int32_t n_ff = 0;    // 0: the layer's feed_forward_length (filled in by HParams::from_gguf)
};

// How the router's logits weight the experts: a softmax over all of them, the best
// n_expert_used kept; or the n_expert_used largest logits, then a softmax over those only;
// or (Sigmoid, LFM2-MoE) a sigmoid of each, the n_expert_used largest of sigmoid plus the
// selection bias exp_probs_b chosen, each weighted by its sigmoid without the bias.
enum class Gating { Softmax, SoftmaxChosen, Sigmoid };

// A router over n_expert experts, the n_expert_used best per token each running a gated FFN
// n_ff_exp wide, their outputs summed with the router's weights.
// With shared_expert, a gated FFN HParams::n_ff_shexp wide runs on every token too, its
// output scaled by sigmoid(x . ffn_gate_inp_shexp).
// With scaled_router (Gemma 4), the router reads rms_norm(x) / sqrt(n_embd) *
// ffn_gate_inp.scale of the residual stream x instead of the block's input, and each
// expert's output is scaled by its ffn_down_exps.scale (when the file has them).
struct Moe {
    FfnAct act = FfnAct::Silu;
    bool renormalize = true;  // the chosen experts' weights are scaled to sum 1
    Gating gating = Gating::Softmax;
    bool biases = false;      // ffn_gate_inp.bias and each expert's gate, up and down biases
    bool shared_expert = false;
    // Optional: the file holds each expert's gate and up either as ffn_gate_exps and
    // ffn_up_exps or as one ffn_gate_up_exps ([gate; up], 2 n_ff_exp rows an expert).
    Presence fused_gate_up = Presence::None;
    bool scaled_router = false;
};

// down(gelu(up(x) + up_b)) + down_b (encoders).
struct Mlp {};

// Gated DeltaNet (linear attention with a recurrent state; shapes in HParams::ssm): a fused
// [q | k | v] projection through a causal depthwise convolution (its last d_conv - 1 inputs
// kept as state) and SiLU; L2-normalised q and k; per value head a d_state x d_state state
// decayed by exp(softplus(alpha + dt_bias) * A) and updated by the delta rule with
// beta = sigmoid(beta projection); the read-out RMS-normalised per head, gated by silu(z)
// (attn_gate) and projected by ssm_out.
struct DeltaNet {};

// A gated short convolution (LFM2): in_proj to [b | c | x] (n_embd each), b * x through a
// causal depthwise convolution over it and the last HParams::shortconv - 1 of them (kept as
// state), c times its output, out_proj.
struct ShortConv {};

// A per-layer input (Gemma's E models): per_layer_proj(gelu(per_layer_inp_gate(in)) * the
// layer's slice of the per-layer inputs), HParams::n_embd_per_layer wide. The per-layer
// inputs of a token, n_layer slices, are made once per pass from its row of
// per_layer_token_embd (x sqrt(n_embd_per_layer)) and per_layer_model_proj of its scaled
// embedding (x 1/sqrt(n_embd), RMS-normalized by per_layer_proj_norm), summed and scaled by
// 1/sqrt(2), as llama.cpp's project_per_layer_inputs.
struct PerLayerInput {};

struct Branch;
// Branches run side by side on the same input (the stream x: the branch holding them has
// no pre norm), each part's post(block(pre(x))) * scale summed (Gemma 4: a dense FFN beside
// the experts). A part has no `after`.
struct Parallel {
    std::vector<Branch> parts;
};

using Block = std::variant<Attention, GatedFfn, Moe, Mlp, DeltaNet, ShortConv, PerLayerInput, Parallel>;

// One residual branch: x = after(x + scale * post(block(pre(x)))).
struct Branch {
    Norm pre;
    Block block;
    Norm post;
    float scale = 1.0f;
    Norm after;
};

struct Layer {
    std::vector<Branch> branches;
    Presence out_scale = Presence::None;  // blk.N.layer_output_scale: x *= it after the branches
};

// The first block of type B among `branches` (Parallel's parts included), or null.
template <class B>
const B* find_block(const std::vector<Branch>& branches) {
    for (const Branch& b : branches) {
        if (const B* found = std::get_if<B>(&b.block)) return found;
        if (const auto* side = std::get_if<Parallel>(&b.block))
            if (const B* found = find_block<B>(side->parts)) return found;
    }
    return nullptr;
}

// The first block of type B in any layer, or null.
template <class B>
const B* find_block(const std::vector<Layer>& layers) {
    for (const Layer& layer : layers)
        if (const B* found = find_block<B>(layer.branches)) return found;
    return nullptr;
}

// f(block) for every block of type B among `branches`, Parallel's parts included.
template <class B, class Branches, class F>
void for_each_block(Branches& branches, F&& f) {
    for (auto& b : branches) {
        if (auto* found = std::get_if<B>(&b.block)) f(*found);
        if (auto* side = std::get_if<Parallel>(&b.block)) for_each_block<B>(side->parts, f);
    }
}

// A tensor's expected {ne0, ne1, ne2}: ne1 = 0 a vector, ne2 = 0 a matrix.
struct Shape {
    int64_t ne0, ne1 = 0, ne2 = 0;
};

// One tensor of a layer: its slot, its shape, whether the file must have it, and whether
// a 2-D one is F32 values (a convolution's kernel) rather than a weight matrix.
struct TensorNeed {
    Slot slot;
    Shape shape;
    bool required = true;
    bool f32 = false;
};

// The tensors hp.layers[l] reads, in the order its branches read them.
std::vector<TensorNeed> layer_needs(const HParams& hp, int l);
// What the model's layers use beyond a plain llama layer (each once), for `info`.
std::vector<std::string> layer_features(const HParams& hp);
// Floats of recurrent state hp.layers[l] keeps per sequence (0: none; it keeps KV instead).
int64_t layer_state_floats(const HParams& hp, int l);

}  // namespace strata::model
