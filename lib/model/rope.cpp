// model/rope.cpp — rotary position embedding as GGML computes it (ggml_rope_ext): the
// cos/sin tables of a pass (per token and rotary pair, one table for global layers and one
// for sliding-window layers, each with its own rotated dimensions), with frequency factors
// where the kind of layer takes them (rope_freqs, or
// LongRoPE's long/short factors chosen by the sequence's context), linear and YaRN
// scaling and the attention factor; and rotating q/k rows in normal or NEOX order.
// Must not touch: attention math (blocks.cpp), weight I/O.
#include <algorithm>
#include <cmath>

#include "model/model_impl.h"

namespace strata::model {
namespace {

// LongRoPE compares the context with the original one as llama.cpp does: its context
// size is padded to a multiple of 256.
int32_t padded_context(int32_t capacity) { return (capacity + 255) / 256 * 256; }

// YaRN's correction dimensions (ggml_rope_yarn_corr_dims).
float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * std::log(n_ctx_orig / (n_rot * 2 * static_cast<float>(M_PI))) / (2 * std::log(base));
}

struct Yarn {
    float low = 0, high = 0;
    Yarn(const Rope& r, int n_dims) {
        low = std::max(0.0f, std::floor(corr_dim(n_dims, r.n_ctx_orig, r.beta_fast, r.base)));
        high = std::min(static_cast<float>(n_dims - 1), std::ceil(corr_dim(n_dims, r.n_ctx_orig, r.beta_slow, r.base)));
    }
    // 1 for the high-frequency pairs (kept as extrapolated), 0 for the low ones.
    float ramp(int pair) const {
        const float y = (static_cast<float>(pair) - low) / std::max(0.001f, high - low);
        return 1 - std::min(1.0f, std::max(0.0f, y));
    }
};

// cos/sin of one pair (GGML's rope_yarn).
void rope_yarn(float theta_extrap, const Rope& r, const Yarn& y, int pair, float* c, float* s) {
    const float theta_interp = r.freq_scale * theta_extrap;
    float theta = theta_interp;
    float mscale = r.attn_factor;
    if (r.ext_factor != 0.0f) {
        const float mix = y.ramp(pair) * r.ext_factor;
        theta = theta_interp * (1 - mix) + theta_extrap * mix;
        mscale *= 1.0f + 0.1f * std::log(1.0f / r.freq_scale);
    }
    *c = std::cos(theta) * mscale;
    *s = std::sin(theta) * mscale;
}

}  // namespace

void Model::Impl::rope_tables(std::span<const TokenSlot> tokens) {
    auto factors = [&](int g) { return g >= 0 ? reinterpret_cast<const float*>(weights->global(g)) : nullptr; };
    const float* freqs = factors(g_rope_freqs);
    for (int table = 0; table < (hp.any_swa() ? 2 : 1); ++table) {
        const Rope& r = table ? hp.rope_swa : hp.rope;
        const int half = r.n_rot / 2;
        const float theta_scale = std::pow(r.base, -2.0f / r.n_rot);
        const Yarn yarn(r, r.n_rot);
        for (size_t t = 0; t < tokens.size(); ++t) {
            // LongRoPE: the long factors once the sequence's context exceeds the original one.
            const bool long_ctx = padded_context(tokens[t].cache->capacity()) > r.n_ctx_orig;
            const float* ff = !r.factors ? nullptr : freqs ? freqs : factors(long_ctx ? g_rope_long : g_rope_short);
            float theta = static_cast<float>(tokens[t].pos);
            for (int i = 0; i < half; ++i, theta *= theta_scale)
                rope_yarn(ff ? theta / ff[i] : theta, r, yarn, i, &ws.rope_cos[table][t * half + i], &ws.rope_sin[table][t * half + i]);
        }
    }
}

void Model::Impl::apply_rope(float* x, int32_t T, int n_heads, int hd, int table, RopeStyle style) {
    const int half = (table ? hp.rope_swa : hp.rope).n_rot / 2;
    const bool neox = style == RopeStyle::Neox;
    for (int32_t t = 0; t < T; ++t) {
        const float* c = ws.rope_cos[table].data() + size_t(t) * half;
        const float* s = ws.rope_sin[table].data() + size_t(t) * half;
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

}  // namespace strata::model
