// model/rank_head.cpp — a reranker's classification head (pooling_type rank; model/hparams.h
// RankHead), shared by every family that has one: binding cls.weight/cls.bias and
// cls.output.weight/cls.output.bias (llama.cpp's names) at load, and Model::classify, which
// runs one pooled state through them as llama.cpp's build_pooling does. The head is small
// (n_embd x n_embd at most), so it runs in F32 on the calling thread.
// Must not touch: architecture names (the builder says which token pools and whether a softmax
// ends the head), the forward pass.
#include <cmath>
#include <stdexcept>

#include "model/model_impl.h"
#include "tensor/quantize.h"

namespace strata::model {
namespace {

// A matrix [k, rows] of a type dequantize_row reads; rows 0: any.
void check_matrix(const gguf::TensorInfo& t, int64_t k) {
    if (t.n_dims != 2 || t.ne[0] != k)
        throw std::runtime_error("tensor " + t.name + " has " + std::to_string(t.n_dims) + " dimensions and " + std::to_string(t.ne[0]) +
                                 " columns, expected a matrix of " + std::to_string(k) + " columns");
    if (!can_dequantize(t.type))
        throw std::runtime_error("tensor " + t.name + ": type " + std::string(dtype_name(t.type)) + " is not supported");
}

void check_bias(const gguf::TensorInfo& t, int64_t n) {
    if (t.n_dims != 1 || t.ne[0] != n || t.type != DType::F32)
        throw std::runtime_error("tensor " + t.name + " must be an F32 vector of " + std::to_string(n) + " values");
}

// y = W x (+ b), W's rows dequantized one at a time.
std::vector<float> affine(const gguf::TensorInfo& w, const uint8_t* wdata, const float* bias, std::span<const float> x) {
    const int64_t k = w.ne[0], rows = w.ne[1];
    const size_t row_bytes = dtype_bytes(w.type, k);
    std::vector<float> row(static_cast<size_t>(k)), y(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
        dequantize_row(w.type, wdata + static_cast<size_t>(r) * row_bytes, row.data(), k);
        double sum = bias ? bias[r] : 0.0;
        for (int64_t i = 0; i < k; ++i) sum += double(row[i]) * x[i];
        y[r] = static_cast<float>(sum);
    }
    return y;
}

}  // namespace

void Model::Impl::bind_rank_head() {
    auto add = [&](const char* name) -> int {
        const gguf::TensorInfo* t = file->tensor(name);
        if (!t) return -1;
        layout.globals.push_back(t);
        return static_cast<int>(layout.globals.size() - 1);
    };
    g_cls = add("cls.weight");
    g_cls_b = add("cls.bias");
    g_cls_out = add("cls.output.weight");
    g_cls_out_b = add("cls.output.bias");
    if (g_cls < 0 && g_cls_out < 0)
        throw std::runtime_error("pooling_type is rank (a reranker) but the file has neither cls.weight nor cls.output.weight");
    const auto& g = layout.globals;
    if (g_cls >= 0) {
        check_matrix(*g[g_cls], hp.n_embd);
        if (g[g_cls]->ne[1] != hp.n_embd) throw std::runtime_error("tensor cls.weight must have n_embd rows");
        if (g_cls_b >= 0) check_bias(*g[g_cls_b], hp.n_embd);
    }
    if (g_cls_out >= 0) {
        check_matrix(*g[g_cls_out], hp.n_embd);
        if (g_cls_out_b >= 0) check_bias(*g[g_cls_out_b], g[g_cls_out]->ne[1]);
    }
}

std::vector<float> Model::classify(std::span<const float> pooled) const {
    const Impl& m = *impl_;
    if (m.hp.pooling != Pooling::Rank) throw std::logic_error("classify: the model is not a reranker");
    const auto bias = [&](int g) { return g >= 0 ? reinterpret_cast<const float*>(m.weights->global(size_t(g))) : nullptr; };
    std::vector<float> x(pooled.begin(), pooled.end());
    if (m.g_cls >= 0) {
        x = affine(*m.layout.globals[m.g_cls], m.weights->global(size_t(m.g_cls)), bias(m.g_cls_b), x);
        for (float& v : x) v = std::tanh(v);
    }
    if (m.g_cls_out >= 0) x = affine(*m.layout.globals[m.g_cls_out], m.weights->global(size_t(m.g_cls_out)), bias(m.g_cls_out_b), x);
    if (m.hp.rank.softmax) {
        float top = x[0];
        for (float v : x) top = std::max(top, v);
        double sum = 0;
        for (float& v : x) sum += (v = std::exp(v - top));
        for (float& v : x) v = static_cast<float>(v / sum);
    }
    return x;
}

}  // namespace strata::model
