// model/hparams.h — a model's hyperparameters: the keys every family shares (shapes,
// RoPE base and scaling), read here, and what the family's builder (lib/model/archs/) sets
// from its own keys: the model-wide options (embeddings, sliding-window layers, the output
// head) and what each layer does (model/layer.h); each out-of-range or missing value is an
// error naming its key. Must not touch: tensor data, running the layers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"
#include "model/layer.h"

namespace strata::model {

// How a sequence's hidden states become one embedding (<arch>.pooling_type, llama.cpp's
// numbering): None (the file does not say), their mean, the first token's (CLS), the last's;
// Rank: a reranker's, one token's state (RankHead::token) through its classification head.
enum class Pooling { None = 0, Mean = 1, Cls = 2, Last = 3, Rank = 4 };

// How a reranker (pooling_type rank) scores its input, as llama.cpp's build_pooling: the
// state of one token (Cls: the first, as cross-encoders; Last: the last, as Qwen3-Reranker)
// through the file's classification head — cls.weight/bias then tanh when present,
// cls.output.weight/bias when present — and with `softmax` a softmax over its outputs
// (Qwen3-Reranker's yes/no pair). The score is the first output.
struct RankHead {
    Pooling token = Pooling::Cls;
    bool softmax = false;
};

// How one kind of layer rotates q and k (ggml_rope_ext's parameters).
struct Rope {
    float base = 10000.0f;
    float freq_scale = 1.0f;   // 1 / rope.scaling.factor (linear and YaRN)
    float ext_factor = 0.0f;   // 1 with YaRN: blend interpolated and extrapolated angles
    float attn_factor = 1.0f;  // multiplies cos and sin
    float beta_fast = 32.0f, beta_slow = 1.0f;
    int32_t n_ctx_orig = 0;    // rope.scaling.original_context_length (YaRN ramp, LongRoPE choice)
    int32_t n_rot = 0;         // rotated dimensions; 0 in a builder: HParams::n_rot
    bool factors = true;       // rope_freqs (or LongRoPE's factors) divide the angles
};

struct HParams {
    std::string arch;                 // general.architecture
    std::string name;       // general.name, or the file name
    int32_t n_vocab = 0;
    int32_t n_ctx_train = 0;
    int32_t n_embd = 0;
    int32_t n_layer = 0;
    int32_t n_ff = 0;       // the widest layer's (feed_forward_length may be one per layer)
    int32_t n_head = 0;
    int32_t n_head_kv = 0;  // the most any layer has (attention.head_count_kv may be one per layer)
    int32_t head_dim = 0;   // attention.key_length (= value_length), default n_embd / n_head
    int32_t n_rot = 0;      // rope.dimension_count, default head_dim
    float rms_eps = 1e-5f;
    // Mixture of experts (expert_count > 0): the FFN is n_expert_used of n_expert experts of
    // n_ff_exp rows each, chosen per token by a softmax router over all experts.
    int32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
    Pooling pooling = Pooling::None;  // pooling_type (0-4)
    RankHead rank;                    // with Pooling::Rank (set by the family's builder)
    int32_t n_ff_shexp = 0;           // a mixture's shared expert (expert_shared_feed_forward_length)
    int32_t n_embd_per_layer = 0;     // per-layer inputs' width (PerLayerInput blocks), 0: none
    // Gated DeltaNet layers (ssm.*): conv_kernel, state_size (= the head size of k and v),
    // group_count (k heads), time_step_rank (v heads, a multiple of the k heads).
    struct Ssm {
        int32_t d_conv = 0, d_state = 0, n_k_heads = 0, n_v_heads = 0;
        int64_t key_dim() const { return int64_t(d_state) * n_k_heads; }
        int64_t value_dim() const { return int64_t(d_state) * n_v_heads; }
        int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
    } ssm;
    int32_t shortconv = 0;            // gated short convolutions' kernel length (shortconv.l_cache)

    // Set by the family's builder.
    std::vector<Layer> layers;        // what each layer does
    Rope rope;                        // global layers
    Rope rope_swa;                    // sliding-window layers (default: = rope)
    bool longrope = false;            // rope_factors_long/short, chosen by the sequence's context
    // From the layers: their attention's sliding window (one size for all), which layers use it.
    int32_t n_swa = 0;
    std::vector<bool> swa;
    float final_softcap = 0;          // logits -> cap tanh(logits / cap), 0 = off
    float embd_scale = 1.0f;          // multiplies the embeddings
    float logit_scale = 1.0f;         // multiplies the logits
    std::string output_norm = "output_norm.weight";  // the final norm's tensor
    // Encoders (bert): attention sees the whole sequence, which therefore runs in one pass;
    // learned absolute positions (position_embd plus token_types row 0, then the
    // token_embd_norm LayerNorm); no output head (embeddings only); LayerNorm epsilon.
    bool causal = true;
    bool learned_positions = false;
    bool output_head = true;
    float norm_eps = 1e-12f;

    // The most any layer's attention has (the model's shape when its layers share it).
    int32_t q_dim() const;
    int32_t kv_dim() const;
    bool any_swa() const;
    // A comma-separated list of what this model uses beyond a plain llama layer, for `info`.
    std::string features() const;

    // Throws std::runtime_error naming the key for a missing or out-of-range value, or the
    // architecture when no builder knows it.
    static HParams from_gguf(const gguf::File& f);
};

// Range-checked reads of "<arch>.<key>" for builders (gguf::File names the key in its errors).
class Keys {
public:
    Keys(const gguf::File& f, std::string_view arch) : f_(f), prefix_(std::string(arch) + ".") {}

    int32_t required(std::string_view key, int64_t min, int64_t max) const;
    int32_t optional(std::string_view key, int64_t def, int64_t min, int64_t max) const;
    float real(std::string_view key, double def, double min, double max) const;
    float required_real(std::string_view key, double min, double max) const;
    bool has(std::string_view key) const;
    std::string text(std::string_view key, std::string_view def) const;
    // An integer array (empty when absent).
    std::vector<int64_t> ints(std::string_view key) const;
    // n values in [min, max]: an array of n, or one value for all (def when absent).
    std::vector<int32_t> per_layer(std::string_view key, int64_t def, int64_t min, int64_t max, int n) const;

private:
    std::string full(std::string_view key) const { return prefix_ + std::string(key); }
    const gguf::File& f_;
    std::string prefix_;
};

}  // namespace strata::model
