// model/blocks.h — the shared building blocks an architecture builder composes a layer
// from (lib/model/archs/): RMS norm, LayerNorm with bias, attention (fused or separate
// q/k/v, biases, q/k norms, RoPE variants, soft-capping, sliding window, causal or not),
// gated feed-forward (SiLU or GELU-tanh, fused gate/up), the plain GELU feed-forward with
// biases, and the residual add; the per-layer tensors they read. Which options a block
// applies comes from HParams, which the family's builder filled.
// Must not touch: file parsing, weight I/O (weights/), architecture names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "model/model.h"
#include "tensor/dtype.h"

namespace strata::model {

// A weight matrix of `rows` rows of k elements (ggml ne = [k, rows]; a 3-D tensor of
// experts, ne = [k, rows per expert, experts], is one matrix of all their rows).
struct Matrix {
    DType type = DType::F32;
    int64_t k = 0;
    int64_t rows = 0;
    size_t row_bytes = 0;
    const uint8_t* data = nullptr;

    // Rows [first, first + n) as a matrix of their own (one expert of a 3-D tensor).
    Matrix slice(int64_t first, int64_t n) const { return {type, k, n, row_bytes, data + size_t(first) * row_bytes}; }
};

// The tensors a transformer block may have ("blk.N.<name>"; names in model.cpp).
enum Slot : int {
    AttnNorm, Wq, Wk, Wv, Wqkv, Wo, Bq, Bk, Bv, QNorm, KNorm, PostAttnNorm,
    FfnNorm, Gate, Up, Down, PostFfnNorm,
    Router, GateExps, UpExps, DownExps,  // mixture of experts: they take the place of Gate, Up, Down
    Bo, AttnOutNorm, AttnOutNormB, UpB, DownB, LayerOutNorm, LayerOutNormB,  // post-norm encoders (LayerNorm with bias)
    kSlots
};

// One tensor of a family's layer: required, or used when the file has it.
struct TensorNeed {
    Slot slot;
    bool required = true;
};

// What one layer's blocks read, resolved to pointers for the current pass (absent: null).
struct LayerWeights {
    int layer = -1;
    const float* attn_norm = nullptr;
    Matrix wq, wk, wv, wqkv, wo;
    const float *bq = nullptr, *bk = nullptr, *bv = nullptr;
    const float *q_norm = nullptr, *k_norm = nullptr;
    const float* post_attn_norm = nullptr;
    const float* ffn_norm = nullptr;
    Matrix gate, up, down;
    const float* post_ffn_norm = nullptr;
    Matrix router, gate_exps, up_exps, down_exps;  // mixture of experts (router absent: dense FFN)
    const float* bo = nullptr;
    const float *attn_out_norm = nullptr, *attn_out_norm_b = nullptr;
    const float *up_b = nullptr, *down_b = nullptr;
    const float *layer_out_norm = nullptr, *layer_out_norm_b = nullptr;
};

struct TokenSlot;
class Rows;

// The blocks over the current pass's tokens. Buffers are [T][n_embd] floats.
class Blocks {
public:
    Blocks(Model::Impl& m, std::span<const TokenSlot> tokens) : m_(m), tokens_(tokens) {}

    Rows& stream();   // the residual stream x
    Rows& scratch();  // a scratch row set h
    // out = rmsnorm(in) * weight (in == out allowed).
    void norm(const Rows& in, const float* weight, Rows& out);
    // out = layernorm(in) * weight + bias (in == out allowed).
    void layer_norm(const Rows& in, const float* weight, const float* bias, Rows& out);
    // Self-attention of layer l on `in`, appending k/v to each token's cache; out may be in.
    void attention(const LayerWeights& w, int l, const Rows& in, Rows& out);
    // Gated feed-forward on `in` (a mixture of experts when the layer has a router); out may be in.
    void ffn(const LayerWeights& w, const Rows& in, Rows& out);
    // Plain feed-forward: down(gelu(up(in) + up_b)) + down_b; out may be in.
    void mlp(const LayerWeights& w, const Rows& in, Rows& out);
    // x += residual_scale * y (y is scaled in place).
    void residual(Rows& y);

private:
    Model::Impl& m_;
    std::span<const TokenSlot> tokens_;
};

// The layer shapes families share.
// x += attn(norm(x)); x += ffn(norm(x))  — llama, qwen2/3, phi3, granite.
void pre_norm_layer(Blocks& b, const LayerWeights& w, int l);
// x += post_norm(attn(norm(x))); x += post_norm(ffn(norm(x)))  — gemma2, gemma3.
void sandwich_norm_layer(Blocks& b, const LayerWeights& w, int l);
// x = layernorm(x + attn(x)); x = layernorm(x + mlp(x))  — bert.
void post_layer_norm_layer(Blocks& b, const LayerWeights& w, int l);

}  // namespace strata::model
