// model/model_impl.h — internal: the state behind Model (tensor bindings, working
// memory, threads) shared by model.cpp (loading), forward.cpp (the pass, per-layer inputs), blocks.cpp,
// moe.cpp and delta_net.cpp (running the layers hp.layers describes) and rope.cpp (rotary
// tables).
// Must not touch: architecture names, what a family's layers are (its builder says).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "kernels/ahead.h"
#include "kernels/threadpool.h"
#include "model/blocks.h"
#include "model/model.h"
#include "tensor/dtype.h"

namespace strata::model {

// Work (in elements) below which an elementwise step runs on the calling thread alone.
constexpr int64_t kSerialWork = 1 << 15;

// body(t) for every row t < T, spread over the pool when the work is large enough.
template <class F>
void for_rows(kernels::ThreadPool& pool, int32_t T, int64_t row_work, F&& body) {
    if (T == 1 || int64_t(T) * row_work < kSerialWork) {
        for (int32_t t = 0; t < T; ++t) body(t);
        return;
    }
    pool.parallel_for(T, 1, [&](int64_t b, int64_t e, int) {
        for (int64_t t = b; t < e; ++t) body(static_cast<int32_t>(t));
    });
}

// g = act(g) * u over n values (blocks.cpp).
void act_mul(FfnAct act, float* g, const float* u, int64_t n);

// Rows of floats in the working memory that count their writes: write() is the only way to
// a writable pointer, and it counts, so a conversion of the rows (ActivationCache) knows
// which contents it was made from. Call write() when the writing starts, after the step
// has read what it converts (never hold its pointer across another step).
class Rows {
public:
    const float* read() const { return data_.data(); }
    float* write() {
        ++version_;
        return data_.data();
    }
    uint64_t version() const { return version_; }
    void resize(size_t n) {
        ++version_;
        data_.resize(n);
    }

private:
    std::vector<float> data_;
    uint64_t version_ = 0;
};

// Activations converted to the dot-product format of a weight type, cached so that
// matrices sharing an input (Q/K/V, gate/up) convert it once. A conversion is reused only
// while its rows are unwritten (their write count is part of its key), so no step has to
// remember to forget it.
class ActivationCache {
public:
    // Rows [row0, row0 + T) of src ([.][k] floats) in format at, and their stride in bytes.
    std::pair<const void*, size_t> get(const Rows& src, int32_t row0, int32_t T, int64_t k, DType at, kernels::ThreadPool& pool);

private:
    // What a conversion was made from.
    struct Key {
        const Rows* src = nullptr;
        uint64_t version = 0;
        int32_t row0 = 0, T = 0;
        int64_t k = 0;
        bool operator==(const Key&) const = default;
    };
    // One slot per type id (only activation formats are used).
    std::array<std::vector<uint8_t>, kDTypeIdLimit> buf_;
    std::array<Key, kDTypeIdLimit> key_{};
};

// Working memory of one pass, sized for `tokens` tokens; grows only when a larger
// pass comes (so steady-state steps allocate nothing).
struct Workspace {
    int32_t tokens = 0;
    Rows x, h, att, gate, up;                         // the stream, a scratch, and what matrices read
    Rows part;                                        // [T][n_embd] a Parallel block's later parts
    // Per-layer inputs (HParams::n_embd_per_layer = P): [T][n_layer * P] of the pass (each
    // thread dequantizes a table row [n_layer * P] of its own), and a PerLayerInput block's
    // gate [T][P].
    std::vector<float> ple;
    Rows ple_gate;
    std::vector<float> q, k, v, qkv;
    std::vector<float> ones;                          // 1s: a norm's or gate's weights where there are none (ones_of)
    // Mixture of experts: router output [T][n_expert], choices and weights [T][used], the
    // tokens' rows grouped by expert [T * used][n_embd] and the experts' outputs (gate and
    // up hold [T * used][n_ff_exp]).
    std::vector<float> moe_logits, moe_weight, moe_out;
    std::vector<float> moe_shared;                    // [T][n_embd] the shared expert's gated output
    Rows moe_in;
    // Gated DeltaNet: [T][conv_dim] q|k|v, [T][value_dim] z, [T][v heads] beta and decay
    // gate, [T][value_dim] the read-out and (a matmul's input) its gated norm.
    std::vector<float> dn_qkv, dn_z, dn_beta, dn_gate, dn_out_f;
    Rows dn_out;
    // Gated short convolution: [T][3 n_embd] b|c|x, [T][n_embd] c times the convolution.
    std::vector<float> sc_bcx;
    Rows sc_y;
    std::vector<int32_t> moe_choice;
    std::array<std::vector<float>, 2> rope_cos, rope_sin;  // [global, sliding-window][token][n_rot/2]
    std::vector<uint8_t> embd_rows;                   // [token] raw embedding rows
    std::vector<int32_t> ids;                         // the pass's token ids
    std::vector<std::vector<uint16_t>> q16;            // per thread: one token's queries in F16
    std::vector<std::vector<float>> attn_q;            // per thread: the same back in F32
    std::vector<float> attn_states;                    // online-softmax states of the attention tasks
    std::vector<int32_t> attn_end;                     // per token: the positions it attends end here
    void ensure(int32_t n_tokens, const HParams& hp, int n_threads);
    // n weights of 1 (an RMS norm without a weight, GELU through the gated kernel).
    const float* ones_of(size_t n) {
        if (ones.size() < n) ones.assign(n, 1.0f);
        return ones.data();
    }
};

// Where one token of the current pass comes from and where its logits go.
struct TokenSlot {
    kv::KvCache* cache;
    int32_t pos;
    int32_t id;
    int32_t out_row;  // logits row, or -1
    int32_t hidden_row = -1;  // hidden-state row, or -1
};

struct Model::Impl {
    std::shared_ptr<const gguf::File> file;
    HParams hp;
    weights::Layout layout;
    std::vector<std::array<int, kSlots>> slot_index;  // per layer: index into layout.layers[l], -1 absent
    std::vector<std::array<const gguf::TensorInfo*, kSlots>> slot_info;
    int g_rope_freqs = -1;  // index into layout.globals, or -1
    int g_rope_long = -1, g_rope_short = -1;  // LongRoPE factors (with hp.longrope)
    int g_pos_embd = -1, g_token_types = -1, g_embd_norm = -1, g_embd_norm_b = -1;  // hp.learned_positions
    int g_cls = -1, g_cls_b = -1, g_cls_out = -1, g_cls_out_b = -1;  // a reranker's head (rank_head.cpp), -1 absent
    int g_ple_proj = -1, g_ple_norm = -1;  // per_layer_model_proj, per_layer_proj_norm (hp.n_embd_per_layer)
    // The head is the last layout layer: [0] the final norm, [1] the output matrix (empty
    // without hp.output_head).
    // Read by the forward pass on the engine thread, which alone replaces it
    // (replace_weights); weights_mu guards the pointer for other threads' stats.
    std::shared_ptr<weights::WeightSource> weights;
    mutable std::mutex weights_mu;
    kernels::ThreadPool pool;
    int32_t max_batch_tokens;
    Workspace ws;
    ActivationCache acts;
    std::atomic<uint64_t> layers_done{0};  // layers computed, all passes together (progress)

