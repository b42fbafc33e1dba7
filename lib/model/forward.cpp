// model/forward.cpp — the batched forward pass of a pre-norm transformer (llama/qwen2):
// embeddings, per layer RMSNorm → Q/K/V (+bias) → RoPE → F16 KV cache → grouped-query
// causal attention → output projection, RMSNorm → SwiGLU FFN, and the output layer.
// Numerics follow GGML's CPU backend (activations converted to the weight type's
// dot-product format, F16 KV cache with q and softmax probabilities rounded to F16),
// so logits match llama.cpp's within the golden tolerances.
#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
#include "model/model_impl.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"

namespace strata::model {
namespace {

// Work (in elements) below which an elementwise step runs on the calling thread alone.
constexpr int64_t kSerialWork = 1 << 15;

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

}  // namespace

// ActivationCache ------------------------------------------------------------------------

std::pair<const void*, size_t> ActivationCache::get(const float* src, int32_t T, int64_t k, DType at, kernels::ThreadPool& pool) {
    if (at == DType::F32) return {src, size_t(k) * sizeof(float)};
    const auto s = static_cast<size_t>(at);
    const size_t row = dtype_bytes(at, k);
    if (valid_[s] && src_[s] == src) return {buf_[s].data(), row};
    if (buf_[s].size() < row * T) buf_[s].resize(row * T);
    uint8_t* out = buf_[s].data();
    for_rows(pool, T, k, [&](int32_t t) { kernels::convert_activations(at, src + t * k, out + t * row, k); });
    valid_[s] = true;
    src_[s] = src;
    return {out, row};
}

// Workspace ------------------------------------------------------------------------------

void Workspace::ensure(int32_t n_tokens, const HParams& hp, int n_threads) {
    if (n_tokens > tokens) {
        const size_t T = n_tokens;
        x.resize(T * hp.n_embd);
        h.resize(T * hp.n_embd);
        q.resize(T * hp.q_dim());
        att.resize(T * hp.q_dim());
        k.resize(T * hp.kv_dim());
        v.resize(T * hp.kv_dim());
        gate.resize(T * hp.n_ff);
        up.resize(T * hp.n_ff);
        rope_cos.resize(T * hp.n_rot / 2);
        rope_sin.resize(T * hp.n_rot / 2);
        tokens = n_tokens;
    }
    q16.resize(n_threads);
    for (auto& b : q16) b.resize(hp.head_dim);
}

void Workspace::ensure_context(int32_t context, int n_threads) {
    scores.resize(n_threads);
    p16.resize(n_threads);
    for (auto& s : scores)
        if (s.size() < size_t(context)) s.resize(context);
    for (auto& p : p16)
        if (p.size() < size_t(context)) p.resize(context);
}

// The pass -------------------------------------------------------------------------------

void Model::Impl::run_pass(std::span<const TokenSlot> tokens, float* logits) {
    const int32_t T = static_cast<int32_t>(tokens.size());
    int32_t context = 0;
    for (const auto& t : tokens) context = std::max(context, t.pos + 1);
    ws.ensure(T, hp, pool.size());
    ws.ensure_context(context, pool.size());
    embed(tokens);
    rope_table(tokens);
    weights->begin_pass();
    for (int l = 0; l < hp.n_layer; ++l) {
        const LayerWeights w = layer_weights(l, weights->acquire(l));
        attention_block(w, l, tokens);
        ffn_block(w, T);
        weights->release(l);
        layers_done.fetch_add(1, std::memory_order_relaxed);
    }
    output(tokens, logits);
}

void Model::Impl::embed(std::span<const TokenSlot> tokens) {
    const auto* t = layout.embeddings;
    const size_t row = dtype_bytes(t->type, t->ne[0]);
    std::vector<int32_t>& ids = ws.ids;
    ids.clear();
    for (const auto& tok : tokens) ids.push_back(tok.id);
    if (ws.embd_rows.size() < row * ids.size()) ws.embd_rows.resize(row * ids.size());
    weights->embedding_rows(ids, ws.embd_rows.data());
    for (size_t i = 0; i < ids.size(); ++i) dequantize_row(t->type, ws.embd_rows.data() + i * row, ws.x.data() + i * hp.n_embd, hp.n_embd);
}

// cos/sin of every (token, pair) as GGML computes them: theta_i = pos * base^(-2i/n_rot)
// by repeated multiplication in float, divided by the rope_freqs factor when present.
void Model::Impl::rope_table(std::span<const TokenSlot> tokens) {
    const int half = hp.n_rot / 2;
    const float theta_scale = std::pow(hp.rope_freq_base, -2.0f / hp.n_rot);
    const float* factors = g_rope_freqs >= 0 ? reinterpret_cast<const float*>(weights->global(g_rope_freqs)) : nullptr;
    for (size_t t = 0; t < tokens.size(); ++t) {
        float theta = static_cast<float>(tokens[t].pos);
        for (int i = 0; i < half; ++i, theta *= theta_scale) {
            const float th = factors ? theta / factors[i] : theta;
            ws.rope_cos[t * half + i] = std::cos(th);
            ws.rope_sin[t * half + i] = std::sin(th);
        }
    }
}

void Model::Impl::apply_rope(float* x, int32_t T, int n_heads) {
    const int half = hp.n_rot / 2, hd = hp.head_dim;
    const bool neox = hp.arch.rope == RopeStyle::Neox;
    for (int32_t t = 0; t < T; ++t) {
        const float* c = ws.rope_cos.data() + size_t(t) * half;
        const float* s = ws.rope_sin.data() + size_t(t) * half;
        for (int h = 0; h < n_heads; ++h) {
            float* v = x + (size_t(t) * n_heads + h) * hd;
            for (int i = 0; i < half; ++i) {
                const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
                const float x0 = v[a], x1 = v[b];
                v[a] = x0 * c[i] - x1 * s[i];
                v[b] = x0 * s[i] + x1 * c[i];
            }
        }
    }
}

void Model::Impl::rms_norm_rows(const float* x, const float* weight, float* y, int32_t T) {
    const int E = hp.n_embd;
    for_rows(pool, T, E, [&](int32_t t) { kernels::rms_norm(x + size_t(t) * E, weight, y + size_t(t) * E, E, hp.rms_eps); });
    acts.invalidate();
}

void Model::Impl::matmul(const Matrix& w, const float* x, int32_t T, float* y, size_t ldy) {
    const DType at = kernels::activation_type(w.type);
    const auto converted = acts.get(x, T, w.k, at, pool);
    const void* xq = converted.first;
    const size_t ldx = converted.second;
    const int64_t chunks = int64_t(pool.size()) * 8;
    const int64_t grain = std::max<int64_t>(16, ((w.rows + chunks - 1) / chunks + 15) / 16 * 16);
    pool.parallel_for(w.rows, grain, [&](int64_t r0, int64_t r1, int) {
        kernels::gemm(w.type, w.k, w.data, w.row_bytes, r0, r1, xq, ldx, T, y, ldy);
    });
}

void Model::Impl::attention_block(const LayerWeights& w, int l, std::span<const TokenSlot> tokens) {
    const int32_t T = static_cast<int32_t>(tokens.size());
    const int Q = hp.q_dim(), KV = hp.kv_dim(), E = hp.n_embd;
    rms_norm_rows(ws.x.data(), w.attn_norm, ws.h.data(), T);
    matmul(w.wq, ws.h.data(), T, ws.q.data(), Q);
    matmul(w.wk, ws.h.data(), T, ws.k.data(), KV);
    matmul(w.wv, ws.h.data(), T, ws.v.data(), KV);
    if (w.bq) {
        for (int32_t t = 0; t < T; ++t) {
            kernels::add(ws.q.data() + size_t(t) * Q, w.bq, Q);
            kernels::add(ws.k.data() + size_t(t) * KV, w.bk, KV);
            kernels::add(ws.v.data() + size_t(t) * KV, w.bv, KV);
        }
    }
    apply_rope(ws.q.data(), T, hp.n_head);
    apply_rope(ws.k.data(), T, hp.n_head_kv);
    for (int32_t t = 0; t < T; ++t) {
        kernels::f32_to_f16(ws.k.data() + size_t(t) * KV, tokens[t].cache->k(l, tokens[t].pos), KV);
        kernels::f32_to_f16(ws.v.data() + size_t(t) * KV, tokens[t].cache->v(l, tokens[t].pos), KV);
    }
    attend(l, tokens);
    matmul(w.wo, ws.att.data(), T, ws.h.data(), E);
    for_rows(pool, T, E, [&](int32_t t) { kernels::add(ws.x.data() + size_t(t) * E, ws.h.data() + size_t(t) * E, E); });
}

// Grouped-query causal attention of every (token, head) against its sequence's cache.
void Model::Impl::attend(int l, std::span<const TokenSlot> tokens) {
    const int hd = hp.head_dim, n_head = hp.n_head, group = hp.n_head / hp.n_head_kv, Q = hp.q_dim();
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    pool.parallel_for(int64_t(tokens.size()) * n_head, 1, [&](int64_t b, int64_t e, int thread) {
        uint16_t* q16 = ws.q16[thread].data();
        float* sc = ws.scores[thread].data();
        uint16_t* p16 = ws.p16[thread].data();
        for (int64_t task = b; task < e; ++task) {
            const TokenSlot& tok = tokens[task / n_head];
            const int h = static_cast<int>(task % n_head);
            const int kv_off = (h / group) * hd;
            const int32_t n = tok.pos + 1;
            kernels::f32_to_f16(ws.q.data() + (task / n_head) * Q + h * hd, q16, hd);
            float max = -INFINITY;
            for (int32_t j = 0; j < n; ++j) {
                sc[j] = kernels::dot_f16(q16, tok.cache->k(l, j) + kv_off, hd) * scale;
                max = std::max(max, sc[j]);
            }
            double sum = 0;
            for (int32_t j = 0; j < n; ++j) {
                sc[j] = std::exp(sc[j] - max);
                sum += sc[j];
            }
            const float inv = static_cast<float>(1.0 / sum);
            for (int32_t j = 0; j < n; ++j) p16[j] = fp32_to_fp16(sc[j] * inv);
            float* out = ws.att.data() + (task / n_head) * Q + h * hd;
            std::fill(out, out + hd, 0.0f);
            for (int32_t j = 0; j < n; ++j) kernels::axpy_f16(out, fp16_to_fp32(p16[j]), tok.cache->v(l, j) + kv_off, hd);
        }
    });
    acts.invalidate();
}

void Model::Impl::ffn_block(const LayerWeights& w, int32_t T) {
    const int E = hp.n_embd, F = hp.n_ff;
    rms_norm_rows(ws.x.data(), w.ffn_norm, ws.h.data(), T);
    matmul(w.gate, ws.h.data(), T, ws.gate.data(), F);
    matmul(w.up, ws.h.data(), T, ws.up.data(), F);
    for_rows(pool, T, F, [&](int32_t t) { kernels::silu_mul(ws.gate.data() + size_t(t) * F, ws.up.data() + size_t(t) * F, F); });
    acts.invalidate();
    matmul(w.down, ws.gate.data(), T, ws.h.data(), E);
    for_rows(pool, T, E, [&](int32_t t) { kernels::add(ws.x.data() + size_t(t) * E, ws.h.data() + size_t(t) * E, E); });
}

// Final norm of the rows that want logits (packed together) and the output matrix. A
// pass that wants no logits (prompt chunks only) never touches the head.
void Model::Impl::output(std::span<const TokenSlot> tokens, float* logits) {
    const int E = hp.n_embd;
    int32_t rows = 0, first = -1;
    for (const auto& t : tokens)
        if (t.out_row >= 0) {
            if (first < 0) first = t.out_row;
            ++rows;
        }
    if (!rows) return;
    const int head = hp.n_layer;
    const auto ptrs = weights->acquire(head);
    const auto* out = layout.layers[head][1];
    const float* norm = reinterpret_cast<const float*>(ptrs[0]);
    int32_t r = 0;
    for (size_t t = 0; t < tokens.size(); ++t)
        if (tokens[t].out_row >= 0) kernels::rms_norm(ws.x.data() + t * E, norm, ws.h.data() + size_t(r++) * E, E, hp.rms_eps);
    acts.invalidate();
    const Matrix m{out->type, out->ne[0], out->ne[1], static_cast<size_t>(dtype_bytes(out->type, out->ne[0])), ptrs[1]};
    matmul(m, ws.h.data(), rows, logits + size_t(first) * hp.n_vocab, hp.n_vocab);
    weights->release(head);
}

}  // namespace strata::model
