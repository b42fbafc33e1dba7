// model/model.cpp — loading a model: binding and checking its tensors, and splitting a
// batch into passes over the weights.
#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "kernels/kernels.h"
#include "model/arch.h"
#include "model/model_impl.h"
#include "tensor/quantize.h"

namespace strata::model {
namespace {

// Tensor names as llama.cpp's converters write them, by Slot.
constexpr std::array<const char*, kSlots> kSlotNames = {
    "attn_norm.weight",  "attn_q.weight",      "attn_k.weight",      "attn_v.weight",
    "attn_qkv.weight",   "attn_output.weight", "attn_q.bias",        "attn_k.bias",
    "attn_v.bias",       "attn_q_norm.weight", "attn_k_norm.weight", "post_attention_norm.weight",
    "ffn_norm.weight",   "ffn_gate.weight",    "ffn_up.weight",      "ffn_down.weight",
    "post_ffw_norm.weight", "ffn_gate_inp.weight", "ffn_gate_exps.weight", "ffn_up_exps.weight",
    "ffn_down_exps.weight", "attn_output.bias", "attn_output_norm.weight", "attn_output_norm.bias",
    "ffn_up.bias",       "ffn_down.bias",      "layer_output_norm.weight", "layer_output_norm.bias",
    "attn_sinks.weight", "ffn_gate_inp.bias",  "ffn_gate_exps.bias", "ffn_up_exps.bias",
    "ffn_down_exps.bias",
    "attn_gate.weight",  "ssm_conv1d.weight",  "ssm_dt.bias",        "ssm_a",
    "ssm_alpha.weight",  "ssm_beta.weight",    "ssm_norm.weight",    "ssm_out.weight",
    "ffn_gate_inp_shexp.weight", "ffn_gate_shexp.weight", "ffn_up_shexp.weight", "ffn_down_shexp.weight",
    "shortconv.in_proj.weight", "shortconv.conv.weight", "shortconv.out_proj.weight", "exp_probs_b.bias",
    "ffn_gate_inp.scale", "ffn_gate_up_exps.weight", "ffn_down_exps.scale",
    "pre_ffw_norm_2.weight", "post_ffw_norm_1.weight", "post_ffw_norm_2.weight",
    "inp_gate.weight",   "proj.weight",        "post_norm.weight",
    "layer_output_scale.weight",
};

// "blk.<layer>.<slot's name>", as llama.cpp's converters name a layer's tensors.
std::string layer_tensor_name(int layer, Slot s) { return "blk." + std::to_string(layer) + "." + kSlotNames[s]; }

std::string shape_of(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (int d = 0; d < t.n_dims; ++d) {
        if (d) s += ", ";
        s += std::to_string(t.ne[d]);
    }
    return s + "]";
}

// Checks that t has exactly the shape s.
void expect_shape(const gguf::TensorInfo& t, Shape s) {
    const int dims = s.ne2 ? 3 : s.ne1 ? 2 : 1;
    const bool ok = t.n_dims == dims && t.ne[0] == s.ne0 && (dims < 2 || t.ne[1] == s.ne1) && (dims < 3 || t.ne[2] == s.ne2);
    if (!ok)
        throw std::runtime_error("tensor " + t.name + " has shape " + shape_of(t) + ", expected [" + std::to_string(s.ne0) +
                                 (dims > 1 ? ", " + std::to_string(s.ne1) : std::string()) +
                                 (dims > 2 ? ", " + std::to_string(s.ne2) : std::string()) + "]");
}

void expect_matrix_type(const gguf::TensorInfo& t) {
    if (!kernels::can_be_weight(t.type))
        throw std::runtime_error("tensor " + t.name + ": type " + std::string(dtype_name(t.type)) + " is not supported for weight matrices");
}

void expect_f32(const gguf::TensorInfo& t) {
    if (t.type != DType::F32)
        throw std::runtime_error("tensor " + t.name + ": type " + std::string(dtype_name(t.type)) + " is not supported here (expected F32)");
}

}  // namespace

std::vector<LayerTensor> layer_tensors(const HParams& hp, int layer) {
    std::vector<LayerTensor> out;
    for (const TensorNeed& need : layer_needs(hp, layer)) {
        const Shape s = need.shape;
        std::vector<int64_t> ne = {s.ne0};
        if (s.ne1) ne.push_back(s.ne1);
        if (s.ne2) ne.push_back(s.ne2);
        out.push_back({layer_tensor_name(layer, need.slot), std::move(ne), need.required});
    }
    return out;
}

int physical_cores() {
    std::ifstream in("/proc/cpuinfo");
    std::set<std::pair<std::string, std::string>> cores;
    std::string line, phys = "0";
    while (std::getline(in, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
        std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
        if (key == "physical id") phys = value;
        if (key == "core id") cores.insert({phys, value});
    }
    int n = static_cast<int>(cores.size());
    if (n < 1) n = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, n);
}

uint64_t working_memory_bytes(const HParams& hp, int32_t batch_tokens, int32_t logit_rows, int threads) {
    const uint64_t T = static_cast<uint64_t>(batch_tokens);
    const GatedFfn* dense = find_block<GatedFfn>(hp.layers);
    const uint64_t ffn = (dense && dense->fused ? 3ull : 2ull) * std::max<uint64_t>({uint64_t(hp.n_ff), uint64_t(hp.n_ff_exp) * hp.n_expert_used,
                                                                                    uint64_t(hp.n_ff_shexp)}) +
                         (hp.n_expert > 0 ? 2ull * hp.n_expert_used * (1 + hp.n_embd) + hp.n_expert : 0) + (hp.n_ff_shexp ? hp.n_embd : 0);
    const Attention* first_attention = find_block<Attention>(hp.layers);
    const uint64_t qkv = 2ull * hp.q_dim() + 2ull * hp.kv_dim() + (first_attention && first_attention->gated ? 2ull * hp.q_dim() : hp.q_dim() + 2ull * hp.kv_dim());  // q, att, k, v, fused or gated q
    const uint64_t delta = hp.ssm.d_state ? uint64_t(hp.ssm.conv_dim()) + 3ull * hp.ssm.value_dim() + 2ull * hp.ssm.n_v_heads : 0;
    const uint64_t conv = hp.shortconv ? 4ull * hp.n_embd : 0;
    const uint64_t side = find_block<Parallel>(hp.layers) ? hp.n_embd : 0;
    const uint64_t per_layer = uint64_t(hp.n_embd_per_layer) * (hp.n_layer + 1);  // the pass's per-layer inputs and a block's gate
    const uint64_t floats = T * (2ull * hp.n_embd + qkv + ffn + delta + conv + side + per_layer +
                                 uint64_t(hp.rope.n_rot + (hp.any_swa() ? hp.rope_swa.n_rot : 0))) +
                            uint64_t(threads) * hp.n_embd_per_layer * hp.n_layer;  // each thread's dequantized per-layer row
    const uint64_t converted =  // at most 2 bytes per value (F16); experts convert [T * used] rows
        T * 2ull * std::max<uint64_t>({uint64_t(hp.n_embd), uint64_t(hp.n_ff), uint64_t(hp.n_embd + hp.n_ff_exp) * hp.n_expert_used});
    uint64_t attention = 0;  // online-softmax states, per-thread queries: the most any layer needs
    for (const Layer& layer : hp.layers)
        for_each_block<Attention>(layer.branches, [&](const Attention& a) {
            const uint64_t G = uint64_t(a.n_head / a.n_head_kv), group = G * a.head_dim;
            attention = std::max<uint64_t>(attention, 4ull * (T * a.n_head_kv + 2ull * threads) * (group + 2ull * G) + 6ull * threads * group);
        });
    return 4 * floats + converted + attention + 4ull * static_cast<uint64_t>(logit_rows) * hp.n_vocab;
}

void Model::Impl::bind_tensors() {
    const gguf::File& f = *file;
    auto find = [&](const std::string& name) { return f.tensor(name); };
    auto require = [&](const std::string& name) {
        const auto* t = find(name);
        if (!t) throw std::runtime_error("model file lacks tensor " + name);
        return t;
    };
    auto add_global = [&](const gguf::TensorInfo* t) {
        layout.globals.push_back(t);
        return static_cast<int>(layout.globals.size() - 1);
    };

    const auto* embd = require("token_embd.weight");
    if (embd->n_dims != 2 || embd->ne[0] != hp.n_embd)
        throw std::runtime_error("tensor token_embd.weight has shape " + shape_of(*embd) + ", expected [" + std::to_string(hp.n_embd) + ", n_vocab]");
    if (embd->ne[1] > (1 << 22)) throw std::runtime_error("tensor token_embd.weight: vocabulary of " + std::to_string(embd->ne[1]) + " is too large");
    if (!can_dequantize(embd->type) || embd->type == DType::Q8_K)
        throw std::runtime_error("tensor token_embd.weight: type " + std::string(dtype_name(embd->type)) + " is not supported");
    hp.n_vocab = static_cast<int32_t>(embd->ne[1]);
    layout.embeddings = embd;
    auto rope_factors = [&](const char* name) {
        const auto* rf = find(name);
        if (!rf) return -1;
        expect_shape(*rf, {hp.n_rot / 2});
        expect_f32(*rf);
        return add_global(rf);
    };
    g_rope_freqs = rope_factors("rope_freqs.weight");
    if (hp.longrope) {
        g_rope_long = rope_factors("rope_factors_long.weight");
        g_rope_short = rope_factors("rope_factors_short.weight");
    }

    for (int l = 0; l < hp.n_layer; ++l) {
        std::array<int, kSlots> idx;
        idx.fill(-1);
        std::array<const gguf::TensorInfo*, kSlots> info{};
        std::vector<const gguf::TensorInfo*> tensors;
        for (const TensorNeed& need : layer_needs(hp, l)) {
            const std::string name = layer_tensor_name(l, need.slot);
            const auto* t = need.required ? require(name) : find(name);
            if (!t) continue;
            expect_shape(*t, need.shape);
            if (need.shape.ne1 && !need.f32 && name.ends_with(".weight")) expect_matrix_type(*t);
            else expect_f32(*t);  // vectors, the experts' biases (a row per expert), and F32 matrices (ssm_conv1d)
            idx[need.slot] = static_cast<int>(tensors.size());
            info[need.slot] = t;
            tensors.push_back(t);
        }
        if (find_block<Moe>(hp.layers[size_t(l)].branches) && idx[GateUpExps] < 0 && (idx[GateExps] < 0 || idx[UpExps] < 0))
            throw std::runtime_error("model file lacks tensor " + layer_tensor_name(l, idx[GateExps] < 0 ? GateExps : UpExps) + " (or " +
                                     layer_tensor_name(l, GateUpExps) + ")");
        std::vector<int> experts;  // in this order (moe.cpp's expert_matrices)
        for (Slot s : {GateExps, UpExps, GateUpExps, DownExps})
            if (idx[s] >= 0) experts.push_back(idx[s]);
        layout.expert_tensors.push_back(std::move(experts));
        layout.layers.push_back(std::move(tensors));
        slot_index.push_back(idx);
        slot_info.push_back(info);
    }
    if (hp.learned_positions) bind_positions(require, add_global);
    if (hp.n_embd_per_layer > 0) bind_per_layer_inputs(require, add_global);
    if (hp.pooling == Pooling::Rank) bind_rank_head();
    layout.expert_tensors.emplace_back();  // the head has none
    layout.n_expert = hp.n_expert;
    layout.n_expert_used = hp.n_expert_used;
    if (!hp.output_head) {
        layout.layers.push_back({});
        return;
    }
    const auto* norm = require(hp.output_norm);
    expect_shape(*norm, {hp.n_embd});
    expect_f32(*norm);
    const auto* out = find("output.weight");
    if (!out) out = embd;  // tied embeddings
    expect_shape(*out, {hp.n_embd, hp.n_vocab});
    expect_matrix_type(*out);
    layout.layers.push_back({norm, out});
}

// position_embd (n_ctx_train rows), token_types (row 0 is used) and the token_embd_norm
// LayerNorm of encoders.
template <class Require, class AddGlobal>
void Model::Impl::bind_positions(Require& require, AddGlobal& add_global) {
    const auto* pos = require("position_embd.weight");
    const auto* types = require("token_types.weight");
    for (const auto* t : {pos, types}) {
        if (t->n_dims != 2 || t->ne[0] != hp.n_embd || t->ne[1] < 1)
            throw std::runtime_error("tensor " + t->name + " has shape " + shape_of(*t) + ", expected [" + std::to_string(hp.n_embd) + ", rows]");
        if (!can_dequantize(t->type) || t->type == DType::Q8_K)
            throw std::runtime_error("tensor " + t->name + ": type " + std::string(dtype_name(t->type)) + " is not supported");
    }
    if (pos->ne[1] < hp.n_ctx_train)
        throw std::runtime_error("tensor position_embd.weight has " + std::to_string(pos->ne[1]) + " rows, fewer than context_length " +
                                 std::to_string(hp.n_ctx_train));
    g_pos_embd = add_global(pos);
    g_token_types = add_global(types);
    auto norm_vector = [&](const char* name) {
        const auto* t = require(name);
        expect_shape(*t, {hp.n_embd});
        expect_f32(*t);
        return add_global(t);
    };
    g_embd_norm = norm_vector("token_embd_norm.weight");
    g_embd_norm_b = norm_vector("token_embd_norm.bias");
}

// Gemma's per-layer inputs: per_layer_token_embd (a table read on demand, n_layer slices of
// n_embd_per_layer values per token), per_layer_model_proj and per_layer_proj_norm.
template <class Require, class AddGlobal>
void Model::Impl::bind_per_layer_inputs(Require& require, AddGlobal& add_global) {
    const int64_t P = hp.n_embd_per_layer, width = P * hp.n_layer;
    const auto* table = require("per_layer_token_embd.weight");
    expect_shape(*table, {width, hp.n_vocab});
    if (!can_dequantize(table->type) || table->type == DType::Q8_K)
        throw std::runtime_error("tensor " + table->name + ": type " + std::string(dtype_name(table->type)) + " is not supported");
    layout.row_tables.push_back(table);
    const auto* proj = require("per_layer_model_proj.weight");
    expect_shape(*proj, {hp.n_embd, width});
    expect_matrix_type(*proj);
    g_ple_proj = add_global(proj);
    const auto* norm = require("per_layer_proj_norm.weight");
    expect_shape(*norm, {P});
    expect_f32(*norm);
    g_ple_norm = add_global(norm);
}

void Model::Impl::choose_resident_types() {
    for (const auto& tensors : layout.layers) {
        auto& types = layout.resident_types.emplace_back();
        for (const gguf::TensorInfo* t : tensors) types.push_back(t->n_dims >= 2 ? kernels::resident_layout(t->type, t->ne[1]) : t->type);
    }
}

DType Model::Impl::tensor_type(int l, size_t j) const {
    const DType file = layout.layers[l][j]->type;
    return weights->resident_layout(l, j) ? layout.resident_type(static_cast<size_t>(l), j) : file;
}

LayerWeights Model::Impl::layer_weights(int l, std::span<const uint8_t* const> ptrs) const {
    LayerWeights w{.layer = l};
    for (int s = 0; s < kSlots; ++s) {
        const auto* t = slot_info[l][s];
        if (!t) continue;
        const auto j = static_cast<size_t>(slot_index[l][s]);
        const int64_t rows = t->n_dims == 3 ? t->ne[1] * t->ne[2] : t->n_dims == 2 ? t->ne[1] : 1;
        const DType type = tensor_type(l, j);
        w.tensors[s] = Matrix{type, t->ne[0], rows, static_cast<size_t>(dtype_bytes(type, t->ne[0])), ptrs[j]};
    }
    return w;
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::load(std::shared_ptr<const gguf::File> file, Options options) {
    const int threads = options.n_threads > 0 ? options.n_threads : physical_cores();
    if (options.max_batch_tokens < 1) throw std::invalid_argument("max_batch_tokens must be at least 1");
    auto impl = std::make_unique<Impl>(threads, options.max_batch_tokens);
    impl->file = file;
    impl->hp = HParams::from_gguf(*file);
    impl->bind_tensors();
    impl->choose_resident_types();
    impl->weights = options.weights ? options.weights(file, impl->layout) : weights::make_mapped(file, impl->layout);
    return std::unique_ptr<Model>(new Model(std::move(impl)));
}

const HParams& Model::hparams() const { return impl_->hp; }
const gguf::File& Model::file() const { return *impl_->file; }
std::shared_ptr<const gguf::File> Model::file_ptr() const { return impl_->file; }
int Model::n_threads() const { return impl_->pool.size(); }

void Model::set_max_batch_tokens(int32_t n) {
    if (n < 1) throw std::invalid_argument("max_batch_tokens must be at least 1");
    impl_->max_batch_tokens = n;
}

weights::Stats Model::weight_stats() const {
    std::shared_ptr<weights::WeightSource> source;
    {
        std::lock_guard lk(impl_->weights_mu);
        source = impl_->weights;
    }
    return source ? source->stats() : weights::Stats{.mode = "none"};
}

std::unique_ptr<weights::WeightSource> Model::build_weights(const WeightFactory& factory) const {
    return factory(impl_->file, impl_->layout);
}

void Model::replace_weights(std::unique_ptr<weights::WeightSource> source) {
    std::lock_guard lk(impl_->weights_mu);
    impl_->weights = std::move(source);
}

void Model::replace_weights(const WeightFactory& factory) {
    replace_weights(std::unique_ptr<weights::WeightSource>());
    replace_weights(build_weights(factory));
}

uint64_t Model::layers_done() const { return impl_->layers_done.load(std::memory_order_relaxed); }

kv::KvCache Model::new_cache(int32_t capacity, std::shared_ptr<kv::Ledger> ledger, kv::KvType type) const {
    const auto& hp = impl_->hp;
    if (type == kv::KvType::Q8_0)
        for (const Layer& layer : hp.layers)
            for_each_block<Attention>(layer.branches, [](const Attention& a) {
                if (a.head_dim % 32 != 0)
                    throw std::invalid_argument("memory.kv_type = q8_0 needs a head size that is a multiple of 32 (this model's is " +
                                                std::to_string(a.head_dim) + "); use f16");
            });
    return kv::KvCache(kv_shape(), std::clamp(capacity, 1, hp.n_ctx_train), std::move(ledger), type);
}

// Each attention layer's width and the layer whose keys and values it reads (Attention::
// kv_source): the cache stores those once.
kv::Shape kv_shape(const HParams& hp) {
    std::vector<int64_t> state(size_t(hp.n_layer));
    std::vector<int32_t> dims(size_t(hp.n_layer), hp.kv_dim()), source(size_t(hp.n_layer));
    for (int l = 0; l < hp.n_layer; ++l) {
        state[size_t(l)] = layer_state_floats(hp, l);
        source[size_t(l)] = l;
        if (const Attention* a = find_block<Attention>(hp.layers[size_t(l)].branches)) {
            dims[size_t(l)] = a->kv_dim();
            if (a->kv_source >= 0) source[size_t(l)] = a->kv_source;
        }
    }
    if (std::all_of(state.begin(), state.end(), [](int64_t f) { return f == 0; })) state.clear();
    return {hp.n_layer, hp.kv_dim(), hp.any_swa() ? hp.n_swa : 0, hp.any_swa() ? hp.swa : std::vector<bool>{}, std::move(state), std::move(dims),
            std::move(source)};
}

void Model::forward(std::span<const SequenceBatch> batch, std::vector<float>& logits, std::vector<float>* hidden) {
    Impl& m = *impl_;
    // Validate everything and reserve cache room before touching any cache.
    std::vector<TokenSlot> all;
    std::vector<int32_t> start_size;
    int32_t out_rows = 0, hidden_rows = 0;
    for (const auto& s : batch) {
        if (s.hidden && !hidden) throw std::invalid_argument("forward: hidden states asked for without a buffer");
        if (!s.cache) throw std::invalid_argument("forward: sequence without a cache");
        if (s.tokens.empty()) throw std::invalid_argument("forward: sequence without tokens");
        for (size_t j = 0; j < start_size.size(); ++j)
            if (batch[j].cache == s.cache) throw std::invalid_argument("forward: the same cache appears twice in a batch");
        if (!m.hp.causal && (s.cache->size() > 0 || all.size() + s.tokens.size() > size_t(m.max_batch_tokens)))
            throw std::invalid_argument("forward: a model without causal attention takes each sequence whole, all in one pass");
        start_size.push_back(s.cache->size());
        s.cache->reserve_append(static_cast<int32_t>(s.tokens.size()));
        for (size_t i = 0; i < s.tokens.size(); ++i) {
            const int32_t id = s.tokens[i];
            if (id < 0 || id >= m.hp.n_vocab)
                throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(m.hp.n_vocab));
            const bool wants = s.logits == Logits::All || (s.logits == Logits::Last && i + 1 == s.tokens.size());
            if (wants && !m.hp.output_head) throw std::invalid_argument("forward: this model has no output layer (embeddings only)");
            all.push_back({s.cache, s.cache->size() + static_cast<int32_t>(i), id, wants ? out_rows++ : -1, s.hidden ? hidden_rows++ : -1});
        }
    }
    logits.resize(size_t(out_rows) * m.hp.n_vocab);
    if (hidden) hidden->resize(size_t(hidden_rows) * m.hp.n_embd);
    // Passes of at most max_batch_tokens; a sequence's tokens stay in order across passes,
    // and each pass commits what it wrote so the next pass attends to it.
    try {
        for (size_t begin = 0; begin < all.size(); begin += m.max_batch_tokens) {
            std::span<const TokenSlot> pass(all.data() + begin, std::min<size_t>(m.max_batch_tokens, all.size() - begin));
            m.run_pass(pass, logits.data(), hidden ? hidden->data() : nullptr);
            for (const auto& t : pass) t.cache->commit(1);
        }
    } catch (...) {  // a recurrent state written in part cannot be undone: such a cache empties
        for (size_t j = 0; j < batch.size(); ++j) batch[j].cache->truncate(batch[j].cache->recurrent() ? 0 : start_size[j]);
        throw;
    }
}

}  // namespace strata::model
