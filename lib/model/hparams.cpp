// model/hparams.cpp — reading and bounding the shared hyperparameters, then handing the
// family's own keys to its builder.
#include "model/hparams.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "model/arch.h"

namespace strata::model {

// Keys -----------------------------------------------------------------------------------

int32_t Keys::required(std::string_view key, int64_t min, int64_t max) const {
    auto v = f_.get_int(full(key), min, max);
    if (!v) throw std::runtime_error("model metadata: missing " + full(key));
    return static_cast<int32_t>(*v);
}

int32_t Keys::optional(std::string_view key, int64_t def, int64_t min, int64_t max) const {
    return static_cast<int32_t>(f_.get_int(full(key), min, max).value_or(def));
}

float Keys::real(std::string_view key, double def, double min, double max) const {
    return static_cast<float>(f_.get_float(full(key), min, max).value_or(def));
}

float Keys::required_real(std::string_view key, double min, double max) const {
    auto v = f_.get_float(full(key), min, max);
    if (!v) throw std::runtime_error("model metadata: missing " + full(key));
    return static_cast<float>(*v);
}

bool Keys::has(std::string_view key) const { return f_.find(full(key)) != nullptr; }

std::string Keys::text(std::string_view key, std::string_view def) const {
    return std::string(f_.get_string(full(key)).value_or(def));
}

bool Keys::is_array(std::string_view key) const {
    const gguf::Value* v = f_.find(full(key));
    return v && v->type == gguf::ValueType::ARRAY;
}

std::vector<int64_t> Keys::ints(std::string_view key) const {
    std::vector<int64_t> out;
    if (const gguf::Value* v = f_.get_array(full(key)))
        for (uint64_t i = 0; i < v->array_count; ++i) {
            const auto x = v->int_at(i);
            if (!x) throw std::runtime_error("model metadata: " + full(key) + " is not an array of integers");
            out.push_back(*x);
        }
    return out;
}

// HParams --------------------------------------------------------------------------------

namespace {

// rope.scaling.{type,factor,original_context_length} as llama.cpp reads them for every
// family: linear and YaRN divide positions by the factor; YaRN also blends in the
// unscaled angles of the high-frequency pairs and scales cos/sin (ext_factor 1).
void read_rope_scaling(const Keys& k, HParams& h) {
    const std::string type = k.text("rope.scaling.type", "");
    float factor = k.real("rope.scaling.factor", 0.0, 0.0, 1e6);
    if (factor == 0.0f) factor = k.real("rope.scale_linear", 0.0, 0.0, 1e6);
    h.rope.n_ctx_orig = k.optional("rope.scaling.original_context_length", h.n_ctx_train, 1, 1 << 24);
    if (type == "yarn") h.rope.ext_factor = 1.0f;
    else if (!type.empty() && type != "none" && type != "linear" && type != "longrope")
        throw std::runtime_error("model metadata: " + h.arch + ".rope.scaling.type \"" + type + "\" is not supported (none, linear, yarn)");
    if (type != "none" && factor != 0.0f) h.rope.freq_scale = 1.0f / factor;
}

// n_swa and swa from the layers' attention windows (the KV cache keeps one window size).
void derive_windows(HParams& h) {
    h.swa.assign(h.n_layer, false);
    for (int l = 0; l < h.n_layer; ++l)
        for (const Branch& b : h.layers[size_t(l)].branches) {
            const auto* a = std::get_if<Attention>(&b.block);
            if (!a || a->window == 0) continue;
            if (h.n_swa != 0 && h.n_swa != a->window) throw std::logic_error(h.arch + " builder: sliding windows of different sizes");
            h.n_swa = a->window;
            h.swa[size_t(l)] = true;
        }
}

}  // namespace

bool HParams::any_swa() const { return n_swa > 0 && std::find(swa.begin(), swa.end(), true) != swa.end(); }


std::string HParams::features() const {
    std::vector<std::string> f = layer_features(*this);
    if (rope.freq_scale != 1.0f) f.push_back(rope.ext_factor != 0 ? "yarn rope scaling" : "linear rope scaling");
    if (longrope) f.push_back("longrope factors");
    if (rope.attn_factor != 1.0f) f.push_back("rope attn_factor");
    if (any_swa()) {
        const auto n = std::count(swa.begin(), swa.end(), true);
        f.push_back("sliding window " + std::to_string(n_swa) + " on " + std::to_string(n) + "/" + std::to_string(n_layer) + " layers");
    }
    if (rope_swa.base != rope.base) f.push_back("local rope base");
    if (final_softcap > 0) f.push_back("final soft-cap");
    if (!causal) f.push_back("bidirectional attention");
    if (learned_positions) f.push_back("learned positions");
    if (!output_head) f.push_back("no output head (embeddings only)");
    if (embd_scale != 1.0f) f.push_back("embedding scale");
    if (logit_scale != 1.0f) f.push_back("logit scale");
    std::string s;
    for (const auto& x : f) s += (s.empty() ? "" : ", ") + x;
    return s;
}

HParams HParams::from_gguf(const gguf::File& f) {
    auto arch_name = f.get_string("general.architecture");
    if (!arch_name) throw std::runtime_error("model metadata: missing general.architecture");
    const Builder* builder = find_builder(*arch_name);
    if (!builder) throw std::runtime_error("model architecture \"" + std::string(*arch_name) + "\" is not supported (strata runs " + arch_names() + ")");

    HParams h{.arch = std::string(*arch_name)};
    h.name = std::string(f.get_string("general.name").value_or(std::filesystem::path(f.path()).filename().string()));
    Keys r(f, h.arch);
    h.n_embd = r.required("embedding_length", 1, 1 << 16);
    h.n_layer = r.required("block_count", 1, 512);
    h.n_ff = r.required("feed_forward_length", 1, 1 << 18);
    h.n_expert = r.optional("expert_count", 0, 0, 4096);
    if (h.n_expert > 0) {
        h.n_expert_used = r.required("expert_used_count", 1, h.n_expert);
        h.n_ff_exp = r.optional("expert_feed_forward_length", h.n_ff, 1, 1 << 18);
    }
    h.n_head = r.required("attention.head_count", 1, 1024);
    // One value, or one per layer (0 for layers without attention): the attention layers' count.
    const std::vector<int64_t> per_layer = r.is_array("attention.head_count_kv") ? r.ints("attention.head_count_kv") : std::vector<int64_t>{};
    h.n_head_kv = per_layer.empty() ? r.optional("attention.head_count_kv", h.n_head, 1, h.n_head)
                                    : static_cast<int32_t>(*std::max_element(per_layer.begin(), per_layer.end()));
    if (h.n_head_kv < 1 || h.n_head_kv > h.n_head)
        throw std::runtime_error("model metadata: attention.head_count_kv " + std::to_string(h.n_head_kv) + " is out of range (1.." +
                                 std::to_string(h.n_head) + ")");
    if (h.n_head % h.n_head_kv)
        throw std::runtime_error("model metadata: attention.head_count " + std::to_string(h.n_head) +
                                 " is not a multiple of attention.head_count_kv " + std::to_string(h.n_head_kv));
    if (h.n_embd % h.n_head && !r.has("attention.key_length"))
        throw std::runtime_error("model metadata: embedding_length is not a multiple of attention.head_count");
    h.head_dim = r.optional("attention.key_length", h.n_embd / h.n_head, 2, 1024);
    if (r.optional("attention.value_length", h.head_dim, 1, 1024) != h.head_dim)
        throw std::runtime_error("model metadata: attention.value_length differs from key_length (not supported)");
    if (h.head_dim % 2) throw std::runtime_error("model metadata: head dimension " + std::to_string(h.head_dim) + " is odd");
    h.n_rot = r.optional("rope.dimension_count", h.head_dim, 2, h.head_dim);
    if (h.n_rot % 2) throw std::runtime_error("model metadata: rope.dimension_count is odd");
    h.n_ctx_train = r.optional("context_length", 2048, 1, 1 << 24);
    h.rms_eps = r.real("attention.layer_norm_rms_epsilon", 1e-5, 0, 1);
    h.pooling = static_cast<Pooling>(r.optional("pooling_type", 0, 0, 4));
    h.rope.base = r.real("rope.freq_base", 10000.0, 1, 1e12);
    read_rope_scaling(r, h);
    h.rope_swa = h.rope;
    builder->build(r, h);
    if (h.layers.size() != size_t(h.n_layer)) throw std::logic_error(h.arch + " builder: the layers are not described");
    derive_windows(h);
    if (h.n_expert > 0 && !find_block<Moe>(h.layers))
        throw std::runtime_error("model metadata: " + h.arch + ".expert_count is set, but strata runs " + h.arch + " without experts");
    return h;
}

}  // namespace strata::model
