// model/delta_net.cpp — running a Gated DeltaNet block (layer.h) as llama.cpp computes it
// (its qwen35 graph with ggml_ssm_conv, ggml_l2_norm and the gated delta rule): the
// projections of every token at once, then, token after token of each sequence, the causal
// convolution over the conv state and the per-head delta-rule update of the recurrent
// state, both kept in the token's KV cache (kv::KvCache::state: [channel][d_conv - 1] conv
// inputs, then per value head [d_state (v)][d_state (k)]); then the gated RMSNorm and the
// output projection. Sequences' tokens are adjacent and in order in a pass, so running the
// tokens in batch order runs each sequence in order on its own state.
// Must not touch: architecture names, weight I/O, which positions a cache holds.
#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
#include "model/model_impl.h"

namespace strata::model {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float silu(float x) { return x / (1.0f + std::exp(-x)); }
float softplus(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }  // ggml_softplus

// x / max(|x|, eps), as ggml_l2_norm.
void l2_norm(float* x, int64_t n, float eps) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * x[i];
    const float scale = 1.0f / std::max(std::sqrt(static_cast<float>(sum)), eps);
    for (int64_t i = 0; i < n; ++i) x[i] *= scale;
}

}  // namespace

// The causal depthwise convolution of channels [c0, c1) of every token (ggml_ssm_conv: the
// kernel over the last d_conv - 1 inputs and this one), then SiLU, in place in `qkv`.
void Model::Impl::delta_conv(const float* kernel, float* qkv, int l, std::span<const TokenSlot> tokens, int64_t c0, int64_t c1) {
    const int64_t C = hp.ssm.conv_dim(), K = hp.ssm.d_conv;
    for (size_t t = 0; t < tokens.size(); ++t) {
        float* state = tokens[t].cache->state(l);
        float* x = qkv + t * C;
        for (int64_t c = c0; c < c1; ++c) {
            float* past = state + c * (K - 1);
            const float* w = kernel + c * K;
            float sum = 0;
            for (int64_t k = 0; k < K - 1; ++k) sum += past[k] * w[k];
            sum += x[c] * w[K - 1];
            std::copy(past + 1, past + K - 1, past);
            past[K - 2] = x[c];
            x[c] = silu(sum);
        }
    }
}

// Value head h of every token: S = exp(g) S; S += beta (v - S k) k^T; o = S q / sqrt(d_state),
// q and k those of its key head (value heads take the key heads in turn, as ggml_repeat
// tiles them).
void Model::Impl::delta_rule(int l, int h, std::span<const TokenSlot> tokens) {
    const auto& s = hp.ssm;
    const int64_t C = s.conv_dim(), D = s.d_state, V = s.value_dim(), H = s.n_v_heads;
    const int64_t kh = h % s.n_k_heads;
    const int64_t state_at = (s.d_conv - 1) * C + int64_t(h) * D * D;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    for (size_t t = 0; t < tokens.size(); ++t) {
        float* S = tokens[t].cache->state(l) + state_at;
        const float* row = ws.dn_qkv.data() + t * C;
        const float *q = row + kh * D, *k = row + s.key_dim() + kh * D, *v = row + 2 * s.key_dim() + int64_t(h) * D;
        kernels::delta_rule(S, D, q, k, v, std::exp(ws.dn_gate[t * H + h]), ws.dn_beta[t * H + h], scale, ws.dn_out_f.data() + t * V + int64_t(h) * D);
    }
}

void Model::Impl::run(const DeltaNet&, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens) {
    const auto& s = hp.ssm;
    const int32_t T = static_cast<int32_t>(tokens.size());
    const int64_t C = s.conv_dim(), D = s.d_state, V = s.value_dim(), H = s.n_v_heads, E = hp.n_embd;
    const int l = w.layer;
    matmul(w.mat(Wqkv), in, T, ws.dn_qkv.data(), C);
    matmul(w.mat(AttnGate), in, T, ws.dn_z.data(), V);
    matmul(w.mat(SsmBeta), in, T, ws.dn_beta.data(), H);
    matmul(w.mat(SsmAlpha), in, T, ws.dn_gate.data(), H);
    const float *dt = w.vec(SsmDt), *a = w.vec(SsmA);
    for (int32_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < H; ++h) {
            float& g = ws.dn_gate[size_t(t * H + h)];
            g = softplus(g + dt[h]) * a[h];
            float& b = ws.dn_beta[size_t(t * H + h)];
            b = sigmoid(b);
        }
    pool.parallel_for(C, 16, [&](int64_t c0, int64_t c1, int) { delta_conv(w.vec(SsmConv), ws.dn_qkv.data(), l, tokens, c0, c1); });
    for_rows(pool, T * s.n_k_heads, D, [&](int32_t r) {
        const int64_t t = r / s.n_k_heads, kh = r % s.n_k_heads;
        l2_norm(ws.dn_qkv.data() + t * C + kh * D, D, hp.rms_eps);
        l2_norm(ws.dn_qkv.data() + t * C + s.key_dim() + kh * D, D, hp.rms_eps);
    });
    pool.parallel_for(H, 1, [&](int64_t h0, int64_t h1, int) {
        for (int64_t h = h0; h < h1; ++h) delta_rule(l, static_cast<int>(h), tokens);
    });
    // rms_norm(o) * ssm_norm * silu(z), per head.
    float* gated = ws.dn_out.write();
    for_rows(pool, T * static_cast<int32_t>(H), D, [&](int32_t r) {
        float* y = gated + size_t(r) * D;
        kernels::rms_norm(ws.dn_out_f.data() + size_t(r) * D, w.vec(SsmNorm), y, D, hp.rms_eps);
        float* z = ws.dn_z.data() + size_t(r) * D;
        kernels::silu_mul(z, y, D);
        std::copy(z, z + D, y);
    });
    matmul(w.mat(SsmOut), ws.dn_out, T, out.write(), E);
}

}  // namespace strata::model
