// model/arch.cpp — the registry of builders (each file in archs/ registers its own) and the
// layer shapes they share.
#include "model/arch.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace strata::model {
namespace {

// Filled at static initialization, read only after it.
std::vector<Builder>& registry() {
    static std::vector<Builder> builders;
    return builders;
}

}  // namespace

Registration::Registration(Builder builder) { registry().push_back(builder); }

const Builder* find_builder(std::string_view name) {
    for (const Builder& b : registry())
        if (b.name == name) return &b;
    return nullptr;
}

std::string arch_names() {
    std::vector<std::string_view> names;
    for (const Builder& b : registry()) names.push_back(b.name);
    std::sort(names.begin(), names.end());
    std::string s;
    for (const auto name : names) s += (s.empty() ? "" : ", ") + std::string(name);
    return s;
}

Layer pre_norm(const Attention& attention, const Block& ffn, float scale) {
    return {{{.pre = rms_norm(AttnNorm), .block = attention, .scale = scale}, {.pre = rms_norm(FfnNorm), .block = ffn, .scale = scale}}};
}

bool swa_layer(int l, int32_t n) { return n == 0 || l % n < n - 1; }

Layer sandwich_norm(const Attention& attention, const Block& ffn) {
    return {{{.pre = rms_norm(AttnNorm), .block = attention, .post = rms_norm(PostAttnNorm)},
             {.pre = rms_norm(FfnNorm), .block = ffn, .post = rms_norm(PostFfnNorm)}}};
}

}  // namespace strata::model

namespace strata::model {
namespace {

// IMROPE (ggml_rope_multi) gives rotary pair i the position of section i % 3 of the first
// three (t, h, w) while i % sum(sections) is inside it, else the fourth's; text positions
// are equal in the first three, so when those cover every pair it is NEOX RoPE.
void check_rope_sections(const Keys& keys, const HParams& hp) {
    const std::vector<int64_t> s = keys.ints("rope.dimension_sections");
    if (s.empty()) return;
    const int64_t dims = std::accumulate(s.begin(), s.end(), int64_t{0});
    for (int i = 0; i < hp.n_rot / 2 && dims > 0; ++i) {
        const int64_t sector = i % dims, third = sector % 3;
        if (third >= int64_t(s.size()) || sector >= 3 * s[size_t(third)])
            throw std::runtime_error("model metadata: " + hp.arch + ".rope.dimension_sections leaves rotary pair " + std::to_string(i) +
                                     " to a section strata does not run (text positions use the first three)");
    }
}

}  // namespace

void delta_net_hybrid(const Keys& keys, HParams& hp, const Block& ffn) {
    auto& s = hp.ssm;
    s.d_conv = keys.required("ssm.conv_kernel", 2, 64);
    s.d_state = keys.required("ssm.state_size", 1, 1024);
    s.n_k_heads = keys.required("ssm.group_count", 1, 1024);
    s.n_v_heads = keys.required("ssm.time_step_rank", 1, 1024);
    if (s.n_v_heads % s.n_k_heads)
        throw std::runtime_error("model metadata: " + hp.arch + ".ssm.time_step_rank is not a multiple of ssm.group_count");
    if (keys.optional("ssm.inner_size", s.value_dim(), 1, 1 << 20) != s.value_dim())
        throw std::runtime_error("model metadata: " + hp.arch + ".ssm.inner_size is not ssm.state_size x ssm.time_step_rank");
    const int32_t interval = keys.optional("full_attention_interval", 4, 1, 512);
    check_rope_sections(keys, hp);
    const Attention attention{.qk_norm = QkNorm::PerHead, .rope = RopeStyle::Neox, .gated = true};
    for (int l = 0; l < hp.n_layer; ++l) {
        const Block mixer = (l + 1) % interval == 0 ? Block(attention) : Block(DeltaNet{});
        hp.layers.push_back({{{.pre = rms_norm(AttnNorm), .block = mixer}, {.pre = rms_norm(PostAttnNorm), .block = ffn}}});
    }
}

void short_conv_hybrid(const Keys& keys, HParams& hp, int64_t dense, const Block& ffn) {
    hp.shortconv = keys.required("shortconv.l_cache", 2, 64);
    hp.output_norm = "token_embd_norm.weight";
    const std::vector<int64_t> kv_heads = keys.ints("attention.head_count_kv");
    if (kv_heads.size() != size_t(hp.n_layer))
        throw std::runtime_error("model metadata: " + hp.arch + ".attention.head_count_kv must give each of the " +
                                 std::to_string(hp.n_layer) + " layers its count (0: a short convolution)");
    const Attention attention{.qk_norm = QkNorm::PerHead, .rope = RopeStyle::Neox};
    for (int l = 0; l < hp.n_layer; ++l) {
        const int64_t heads = kv_heads[size_t(l)];
        if (heads != 0 && heads != hp.n_head_kv)
            throw std::runtime_error("model metadata: " + hp.arch + ".attention.head_count_kv differs between attention layers (not supported)");
        const Block mixer = heads == 0 ? Block(ShortConv{}) : Block(attention);
        const Block feed = l < dense ? Block(GatedFfn{}) : ffn;
        hp.layers.push_back({{{.pre = rms_norm(AttnNorm), .block = mixer}, {.pre = rms_norm(FfnNorm), .block = feed}}});
    }
}

}  // namespace strata::model
