// model/short_conv.cpp — running a gated short convolution block (layer.h; LFM2) as llama.cpp
// computes it (its lfm2 graph with ggml_ssm_conv): in_proj of every token at once into
// [b | c | x]; then, channel by channel and token after token, b * x through the causal
// depthwise convolution over the token's conv state (kv::KvCache::state: [channel][L - 1]
// past inputs, oldest first), times c; then out_proj. Sequences' tokens are adjacent and in
// order in a pass, so running the tokens in batch order runs each sequence in order on its
// own state.
// Must not touch: architecture names, weight I/O, which positions a cache holds.
#include <algorithm>

#include "model/model_impl.h"

namespace strata::model {

void Model::Impl::run(const ShortConv&, const LayerWeights& w, const Rows& in, Rows& out, std::span<const TokenSlot> tokens) {
    const auto T = static_cast<int32_t>(tokens.size());
    const int64_t E = hp.n_embd, K = hp.shortconv;
    matmul(w.mat(ConvIn), in, T, ws.sc_bcx.data(), 3 * E);
    const float* kernel = w.vec(ConvKernel);
    float* y = ws.sc_y.write();
    pool.parallel_for(E, 64, [&](int64_t c0, int64_t c1, int) {
        for (int32_t t = 0; t < T; ++t) {
            float* state = tokens[size_t(t)].cache->state(w.layer);
            const float* bcx = ws.sc_bcx.data() + size_t(t) * 3 * E;
            for (int64_t c = c0; c < c1; ++c) {
                float* past = state + c * (K - 1);
                const float* taps = kernel + c * K;
                const float bx = bcx[c] * bcx[2 * E + c];
                float sum = 0;
                for (int64_t k = 0; k < K - 1; ++k) sum += past[k] * taps[k];
                sum += bx * taps[K - 1];
                std::copy(past + 1, past + K - 1, past);
                past[K - 2] = bx;
                y[size_t(t) * E + c] = bcx[E + c] * sum;
            }
        }
    });
    matmul(w.mat(ConvOut), ws.sc_y, T, out.write(), E);
}

}  // namespace strata::model
