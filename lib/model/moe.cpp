// model/moe.cpp — the mixture-of-experts feed-forward block: a router over all experts
// for every token (a softmax, a softmax over the chosen ones, or sigmoids with a selection
// bias; biases where the family has them), its n_expert_used best (their weights
// renormalized when the family does), and each chosen expert's gated FFN run once for all the tokens routed to
// it — its rows of the merged 3-D tensors are read once per pass, whatever the batch —
// then the experts' outputs weighted and summed per token. When the weight source reads
// experts on demand (a streamed plan), it is asked for the chosen experts only, in groups
// as large as its expert cache. A shared expert (Qwen3.5 MoE) runs on every token, its
// output scaled by sigmoid(x . ffn_gate_inp_shexp) and added. Gemma 4's router reads the
// residual stream, normalized and scaled, and its experts' outputs have scales of their own.
// Must not touch: architecture names, weight I/O.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <span>

#include "kernels/kernels.h"
#include "model/model_impl.h"

namespace strata::model {

// Router: its logits (plus its bias), then as llama.cpp's build_moe_ffn: a softmax over all
// experts and the top n_expert_used (ties to the lower index), renormalized when the
// family does; or (Gating::SoftmaxChosen) the top n_expert_used logits and a softmax over
// those; or (Gating::Sigmoid) their sigmoids, the top n_expert_used of sigmoid plus
// exp_probs_b weighted by their sigmoids. Fills ws.moe_choice / ws.moe_weight [T][used].
void Model::Impl::route(const Moe& m, const LayerWeights& w, const Rows& in, int32_t T) {
    const int X = hp.n_expert, K = hp.n_expert_used;
    matmul(w.mat(Router), m.scaled_router ? router_input(w, T) : in, T, ws.moe_logits.data(), X);
    std::vector<int32_t> order(static_cast<size_t>(X));
    std::vector<float> rank(static_cast<size_t>(X));  // what the experts are chosen by
    auto softmax = [](float* p, const float* from, int n) {  // p[i] = softmax(from)[i]; may be in place
        const float max = *std::max_element(from, from + n);
        double sum = 0;
        for (int i = 0; i < n; ++i) sum += p[i] = std::exp(from[i] - max);
        for (int i = 0; i < n; ++i) p[i] = static_cast<float>(p[i] / sum);
    };
    for (int32_t t = 0; t < T; ++t) {
        float* p = ws.moe_logits.data() + size_t(t) * X;
        if (m.biases) kernels::add(p, w.vec(RouterB), X);
        if (m.gating == Gating::Softmax) softmax(p, p, X);
        if (m.gating == Gating::Sigmoid)
            for (int i = 0; i < X; ++i) p[i] = 1.0f / (1.0f + std::exp(-p[i]));
        std::copy(p, p + X, rank.begin());
        if (m.gating == Gating::Sigmoid) kernels::add(rank.data(), w.vec(ExpProbsB), X);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + K, order.end(),
                          [&](int32_t a, int32_t b) { return rank[a] > rank[b] || (rank[a] == rank[b] && a < b); });
        float* weight = ws.moe_weight.data() + size_t(t) * K;
        for (int j = 0; j < K; ++j) {
            ws.moe_choice[size_t(t) * K + j] = order[j];
            weight[j] = p[order[j]];
        }
        if (m.gating == Gating::SoftmaxChosen) softmax(weight, weight, K);
        else if (m.renormalize) {
            float chosen = 0;
            for (int j = 0; j < K; ++j) chosen += weight[j];
            for (int j = 0; j < K; ++j) weight[j] /= chosen;
        }
    }
}

// The router's input with Moe::scaled_router: rms_norm(x) / sqrt(n_embd) * ffn_gate_inp.scale
// of the stream x, as llama.cpp's ggml ops (into ws.moe_in, before the tokens' rows are
// gathered there).
const Rows& Model::Impl::router_input(const LayerWeights& w, int32_t T) {
    const int E = hp.n_embd;
    const float *ones = ws.ones_of(size_t(E)), *scale = w.vec(RouterScale);
    const float s = 1.0f / std::sqrt(static_cast<float>(E));
    float* y = ws.moe_in.write();
    for_rows(pool, T, E, [&](int32_t t) {
        float* r = y + size_t(t) * E;
        kernels::rms_norm(ws.x.read() + size_t(t) * E, ones, r, E, hp.rms_eps);
        for (int c = 0; c < E; ++c) r[c] = r[c] * s * scale[c];
    });
    return ws.moe_in;
}

