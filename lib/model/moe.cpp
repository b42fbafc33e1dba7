// model/moe.cpp — the mixture-of-experts feed-forward block: a softmax router over all
// experts for every token, its n_expert_used best (their weights renormalized when the
// family does), and each chosen expert's gated FFN run once for all the tokens routed to
// it — its rows of the merged 3-D tensors are read once per pass, whatever the batch —
// then the experts' outputs weighted and summed per token.
// Must not touch: architecture names, weight I/O.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "kernels/kernels.h"
#include "model/model_impl.h"

namespace strata::model {

// Router: softmax over the experts' logits, the top n_expert_used (ties to the lower
// index), as llama.cpp's build_moe_ffn; fills ws.moe_choice / ws.moe_weight [T][used].
void Model::Impl::route(const Matrix& router, const float* in, int32_t T) {
    const int X = hp.n_expert, K = hp.n_expert_used;
    matmul(router, in, T, ws.moe_logits.data(), X);
    std::vector<int32_t> order(static_cast<size_t>(X));
    for (int32_t t = 0; t < T; ++t) {
        float* p = ws.moe_logits.data() + size_t(t) * X;
        const float max = *std::max_element(p, p + X);
        double sum = 0;
        for (int i = 0; i < X; ++i) sum += p[i] = std::exp(p[i] - max);
        for (int i = 0; i < X; ++i) p[i] = static_cast<float>(p[i] / sum);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + K, order.end(),
                          [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        float chosen = 0;
        for (int j = 0; j < K; ++j) chosen += p[order[j]];
        for (int j = 0; j < K; ++j) {
            ws.moe_choice[size_t(t) * K + j] = order[j];
            ws.moe_weight[size_t(t) * K + j] = hp.moe_norm_weights ? p[order[j]] / chosen : p[order[j]];
        }
    }
}

void Model::Impl::moe_block(const LayerWeights& w, const float* in, float* out, int32_t T) {
    const int E = hp.n_embd, X = hp.n_expert, K = hp.n_expert_used, F = hp.n_ff_exp;
    acts.invalidate();
    route(w.router, in, T);
    // The (token, weight) pairs of each expert, experts in order: a counting sort.
    std::vector<int32_t> start(static_cast<size_t>(X) + 1, 0), token(size_t(T) * K);
    std::vector<float> weight(size_t(T) * K);
    for (size_t i = 0; i < size_t(T) * K; ++i) ++start[size_t(ws.moe_choice[i]) + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    std::vector<int32_t> fill(start.begin(), start.end() - 1);
    for (int32_t t = 0; t < T; ++t)
        for (int j = 0; j < K; ++j) {
            const size_t i = size_t(t) * K + j;
            const auto slot = static_cast<size_t>(fill[size_t(ws.moe_choice[i])]++);
            token[slot] = t;
            weight[slot] = ws.moe_weight[i];
        }
    float* acc = ws.moe_acc.data();
    std::fill(acc, acc + size_t(T) * E, 0.0f);
    const auto act_mul = hp.ffn_act == FfnAct::Silu ? kernels::silu_mul : kernels::gelu_mul;
    for (int e = 0; e < X; ++e) {
        const int32_t n = start[size_t(e) + 1] - start[size_t(e)];
        if (n == 0) continue;
        const int32_t* rows = token.data() + start[size_t(e)];
        for (int32_t i = 0; i < n; ++i) std::memcpy(ws.moe_in.data() + size_t(i) * E, in + size_t(rows[i]) * E, E * sizeof(float));
        acts.invalidate();
        matmul(w.gate_exps.slice(int64_t(e) * F, F), ws.moe_in.data(), n, ws.gate.data(), F);
        matmul(w.up_exps.slice(int64_t(e) * F, F), ws.moe_in.data(), n, ws.up.data(), F);
        for_rows(pool, n, F, [&](int32_t i) { act_mul(ws.gate.data() + size_t(i) * F, ws.up.data() + size_t(i) * F, F); });
        acts.invalidate();
        matmul(w.down_exps.slice(int64_t(e) * E, E), ws.gate.data(), n, ws.moe_out.data(), E);
        const float* wt = weight.data() + start[size_t(e)];
        for (int32_t i = 0; i < n; ++i) {
            float* dst = acc + size_t(rows[i]) * E;
            const float* src = ws.moe_out.data() + size_t(i) * E;
            for (int c = 0; c < E; ++c) dst[c] += wt[i] * src[c];
        }
    }
    std::memcpy(out, acc, size_t(T) * E * sizeof(float));
    acts.invalidate();
}

}  // namespace strata::model