    Impl(int n_threads, int32_t max_batch) : pool(n_threads), max_batch_tokens(max_batch) {}

    // model.cpp
    void bind_tensors();
    template <class Require, class AddGlobal>
    void bind_positions(Require& require, AddGlobal& add_global);
    template <class Require, class AddGlobal>
    void bind_per_layer_inputs(Require& require, AddGlobal& add_global);
    // rank_head.cpp: a reranker's classification head, checked and kept as globals.
    void bind_rank_head();
    LayerWeights layer_weights(int l, std::span<const uint8_t* const> ptrs) const;
    // Fills layout.resident_types: each matrix in the layout kernels::resident_layout
    // prefers for the active ISA.
    void choose_resident_types();
    // The type layout.layers[l][j]'s bytes are in: its file type, or the resident layout
    // the weight source rearranged it into (tensor/repack.h).
    DType tensor_type(int l, size_t j) const;

    // forward.cpp
    void run_pass(std::span<const TokenSlot> tokens, float* logits, float* hidden);
    void embed(std::span<const TokenSlot> tokens);
    void output(std::span<const TokenSlot> tokens, float* logits, float* hidden);
    // y = w x for rows [0, T) of x (y must not be x's rows).
    void matmul(const Matrix& w, const Rows& x, int32_t T, float* y, size_t ldy);
    void rms_norm_rows(const float* x, const float* weight, float* y, int32_t T, int64_t n);
    void layer_norm_rows(const float* x, const float* weight, const float* bias, float* y, int32_t T);
    void add_positions(std::span<const TokenSlot> tokens);
    void per_layer_inputs(int32_t T);
    void scale_rows(float* x, size_t n, float s);
    void soft_cap(float* x, size_t n, float cap);