// Each of experts `ids` as three matrices (gate, up, down): slices of the merged tensors
// (gate and up of a fused ffn_gate_up_exps: an expert's first and last n_ff_exp rows) when
// they are in memory, or the slices the weight source read on demand.
Model::Impl::ExpertMatrices Model::Impl::expert_matrices(const LayerWeights& w, std::span<const int32_t> ids) {
    const int64_t E = hp.n_embd, F = hp.n_ff_exp;
    const Matrix &fused = w.mat(GateUpExps), &down = w.mat(DownExps);
    const bool is_fused = fused.k > 0;  // the file holds ffn_gate_up_exps (bound, its data in memory or read on demand)
    const Matrix &gate = is_fused ? fused : w.mat(GateExps), &up = is_fused ? fused : w.mat(UpExps);
    const int64_t stride = is_fused ? 2 * F : F, up_at = is_fused ? F : 0;  // rows per expert, where its up rows start
    ExpertMatrices m;
    if (!weights->experts_on_demand()) {
        for (int32_t e : ids) {
            m.gate.push_back(gate.slice(e * stride, F));
            m.up.push_back(up.slice(e * stride + up_at, F));
            m.down.push_back(down.slice(e * E, E));
        }
        return m;
    }
    // [i * n + j]: j in the order of Layout::expert_tensors (gate, up, down, or fused
    // gate/up and down; model.cpp).
    const auto ptrs = weights->experts(w.layer, ids);
    const size_t n = is_fused ? 2 : 3;
    auto at = [](const Matrix& merged, int64_t rows, const uint8_t* data) { return Matrix{merged.type, merged.k, rows, merged.row_bytes, data}; };
    for (size_t i = 0; i < ids.size(); ++i) {
        m.gate.push_back(at(gate, F, ptrs[i * n]));
        m.up.push_back(at(up, F, ptrs[i * n + (n - 2)] + size_t(up_at) * up.row_bytes));
        m.down.push_back(at(down, E, ptrs[i * n + (n - 1)]));
    }
    return m;
}

// Expert ids[i]'s matrix w[i] against its segment [start[e], start[e + 1]) of the
// activations (row r at x + (r - row0) * ldx), into y [segment row][rows]. All experts'
// rows in one parallel loop: a decode step with k experts synchronizes the threads once,
// not k times.
void Model::Impl::expert_gemm(std::span<const Matrix> w, std::span<const int32_t> ids, std::span<const int32_t> start,
                              const void* x, size_t ldx, int32_t row0, float* y) {
    const int64_t rows = w[0].rows;
    const int64_t total = rows * static_cast<int64_t>(ids.size());
    pool.parallel_for_guided(total, kernels::kRowUnit, [&](int64_t b, int64_t e, int) {
        while (b < e) {
            const auto i = size_t(b / rows);
            const int64_t r0 = b % rows, r1 = std::min(rows, r0 + (e - b));
            const int32_t first = start[size_t(ids[i])], n = start[size_t(ids[i]) + 1] - first;
            kernels::gemm(w[i].type, w[i].k, w[i].data, w[i].row_bytes, r0, r1, static_cast<const uint8_t*>(x) + size_t(first - row0) * ldx, ldx,
                          n, y + size_t(first) * rows, size_t(rows));
            b += r1 - r0;
        }
    });
}

// Adds expert e's row of `bias` ([expert][width]) to the rows of its segment of y, for e in ids.
void Model::Impl::add_expert_bias(const float* bias, std::span<const int32_t> ids, std::span<const int32_t> start, float* y, int64_t width) {
    for (const int32_t e : ids)
        for (int32_t r = start[size_t(e)]; r < start[size_t(e) + 1]; ++r) kernels::add(y + size_t(r) * width, bias + size_t(e) * width, width);
}

