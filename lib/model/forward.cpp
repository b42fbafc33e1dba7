// model/forward.cpp — the batched forward pass: embeddings (scaled) and per-layer inputs, each layer as its
// architecture's builder described it (hp.layers, run by blocks.cpp), and the output head
// (final norm, output matrix, logit scale and soft-cap); the matmul and row helpers the
// blocks share. Numerics follow GGML's CPU backend (activations converted to the weight
// type's dot-product format, F16 KV cache with q and softmax probabilities rounded to
// F16), so logits match llama.cpp's within the golden tolerances.
// Must not touch: architecture names (builders), weight I/O (weights/).
#include <algorithm>
#include <stdexcept>
#include <cmath>

#include "kernels/kernels.h"
#include "model/model_impl.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"

namespace strata::model {

// ActivationCache ------------------------------------------------------------------------

std::pair<const void*, size_t> ActivationCache::get(const Rows& src, int32_t row0, int32_t T, int64_t k, DType at,
                                                    kernels::ThreadPool& pool) {
    const float* in = src.read() + size_t(row0) * k;
    if (at == DType::F32) return {in, size_t(k) * sizeof(float)};
    const auto s = static_cast<size_t>(at);
    const size_t row = dtype_bytes(at, k);
    const Key key{&src, src.version(), row0, T, k};
    if (key_[s] == key) return {buf_[s].data(), row};
    if (buf_[s].size() < row * T) buf_[s].resize(row * T);
    uint8_t* out = buf_[s].data();
    for_rows(pool, T, k, [&](int32_t t) { kernels::convert_activations(at, in + t * k, out + t * row, k); });
    key_[s] = key;
    return {out, row};
}

// Workspace ------------------------------------------------------------------------------

void Workspace::ensure(int32_t n_tokens, const HParams& hp, int n_threads) {
    if (n_tokens > tokens) {
        const size_t T = n_tokens;
        x.resize(T * hp.n_embd);
        h.resize(T * hp.n_embd);
        if (find_block<Parallel>(hp.layers)) part.resize(T * hp.n_embd);
        if (hp.n_embd_per_layer > 0) {
            const size_t P = hp.n_embd_per_layer;
            ple.resize(T * P * hp.n_layer);
            ple_gate.resize(T * P);
        }
        q.resize(T * hp.q_dim());
        att.resize(T * hp.q_dim());
        k.resize(T * hp.kv_dim());
        v.resize(T * hp.kv_dim());
        const size_t ff = std::max({size_t(hp.n_ff), size_t(hp.n_ff_exp) * hp.n_expert_used, size_t(hp.n_ff_shexp)});
        gate.resize(T * ff);
        const GatedFfn* dense = find_block<GatedFfn>(hp.layers);
        up.resize(T * ff * (dense && dense->fused ? 2 : 1));
        if (hp.n_expert > 0) {
            moe_logits.resize(T * hp.n_expert);
            moe_weight.resize(T * hp.n_expert_used);
            moe_choice.resize(T * hp.n_expert_used);
            moe_in.resize(T * hp.n_expert_used * hp.n_embd);
            moe_out.resize(T * hp.n_expert_used * hp.n_embd);
            moe_shared.resize(hp.n_ff_shexp ? T * hp.n_embd : 0);
        }
        if (hp.ssm.d_state > 0) {
            const size_t V = hp.ssm.value_dim(), H = hp.ssm.n_v_heads;
            dn_qkv.resize(T * hp.ssm.conv_dim());
            dn_z.resize(T * V);
            dn_beta.resize(T * H);
            dn_gate.resize(T * H);
            dn_out_f.resize(T * V);
            dn_out.resize(T * V);
        }
        if (hp.shortconv > 0) {
            sc_bcx.resize(T * 3 * hp.n_embd);
            sc_y.resize(T * hp.n_embd);
        }
        for (int i = 0; i < (hp.any_swa() ? 2 : 1); ++i) {
            const Rope& r = i ? hp.rope_swa : hp.rope;
            rope_cos[i].resize(T * r.n_rot / 2);
            rope_sin[i].resize(T * r.n_rot / 2);
        }
        tokens = n_tokens;
    }
    q16.resize(n_threads);
    attn_q.resize(n_threads);
    for (auto& b : q16) b.resize(size_t(hp.q_dim()));
    for (auto& b : attn_q) b.resize(size_t(hp.q_dim()));
}

// The pass -------------------------------------------------------------------------------

void Model::Impl::run_pass(std::span<const TokenSlot> tokens, float* logits, float* hidden) {
    if (!weights) throw std::runtime_error("the model has no weights: loading them for the last memory plan failed");
    const int32_t T = static_cast<int32_t>(tokens.size());
    ws.ensure(T, hp, pool.size());
    embed(tokens);
    rope_tables(tokens);
    weights->begin_pass();
    for (int l = 0; l < hp.n_layer; ++l) {
        run_layer(layer_weights(l, weights->acquire(l)), tokens);
        weights->release(l);
        layers_done.fetch_add(1, std::memory_order_relaxed);
    }
    output(tokens, logits, hidden);
}

void Model::Impl::embed(std::span<const TokenSlot> tokens) {
    const auto* t = layout.embeddings;
    const size_t row = dtype_bytes(t->type, t->ne[0]);
    std::vector<int32_t>& ids = ws.ids;
    ids.clear();
    for (const auto& tok : tokens) ids.push_back(tok.id);
    if (ws.embd_rows.size() < row * ids.size()) ws.embd_rows.resize(row * ids.size());
    weights->embedding_rows(ids, ws.embd_rows.data());
    float* x = ws.x.write();
    for (size_t i = 0; i < ids.size(); ++i) dequantize_row(t->type, ws.embd_rows.data() + i * row, x + i * hp.n_embd, hp.n_embd);
    scale_rows(x, ids.size() * hp.n_embd, hp.embd_scale);
    if (hp.learned_positions) add_positions(tokens);
    if (hp.n_embd_per_layer > 0) per_layer_inputs(static_cast<int32_t>(ids.size()));
}

// The per-layer inputs of the pass's tokens (ws.ids) into ws.ple, as llama.cpp's
// build_inp_per_layer and project_per_layer_inputs: per token, n_layer slices of P values,
// (rms_norm(per_layer_model_proj(x) / sqrt(n_embd)) + its per_layer_token_embd row x
// sqrt(P)) / sqrt(2), x the scaled embedding. The table's rows are read on demand.
void Model::Impl::per_layer_inputs(int32_t T) {
    const int64_t P = hp.n_embd_per_layer, width = P * hp.n_layer, E = hp.n_embd;
    const gguf::TensorInfo* table = layout.row_tables.front();
    const gguf::TensorInfo* proj = layout.globals[size_t(g_ple_proj)];
    const size_t row = dtype_bytes(table->type, width);
    if (ws.embd_rows.size() < row * T) ws.embd_rows.resize(row * T);
    weights->table_rows(0, ws.ids, ws.embd_rows.data());
    float* y = ws.ple.data();
    matmul({proj->type, E, width, dtype_bytes(proj->type, E), weights->global(size_t(g_ple_proj))}, ws.x, T, y, size_t(width));
    const float* norm = reinterpret_cast<const float*>(weights->global(size_t(g_ple_norm)));
    const float proj_scale = 1.0f / std::sqrt(static_cast<float>(E)), tok_scale = std::sqrt(static_cast<float>(P)), mix = 1.0f / std::sqrt(2.0f);
    for_rows(pool, T, width, [&](int32_t t) {
        thread_local std::vector<float> tok;
        tok.resize(size_t(width));
        dequantize_row(table->type, ws.embd_rows.data() + size_t(t) * row, tok.data(), width);
        float* p = y + size_t(t) * width;
        scale_rows(p, size_t(width), proj_scale);
        for (int64_t l = 0; l < hp.n_layer; ++l) kernels::rms_norm(p + l * P, norm, p + l * P, P, hp.rms_eps);
        for (int64_t i = 0; i < width; ++i) p[i] = (p[i] + tok[size_t(i)] * tok_scale) * mix;
    });
}

// Encoders: x + token_types[0] + position_embd[pos], then the token_embd_norm LayerNorm.
void Model::Impl::add_positions(std::span<const TokenSlot> tokens) {
    const int E = hp.n_embd;
    const gguf::TensorInfo* pos_t = layout.globals[g_pos_embd];
    const gguf::TensorInfo* type_t = layout.globals[g_token_types];
    const size_t pos_row = dtype_bytes(pos_t->type, E);
    std::vector<float> type0(E), row(E);
    dequantize_row(type_t->type, weights->global(g_token_types), type0.data(), E);
    float* x = ws.x.write();
    for (size_t t = 0; t < tokens.size(); ++t) {
        if (tokens[t].pos >= pos_t->ne[1])
            throw std::out_of_range("position " + std::to_string(tokens[t].pos) + " is beyond position_embd.weight's " +
                                    std::to_string(pos_t->ne[1]) + " rows");
        dequantize_row(pos_t->type, weights->global(g_pos_embd) + size_t(tokens[t].pos) * pos_row, row.data(), E);
        kernels::add(x + t * E, type0.data(), E);
        kernels::add(x + t * E, row.data(), E);
    }
    const auto norm = [&](int g) { return reinterpret_cast<const float*>(weights->global(g)); };
    layer_norm_rows(x, norm(g_embd_norm), norm(g_embd_norm_b), x, static_cast<int32_t>(tokens.size()));
}

void Model::Impl::rms_norm_rows(const float* x, const float* weight, float* y, int32_t T, int64_t n) {
    for_rows(pool, T, n, [&](int32_t t) { kernels::rms_norm(x + size_t(t) * n, weight, y + size_t(t) * n, n, hp.rms_eps); });
}

void Model::Impl::layer_norm_rows(const float* x, const float* weight, const float* bias, float* y, int32_t T) {
    const int64_t n = hp.n_embd;
    for_rows(pool, T, n, [&](int32_t t) { kernels::layer_norm(x + size_t(t) * n, weight, bias, y + size_t(t) * n, n, hp.norm_eps); });
}

void Model::Impl::scale_rows(float* x, size_t n, float s) {
    if (s == 1.0f) return;
    for (size_t i = 0; i < n; ++i) x[i] *= s;
}

// cap * tanh(x / cap), as GGML computes it (scale by 1/cap, tanh, scale by cap).
void Model::Impl::soft_cap(float* x, size_t n, float cap) {
    if (cap <= 0) return;
    const float inv = 1.0f / cap;
    for (size_t i = 0; i < n; ++i) x[i] = std::tanh(x[i] * inv) * cap;
}

void Model::Impl::matmul(const Matrix& w, const Rows& x, int32_t T, float* y, size_t ldy) {
    const DType at = kernels::activation_type(w.type);
    const auto converted = acts.get(x, 0, T, w.k, at, pool);
    const void* xq = converted.first;
    const size_t ldx = converted.second;
    pool.parallel_for_guided(w.rows, kernels::kRowUnit, [&](int64_t r0, int64_t r1, int) {
        kernels::gemm(w.type, w.k, w.data, w.row_bytes, r0, r1, xq, ldx, T, y, ldy);
    });
}

// Final norm of the rows that want hidden states (into `hidden`; an encoder without a
// head: its last layer's output) or logits (packed together), the output matrix, then the
// family's logit scale and soft-cap. A pass that wants neither (prompt chunks only) never
// touches the head.
void Model::Impl::output(std::span<const TokenSlot> tokens, float* logits, float* hidden) {
    const int E = hp.n_embd;
    int32_t rows = 0, first = -1;
    bool any_hidden = false;
    for (const auto& t : tokens) {
        any_hidden = any_hidden || t.hidden_row >= 0;
        if (t.out_row >= 0) {
            if (first < 0) first = t.out_row;
            ++rows;
        }
    }
    if (!rows && !any_hidden) return;
    if (!hp.output_head) {  // an encoder's hidden states are its last layer's output as it is
        for (size_t t = 0; t < tokens.size(); ++t)
            if (tokens[t].hidden_row >= 0)
                std::copy_n(ws.x.read() + t * E, E, hidden + size_t(tokens[t].hidden_row) * E);
        return;
    }
    const int head = hp.n_layer;
    const auto ptrs = weights->acquire(head);
    const auto* out = layout.layers[head][1];
    const float* norm = reinterpret_cast<const float*>(ptrs[0]);
    for (size_t t = 0; t < tokens.size(); ++t)
        if (tokens[t].hidden_row >= 0)
            kernels::rms_norm(ws.x.read() + t * E, norm, hidden + size_t(tokens[t].hidden_row) * E, E, hp.rms_eps);
    if (!rows) {
        weights->release(head);
        return;
    }
    int32_t r = 0;
    float* normed = ws.h.write();
    for (size_t t = 0; t < tokens.size(); ++t)
        if (tokens[t].out_row >= 0) kernels::rms_norm(ws.x.read() + t * E, norm, normed + size_t(r++) * E, E, hp.rms_eps);
    const DType type = tensor_type(head, 1);
    const Matrix m{type, out->ne[0], out->ne[1], static_cast<size_t>(dtype_bytes(type, out->ne[0])), ptrs[1]};
    float* y = logits + size_t(first) * hp.n_vocab;
    matmul(m, ws.h, rows, y, hp.n_vocab);
    weights->release(head);
    scale_rows(y, size_t(rows) * hp.n_vocab, hp.logit_scale);
    soft_cap(y, size_t(rows) * hp.n_vocab, hp.final_softcap);
}

}  // namespace strata::model
