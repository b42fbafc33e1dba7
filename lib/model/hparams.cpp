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

std::vector<int32_t> Keys::per_layer(std::string_view key, int64_t def, int64_t min, int64_t max, int n) const {
    const gguf::Value* v = f_.find(full(key));
    if (!v || v->type != gguf::ValueType::ARRAY) return std::vector<int32_t>(size_t(n), optional(key, def, min, max));
    const std::vector<int64_t> all = ints(key);
    if (all.size() != size_t(n))
        throw std::runtime_error("model metadata: " + full(key) + " has " + std::to_string(all.size()) + " values, expected one per layer (" +
                                 std::to_string(n) + ")");
    std::vector<int32_t> out;
    for (const int64_t x : all) {
        if (x < min || x > max)
            throw std::runtime_error("model metadata: " + full(key) + " holds " + std::to_string(x) + ", outside [" + std::to_string(min) + ", " +
                                     std::to_string(max) + "]");
        out.push_back(static_cast<int32_t>(x));
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

// What the builder left to the model in each layer: attention shapes (head_count_kv may
// be one per layer), the dense FFNs' widths (feed_forward_length may be too); and whether
// each layer reading another's keys and values can.
void resolve_layers(HParams& h, const std::vector<int32_t>& kv_heads, const std::vector<int32_t>& ffn) {
    const auto bad = [&](int l, const std::string& why) { return std::runtime_error("model metadata: " + h.arch + " layer " + std::to_string(l) + " " + why); };
    for (int l = 0; l < h.n_layer; ++l) {
        for_each_block<Attention>(h.layers[size_t(l)].branches, [&](Attention& a) {
            if (!a.n_head) a.n_head = h.n_head;
            if (!a.n_head_kv) a.n_head_kv = kv_heads[size_t(l)];
            if (!a.head_dim) a.head_dim = h.head_dim;
            if (a.n_head_kv < 1) throw bad(l, "has attention, but attention.head_count_kv gives it no kv head");
            if (a.n_head % a.n_head_kv) throw bad(l, "has " + std::to_string(a.n_head) + " heads, not a multiple of its " + std::to_string(a.n_head_kv) + " kv heads");
        });
        for_each_block<GatedFfn>(h.layers[size_t(l)].branches, [&](GatedFfn& f) {
            if (!f.n_ff) f.n_ff = ffn[size_t(l)];
        });
    }
    for (int l = 0; l < h.n_layer; ++l)
        for_each_block<Attention>(h.layers[size_t(l)].branches, [&](const Attention& a) {
            if (a.kv_source < 0) return;
            const Attention* src = a.kv_source < l ? find_block<Attention>(h.layers[size_t(a.kv_source)].branches) : nullptr;
            if (!src || src->kv_source >= 0 || src->window != a.window || src->head_dim != a.head_dim || src->n_head_kv != a.n_head_kv)
                throw bad(l, "would read the keys and values of layer " + std::to_string(a.kv_source) +
                                 ", which keeps none of its own of the same shape and window");
        });
}

}  // namespace

int32_t HParams::q_dim() const {
    int32_t most = n_head * head_dim;
    for (const Layer& layer : layers) for_each_block<Attention>(layer.branches, [&](const Attention& a) { most = std::max(most, a.q_dim()); });
    return most;
}

int32_t HParams::kv_dim() const {
    int32_t most = n_head_kv * head_dim;
    for (const Layer& layer : layers) for_each_block<Attention>(layer.branches, [&](const Attention& a) { most = std::max(most, a.kv_dim()); });
    return most;
}

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
    if (!r.has("feed_forward_length")) throw std::runtime_error("model metadata: missing " + h.arch + ".feed_forward_length");
    const std::vector<int32_t> ffn = r.per_layer("feed_forward_length", 0, 1, 1 << 18, h.n_layer);
    h.n_ff = *std::max_element(ffn.begin(), ffn.end());
    h.n_expert = r.optional("expert_count", 0, 0, 4096);
    if (h.n_expert > 0) {
        h.n_expert_used = r.required("expert_used_count", 1, h.n_expert);
        h.n_ff_exp = r.optional("expert_feed_forward_length", h.n_ff, 1, 1 << 18);
    }
    h.n_head = r.required("attention.head_count", 1, 1024);
    // One value, or one per layer (0 for layers without attention, e.g. LFM2's convolutions).
    const std::vector<int32_t> kv_heads = r.per_layer("attention.head_count_kv", h.n_head, 0, h.n_head, h.n_layer);
    h.n_head_kv = *std::max_element(kv_heads.begin(), kv_heads.end());
    if (h.n_head_kv < 1) throw std::runtime_error("model metadata: attention.head_count_kv gives no layer a kv head");
    for (const int32_t kv : kv_heads)
        if (kv > 0 && h.n_head % kv)
            throw std::runtime_error("model metadata: attention.head_count " + std::to_string(h.n_head) +
                                     " is not a multiple of attention.head_count_kv " + std::to_string(kv));
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
    for (Rope* rope : {&h.rope, &h.rope_swa})
        if (!rope->n_rot) rope->n_rot = h.n_rot;
    resolve_layers(h, kv_heads, ffn);
    derive_windows(h);
    if (h.n_expert > 0 && !find_block<Moe>(h.layers))
        throw std::runtime_error("model metadata: " + h.arch + ".expert_count is set, but strata runs " + h.arch + " without experts");
    return h;
}

}  // namespace strata::model