// Gate, up (each plus its expert's bias when the family has them), the activation and down
// (plus bias) of experts `ids` (consecutive in the sort by expert, so their rows are one
// run) for their rows of ws.moe_in, into ws.moe_out.
void Model::Impl::run_experts(const Moe& moe, const LayerWeights& w, std::span<const int32_t> ids, std::span<const int32_t> start) {
    const int E = hp.n_embd, F = hp.n_ff_exp;
    const ExpertMatrices m = expert_matrices(w, ids);
    const int32_t first = start[size_t(ids.front())], rows = start[size_t(ids.back()) + 1] - first;
    const auto gate_in = acts.get(ws.moe_in, first, rows, E, kernels::activation_type(m.gate[0].type), pool);
    expert_gemm(m.gate, ids, start, gate_in.first, gate_in.second, first, ws.gate.write());
    const auto up_in = acts.get(ws.moe_in, first, rows, E, kernels::activation_type(m.up[0].type), pool);
    expert_gemm(m.up, ids, start, up_in.first, up_in.second, first, ws.up.write());
    float* gate = ws.gate.write();
    if (moe.biases) {
        add_expert_bias(w.vec(GateExpsB), ids, start, gate, F);
        add_expert_bias(w.vec(UpExpsB), ids, start, ws.up.write(), F);
    }
    for_rows(pool, rows, F, [&](int32_t i) { act_mul(moe.act, gate + size_t(first + i) * F, ws.up.read() + size_t(first + i) * F, F); });
    const auto down_in = acts.get(ws.gate, first, rows, F, kernels::activation_type(m.down[0].type), pool);
    expert_gemm(m.down, ids, start, down_in.first, down_in.second, first, ws.moe_out.data());
    if (moe.biases) add_expert_bias(w.vec(DownExpsB), ids, start, ws.moe_out.data(), E);
}

void Model::Impl::run(const Moe& moe, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens) {
    const int32_t T = static_cast<int32_t>(tokens.size());
    const int E = hp.n_embd, X = hp.n_expert, K = hp.n_expert_used;
    if (moe.shared_expert) shared_expert(w, in, T);
    route(moe, w, in, T);
    // The (token, weight) pairs of each expert, experts in order (a counting sort), and the
    // tokens' rows gathered in that order.
    std::vector<int32_t> start(static_cast<size_t>(X) + 1, 0), token(size_t(T) * K), active;
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
    for (int e = 0; e < X; ++e)
        if (start[size_t(e) + 1] > start[size_t(e)]) active.push_back(e);
    const int32_t rows = T * K;
    float* gathered = ws.moe_in.write();
    for (int32_t i = 0; i < rows; ++i) std::memcpy(gathered + size_t(i) * E, in.read() + size_t(token[i]) * E, E * sizeof(float));
    // All chosen experts at once, or, read on demand, as many as the expert cache holds.
    const size_t group = weights->experts_on_demand() ? size_t(weights->max_experts()) : active.size();
    for (size_t g = 0; g < active.size(); g += group)
        run_experts(moe, w, std::span<const int32_t>(active).subspan(g, std::min(group, active.size() - g)), start);
    if (const float* scales = w.vec(DownExpsScale))  // each expert's output times its scale, before the weights
        for (const int32_t e : active)
            scale_rows(ws.moe_out.data() + size_t(start[size_t(e)]) * E, size_t(start[size_t(e) + 1] - start[size_t(e)]) * E, scales[e]);
    // out[t] = sum of its experts' outputs, weighted (out may be in: in is no longer read).
    float* sum = out.write();
    std::fill(sum, sum + size_t(T) * E, 0.0f);
    for (int32_t i = 0; i < rows; ++i) {
        float* dst = sum + size_t(token[i]) * E;
        const float* src = ws.moe_out.data() + size_t(i) * E;
        for (int c = 0; c < E; ++c) dst[c] += weight[i] * src[c];
    }
    if (moe.shared_expert)
        for (int32_t t = 0; t < T; ++t) kernels::add(sum + size_t(t) * E, ws.moe_shared.data() + size_t(t) * E, E);
}

void Model::Impl::shared_expert(const LayerWeights& w, const Rows& in, int32_t T) {
    const int E = hp.n_embd;
    float* y = ws.moe_shared.data();
    gated_ffn(w.mat(GateShexp), w.mat(UpShexp), w.mat(DownShexp), FfnAct::Silu, hp.n_ff_shexp, in, T, y);
    const float* gate = w.vec(GateInpShexp);
    for_rows(pool, T, E, [&](int32_t t) {
        const float* x = in.read() + size_t(t) * E;
        float dot = 0;
        for (int c = 0; c < E; ++c) dot += x[c] * gate[c];
        const float g = 1.0f / (1.0f + std::exp(-dot));
        for (int c = 0; c < E; ++c) y[size_t(t) * E + c] *= g;
    });
}

}  // namespace strata::model