    // blocks.cpp: hp.layers[l] on the residual stream ws.x, ws.h the branches' scratch.
    void run_layer(const LayerWeights& w, std::span<const TokenSlot> tokens);
    void run_branch(const Branch& b, const LayerWeights& w, std::span<const TokenSlot> tokens);
    void norm(const Norm& n, const LayerWeights& w, const Rows& in, Rows& out, int32_t T);
    void residual(Rows& y, float scale, int32_t T);
    // Each block on `in` into `out` (out may be in).
    void run(const Attention& a, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens);
    void run(const GatedFfn& f, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens);
    void run(const Mlp& f, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens);
    void run(const Moe& m, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens);  // moe.cpp
    void run(const DeltaNet& d, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens);  // delta_net.cpp
    void run(const ShortConv& c, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens);  // short_conv.cpp
    void run(const PerLayerInput& p, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens);
    void run(const Parallel& p, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens);
    // out = down(act(gate in) * up in), F wide (ws.gate, ws.up its scratch).
    void gated_ffn(const Matrix& gate, const Matrix& up, const Matrix& down, FfnAct act, int64_t F, const Rows& in, int32_t T, float* out);
    void project_qkv(const Attention& a, const LayerWeights& w, const Rows& in, int32_t T);
    void attend(const Attention& a, int l, std::span<const TokenSlot> tokens, const float* sinks);
    void gate_output(const Attention& a, int32_t T);
    void attend_span(const Attention& a, int l, const TokenSlot& tok, const float* queries, int32_t from, int32_t to, int thread,
                     float* states, size_t stride);
    void merge_chunks(const Attention& a, int32_t pairs, int64_t chunks, const float* sinks);
    void attend_block(const Attention& a, const kv::KvCache& cache, int l, int h, const float* q, int32_t p, int32_t first, int32_t hi,
                      float scale, float* m, float* sum, float* acc, kernels::Ahead ahead) const;
    // The attention's score scale (its own, or 1/sqrt(head_dim)).
    float kq_scale(const Attention& a) const;

    // moe.cpp
    void route(const Moe& m, const LayerWeights& w, const Rows& in, int32_t T);
    // Moe::scaled_router's input from the stream ws.x (into ws.moe_in).
    const Rows& router_input(const LayerWeights& w, int32_t T);
    struct ExpertMatrices {
        std::vector<Matrix> gate, up, down;
    };
    ExpertMatrices expert_matrices(const LayerWeights& w, std::span<const int32_t> ids);
    void run_experts(const Moe& moe, const LayerWeights& w, std::span<const int32_t> ids, std::span<const int32_t> start);
    void add_expert_bias(const float* bias, std::span<const int32_t> ids, std::span<const int32_t> start, float* y, int64_t width);
    void expert_gemm(std::span<const Matrix> w, std::span<const int32_t> ids, std::span<const int32_t> start, const void* x, size_t ldx,
                     int32_t row0, float* y);

    // delta_net.cpp
    void delta_conv(const float* kernel, float* qkv, int l, std::span<const TokenSlot> tokens, int64_t c0, int64_t c1);
    void delta_rule(int l, int h, std::span<const TokenSlot> tokens);
    // moe.cpp: the shared expert's output, gated, into ws.moe_shared.
    void shared_expert(const LayerWeights& w, const Rows& in, int32_t T);

    // rope.cpp
    void rope_tables(std::span<const TokenSlot> tokens);
    void apply_rope(float* x, int32_t T, int n_heads, int head_dim, int table, RopeStyle style);
};

}  // namespace strata::model
