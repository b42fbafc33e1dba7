// model/blocks.cpp — running what hp.layers says a layer does: its residual branches (norms
// around a block, the residual add) and output scale, attention (q/k/v projection fused or
// not, biases, q/k norms, v norm, RoPE, F16 KV cache or an earlier layer's, grouped-query
// causal attention with optional soft-capping and sliding window, sigmoid output gate), the
// gated and the plain feed-forward, per-layer inputs, blocks side by side (the mixture of
// experts is moe.cpp, Gated DeltaNet delta_net.cpp).
// Must not touch: architecture names, weight I/O.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "model/model_impl.h"
#include "tensor/fp16.h"

namespace strata::model {

// Layers ---------------------------------------------------------------------------------

void Model::Impl::run_layer(const LayerWeights& w, std::span<const TokenSlot> tokens) {
    for (const Branch& b : hp.layers[size_t(w.layer)].branches) run_branch(b, w, tokens);
    if (const float* s = w.vec(LayerOutScale)) scale_rows(ws.x.write(), tokens.size() * hp.n_embd, *s);
}

// x = after(x + scale * post(block(pre(x)))), the block's output in ws.h.
void Model::Impl::run_branch(const Branch& b, const LayerWeights& w, std::span<const TokenSlot> tokens) {
    const auto T = static_cast<int32_t>(tokens.size());
    if (b.pre) norm(b.pre, w, ws.x, ws.h, T);
    const Rows& in = b.pre ? ws.h : ws.x;
    std::visit([&](const auto& block) { run(block, w, in, ws.h, tokens); }, b.block);
    if (b.post) norm(b.post, w, ws.h, ws.h, T);
    residual(ws.h, b.scale, T);
    if (b.after) norm(b.after, w, ws.x, ws.x, T);
}

void Model::Impl::norm(const Norm& n, const LayerWeights& w, const Rows& in, Rows& out, int32_t T) {
    const float* x = in.read();
    if (n.bias == kSlots) rms_norm_rows(x, w.vec(n.weight), out.write(), T, hp.n_embd);
    else layer_norm_rows(x, w.vec(n.weight), w.vec(n.bias), out.write(), T);
}

// x += scale * y (y is scaled in place).
void Model::Impl::residual(Rows& y, float scale, int32_t T) {
    const int E = hp.n_embd;
    float* x = ws.x.write();
    float* branch = y.write();
    for_rows(pool, T, E, [&](int32_t t) {
        scale_rows(branch + size_t(t) * E, E, scale);
        kernels::add(x + size_t(t) * E, branch + size_t(t) * E, E);
    });
}

// The parts' outputs summed into `out`, each part on the stream x (`in`).
void Model::Impl::run(const Parallel& p, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens) {
    if (&in == &out) throw std::logic_error("a Parallel block's branch has a pre norm");
    const auto T = static_cast<int32_t>(tokens.size());
    const size_t n = size_t(T) * hp.n_embd;
    for (size_t i = 0; i < p.parts.size(); ++i) {
        const Branch& part = p.parts[i];
        Rows& y = i == 0 ? out : ws.part;
        if (part.pre) norm(part.pre, w, in, y, T);
        std::visit([&](const auto& block) { run(block, w, part.pre ? y : in, y, tokens); }, part.block);
        if (part.post) norm(part.post, w, y, y, T);
        scale_rows(y.write(), n, part.scale);
        if (i > 0) kernels::add(out.write(), ws.part.read(), int64_t(n));
    }
}

// per_layer_proj(gelu(per_layer_inp_gate(in)) * the layer's slice of ws.ple).
void Model::Impl::run(const PerLayerInput&, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens) {
    const auto T = static_cast<int32_t>(tokens.size());
    const int64_t P = hp.n_embd_per_layer, row = P * hp.n_layer;
    matmul(w.mat(PerLayerGate), in, T, ws.ple_gate.write(), size_t(P));
    float* gate = ws.ple_gate.write();
    for_rows(pool, T, P, [&](int32_t t) { kernels::gelu_mul(gate + size_t(t) * P, ws.ple.data() + size_t(t) * row + size_t(w.layer) * P, P); });
    matmul(w.mat(PerLayerProj), ws.ple_gate, T, out.write(), size_t(hp.n_embd));
}

// Attention ------------------------------------------------------------------------------

// q, k, v of every token: three matrices (k as v without attn_v; q alone when the layer
// reads another's keys and values), or one fused attn_qkv split as [q | k | v].
void Model::Impl::project_qkv(const Attention& a, const LayerWeights& w, const Rows& in, int32_t T) {
    const int Q = a.q_dim(), KV = a.kv_dim();
    if (a.fused_qkv) {
        const size_t row = size_t(Q) + 2 * KV;
        if (ws.qkv.size() < row * T) ws.qkv.resize(row * T);
        matmul(w.mat(Wqkv), in, T, ws.qkv.data(), row);
        for (int32_t t = 0; t < T; ++t) {
            const float* r = ws.qkv.data() + t * row;
            std::memcpy(ws.q.data() + size_t(t) * Q, r, Q * sizeof(float));
            std::memcpy(ws.k.data() + size_t(t) * KV, r + Q, KV * sizeof(float));
            std::memcpy(ws.v.data() + size_t(t) * KV, r + Q + KV, KV * sizeof(float));
        }
    } else {
        if (a.gated) {  // per head [q | gate]: the gates stay in ws.qkv for gate_output()
            if (ws.qkv.size() < size_t(2) * Q * T) ws.qkv.resize(size_t(2) * Q * T);
            matmul(w.mat(Wq), in, T, ws.qkv.data(), 2 * size_t(Q));
            const int hd = a.head_dim;
            for (int32_t t = 0; t < T; ++t)
                for (int h = 0; h < a.n_head; ++h)
                    std::memcpy(ws.q.data() + size_t(t) * Q + size_t(h) * hd, ws.qkv.data() + (size_t(t) * 2 * a.n_head + 2 * h) * hd,
                                hd * sizeof(float));
        } else {
            matmul(w.mat(Wq), in, T, ws.q.data(), Q);
        }
        if (a.kv_source < 0) {
            matmul(w.mat(Wk), in, T, ws.k.data(), KV);
            if (w.mat(Wv).data) matmul(w.mat(Wv), in, T, ws.v.data(), KV);
            else std::copy_n(ws.k.data(), size_t(T) * KV, ws.v.data());
        }
    }
    const float *bq = w.vec(Bq), *bk = w.vec(Bk), *bv = w.vec(Bv);  // absent unless the file has them
    for (int32_t t = 0; t < T; ++t) {
        if (bq) kernels::add(ws.q.data() + size_t(t) * Q, bq, Q);
        if (bk) kernels::add(ws.k.data() + size_t(t) * KV, bk, KV);
        if (bv) kernels::add(ws.v.data() + size_t(t) * KV, bv, KV);
    }
}

float Model::Impl::kq_scale(const Attention& a) const {
    return a.kq_scale != 0.0f ? a.kq_scale : 1.0f / std::sqrt(static_cast<float>(a.head_dim));
}

// A layer reading an earlier layer's keys and values (kv_source) stores none: the cache
// hands it that layer's (kv::Shape::source).
void Model::Impl::run(const Attention& a, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens) {
    const int32_t T = static_cast<int32_t>(tokens.size());
    const int Q = a.q_dim(), KV = a.kv_dim(), E = hp.n_embd, l = w.layer, hd = a.head_dim;
    const bool own_kv = a.kv_source < 0;
    project_qkv(a, w, in, T);
    if (a.qk_norm == QkNorm::PerHead) {
        rms_norm_rows(ws.q.data(), w.vec(QNorm), ws.q.data(), T * a.n_head, hd);
        if (own_kv) rms_norm_rows(ws.k.data(), w.vec(KNorm), ws.k.data(), T * a.n_head_kv, hd);
    } else if (a.qk_norm == QkNorm::Whole) {
        rms_norm_rows(ws.q.data(), w.vec(QNorm), ws.q.data(), T, Q);
        rms_norm_rows(ws.k.data(), w.vec(KNorm), ws.k.data(), T, KV);
    }
    if (a.v_norm) rms_norm_rows(ws.v.data(), ws.ones_of(size_t(hd)), ws.v.data(), T * a.n_head_kv, hd);
    const int table = a.window > 0 ? 1 : 0;
    apply_rope(ws.q.data(), T, a.n_head, hd, table, a.rope);
    if (own_kv) apply_rope(ws.k.data(), T, a.n_head_kv, hd, table, a.rope);
    if (a.scale_q) scale_rows(ws.q.data(), size_t(T) * Q, kq_scale(a));
    for (int32_t t = 0; own_kv && t < T; ++t)
        tokens[t].cache->store(l, tokens[t].pos, ws.k.data() + size_t(t) * KV, ws.v.data() + size_t(t) * KV);
    attend(a, l, tokens, w.vec(Sinks));
    if (a.gated) gate_output(a, T);
    float* y = out.write();
    matmul(w.mat(Wo), ws.att, T, y, E);
    if (a.out_bias)
        for (int32_t t = 0; t < T; ++t) kernels::add(y + size_t(t) * E, w.vec(Bo), E);
}

// The attention's output times sigmoid of its gate (the second half of each head's q row).
void Model::Impl::gate_output(const Attention& a, int32_t T) {
    const int Q = a.q_dim(), hd = a.head_dim;
    float* att = ws.att.write();
    for_rows(pool, T, Q, [&](int32_t t) {
        for (int h = 0; h < a.n_head; ++h) {
            const float* gate = ws.qkv.data() + (size_t(t) * 2 * a.n_head + 2 * h + 1) * hd;
            float* o = att + size_t(t) * Q + size_t(h) * hd;
            for (int i = 0; i < hd; ++i) o[i] *= 1.0f / (1.0f + std::exp(-gate[i]));
        }
    });
}

// One KV block's positions [lo, hi) (block start `first`) for the query group of KV head h,
// in the cache's type, bringing `ahead` into L2 meanwhile.
void Model::Impl::attend_block(const Attention& a, const kv::KvCache& cache, int l, int h, const float* q, int32_t p, int32_t first, int32_t hi,
                               float scale, float* m, float* sum, float* acc, kernels::Ahead ahead) const {
    const int hd = a.head_dim, G = a.n_head / a.n_head_kv;
    const float softcap = a.softcap;
    const kv::BlockFormat& f = cache.format(l);
    const uint8_t* keys = cache.k_block(l, p);
    const uint8_t* values = cache.v(l, first);
    if (f.type == kv::KvType::F16) {
        kernels::attend_f16(q, G, hd, reinterpret_cast<const uint16_t*>(keys) + size_t(h) * hd * kv::kBlockTokens,
                            reinterpret_cast<const uint16_t*>(values) + size_t(h) * hd, f.dim, p - first, hi, scale, softcap, m, sum,
                            acc, ahead);
    } else {
        kernels::attend_q8_0(q, G, hd, reinterpret_cast<const int8_t*>(keys) + size_t(h) * hd * kv::kBlockTokens,
                             reinterpret_cast<const uint16_t*>(keys + f.key_bytes()) + size_t(h) * (hd / 32) * kv::kBlockTokens,
                             values + size_t(h) * (hd / 32) * 34, f.value_row_bytes(), p - first, hi, scale, softcap, m, sum, acc,
                             ahead);
    }
}

// Grouped-query causal attention, flash-attention style: every token streams over its
// sequence's cache block by block with an online softmax per query group (the query heads
// sharing a KV head, kernels::attend_f16), so each key and value row is read once per
// group; on a sliding-window layer only the last a.window positions (the token's own
// included). A task takes all KV heads of one block before the next block, so it reads
// each block's layer (keys, then values, of every head) as one contiguous run, which the
// hardware prefetchers follow; one head at a time over all blocks read 2 KB pieces and
// value rows 1 KB apart (1B Q4_K_M decoding after 2048 tokens: 33.3-35.7 -> 35.6-37.3
// tok/s, medians of 3 alternating strata-bench runs, with attention.h's kernel changes).
// Even so the prefetchers fell behind: the next block's layer is prefetched into L2 while
// a block is computed, an n_kv-th of it with each head (kernel_bench --attention 2048, one
// thread, caches evicted between layers: no prefetch F16 14.2-15.4 ms per token, Q8_0
// 12.1-13.3; the whole layer into L1 at once 10.1-10.8 and 9.9-11.1; a share in one burst
// before each head 9.6-10.7 and 5.9-7.6; into L1 a share at a time 13.5-16.3 and 8.7-8.9,
// as an F16 block is as large as L1; two or four blocks ahead no better). The kernel takes
// its share as kernels::Ahead and spreads it over its key loop, a line per key element:
// F16 9.4-12.3 -> 6.7-11.2 ms (AVX2 10.4-12.4 -> 7.2-9.7), Q8_0 the same; inside the
// model (1B Q4_K_M decoding after 2048 tokens, 2 threads) a layer's attention 0.38-0.45
// -> 0.34-0.42 ms. When the pass has fewer tokens than
// twice the threads (one sequence decoding), each token's positions are split into chunks
// computed in parallel (attend_span) and merged (merge_chunks).
void Model::Impl::attend(const Attention& a, int l, std::span<const TokenSlot> tokens, const float* sinks) {
    static_assert(kv::kBlockTokens == 16, "kernels::attend_f16 takes KV blocks of 16 positions");
    constexpr int32_t kMinChunk = 2 * kv::kBlockTokens;  // positions (of every KV head) worth a task of their own
    const int hd = a.head_dim, n_kv = a.n_head_kv, G = a.n_head / a.n_head_kv, Q = a.q_dim();
    const int32_t window = a.window;
    const int64_t T = static_cast<int64_t>(tokens.size()), pairs = T * n_kv, threads = pool.size();
    // Each token attends up to its own position (causal) or to its sequence's last in the
    // pass (a sequence's tokens are adjacent in the batch).
    std::vector<int32_t>& ends = ws.attn_end;
    ends.resize(tokens.size());
    for (size_t t = tokens.size(); t-- > 0;)
        ends[t] = !hp.causal && t + 1 < tokens.size() && tokens[t + 1].cache == tokens[t].cache ? ends[t + 1] : tokens[t].pos + 1;
    int32_t longest = 1;
    for (const int32_t end : ends) longest = std::max(longest, end);
    const int64_t chunks = T >= 2 * threads ? 1 : std::clamp<int64_t>((2 * threads + T - 1) / T, 1, std::max(1, longest / kMinChunk));
    const size_t state = size_t(G) * (hd + 2);  // per (token, KV head) and chunk: m[G], l[G], acc[G][hd]
    if (ws.attn_states.size() < size_t(pairs * chunks) * state) ws.attn_states.resize(size_t(pairs * chunks) * state);
    pool.parallel_for(T * chunks, 1, [&](int64_t b, int64_t e, int thread) {
        for (int64_t task = b; task < e; ++task) {
            const int64_t t = task / chunks, c = task % chunks;
            const int32_t n = ends[size_t(t)], j0 = window ? std::max(0, n - window) : 0;
            const auto from = static_cast<int32_t>(j0 + (n - j0) * c / chunks), to = static_cast<int32_t>(j0 + (n - j0) * (c + 1) / chunks);
            attend_span(a, l, tokens[size_t(t)], ws.q.data() + t * Q, from, to, thread, ws.attn_states.data() + size_t(t * n_kv * chunks + c) * state,
                        size_t(chunks) * state);
        }
    });
    merge_chunks(a, static_cast<int32_t>(pairs), chunks, sinks);
}

// Positions [from, to) of one token (its `queries`) for every KV head, block by block, into
// the online-softmax states of the heads: m[G], l[G], acc[G][hd] at states + h * stride.
void Model::Impl::attend_span(const Attention& a, int l, const TokenSlot& tok, const float* queries, int32_t from, int32_t to, int thread,
                              float* states, size_t stride) {
    const int hd = a.head_dim, n_kv = a.n_head_kv, G = a.n_head / a.n_head_kv, Q = a.q_dim();
    const float scale = a.scale_q ? 1.0f : kq_scale(a);
    for (int h = 0; h < n_kv; ++h) {
        float* m = states + size_t(h) * stride;
        std::fill(m, m + G, -INFINITY);
        std::fill(m + G, m + G + size_t(G) * (hd + 1), 0.0f);
    }
    // The token's queries rounded to F16, as llama.cpp's F16 K*Q product rounds them.
    uint16_t* q16 = ws.q16[size_t(thread)].data();
    float* q = ws.attn_q[size_t(thread)].data();
    kernels::f32_to_f16(queries, q16, Q);
    kernels::f16_to_f32(q16, q, Q);
    const size_t bytes = tok.cache->format(l).layer_bytes();
    for (int32_t p = from; p < to;) {
        const int32_t first = p - p % kv::kBlockTokens, hi = std::min(to - first, kv::kBlockTokens);
        // The next block's layer, an n_kv-th of it while each head of this one is computed.
        const uint8_t* next = first + kv::kBlockTokens < to ? tok.cache->k_block(l, first + kv::kBlockTokens) : nullptr;
        for (int h = 0; h < n_kv; ++h) {
            const kernels::Ahead ahead = next ? kernels::ahead_part(next, bytes, h, n_kv) : kernels::Ahead{};
            float* m = states + size_t(h) * stride;
            attend_block(a, *tok.cache, l, h, q + size_t(h) * G * hd, p, first, hi, scale, m, m + G, m + 2 * G, ahead);
        }
        p = first + hi;
    }
}

// Merges the `chunks` states of each (token, KV head) pair, rescaled to their largest
// max, into ws.att, normalized; with `sinks`, query head q's sink logit sinks[q] joins the
// denominator (as a position whose value is zero), as llama.cpp's softmax and flash
// attention take it.
void Model::Impl::merge_chunks(const Attention& a, int32_t pairs, int64_t chunks, const float* sinks) {
    const int hd = a.head_dim, n_kv = a.n_head_kv, G = a.n_head / a.n_head_kv, Q = a.q_dim();
    const size_t state = size_t(G) * (hd + 2);
    float* att = ws.att.write();
    for_rows(pool, pairs, int64_t(G) * hd * chunks, [&](int32_t pair) {
        const float* first = ws.attn_states.data() + size_t(pair) * chunks * state;
        float* out = att + size_t(pair / n_kv) * Q + size_t(pair % n_kv) * G * hd;
        for (int g = 0; g < G; ++g) {
            const float sink = sinks ? sinks[(pair % n_kv) * G + g] : -INFINITY;
            float mx = sink;
            for (int64_t c = 0; c < chunks; ++c) mx = std::max(mx, first[size_t(c) * state + g]);
            float total = sinks ? std::exp(sink - mx) : 0.0f;
            float* o = out + size_t(g) * hd;
            std::fill(o, o + hd, 0.0f);
            for (int64_t c = 0; c < chunks; ++c) {
                const float* st = first + size_t(c) * state;
                if (st[g] == -INFINITY) continue;
                const float w = std::exp(st[g] - mx);
                total += st[G + g] * w;
                const float* acc = st + 2 * G + size_t(g) * hd;
                for (int i = 0; i < hd; ++i) o[i] += acc[i] * w;
            }
            for (int i = 0; i < hd; ++i) o[i] /= total;
        }
    });
}

// Feed-forward ---------------------------------------------------------------------------

void act_mul(FfnAct act, float* g, const float* u, int64_t n) {
    switch (act) {
        case FfnAct::Silu: return kernels::silu_mul(g, u, n);
        case FfnAct::GeluTanh: return kernels::gelu_mul(g, u, n);
        case FfnAct::SwigluOai: return kernels::swiglu_oai_mul(g, u, n, 1.702f, 7.0f);  // ggml's constants for it
    }
}

// down(gelu(up(in) + up_b)) + down_b, GELU as ggml_gelu (the gated kernel with 1s).
void Model::Impl::run(const Mlp&, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens) {
    const int32_t T = static_cast<int32_t>(tokens.size());
    const int E = hp.n_embd, F = hp.n_ff;
    const float *up_b = w.vec(UpB), *down_b = w.vec(DownB);
    const float* ones = ws.ones_of(size_t(F));
    float* up = ws.up.write();
    matmul(w.mat(Up), in, T, up, F);
    for_rows(pool, T, F, [&](int32_t t) {
        float* u = up + size_t(t) * F;
        kernels::add(u, up_b, F);
        kernels::gelu_mul(u, ones, F);
    });
    float* y = out.write();
    matmul(w.mat(Down), ws.up, T, y, E);
    for (int32_t t = 0; t < T; ++t) kernels::add(y + size_t(t) * E, down_b, E);
}

// down(act(gate) * up); a fused ffn_up gives [gate | up] per row.
void Model::Impl::run(const GatedFfn& f, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens) {
    const int32_t T = static_cast<int32_t>(tokens.size());
    const int E = hp.n_embd, F = f.n_ff;
    if (f.fused) {
        matmul(w.mat(Up), in, T, ws.up.write(), 2 * size_t(F));
        float* gate = ws.gate.write();
        for_rows(pool, T, F, [&](int32_t t) {
            const float* r = ws.up.read() + size_t(t) * 2 * F;
            std::memcpy(gate + size_t(t) * F, r, F * sizeof(float));
            act_mul(f.act, gate + size_t(t) * F, r + F, F);
        });
        matmul(w.mat(Down), ws.gate, T, out.write(), E);
    } else {
        gated_ffn(w.mat(Gate), w.mat(Up), w.mat(Down), f.act, F, in, T, out.write());
    }
}

void Model::Impl::gated_ffn(const Matrix& gate_w, const Matrix& up_w, const Matrix& down_w, FfnAct act, int64_t F, const Rows& in, int32_t T,
                            float* out) {
    matmul(gate_w, in, T, ws.gate.write(), F);
    matmul(up_w, in, T, ws.up.write(), F);
    float* gate = ws.gate.write();
    for_rows(pool, T, F, [&](int32_t t) { act_mul(act, gate + size_t(t) * F, ws.up.read() + size_t(t) * F, F); });
    matmul(down_w, ws.gate, T, out, hp.n_embd);
}

}  // namespace strata::model
