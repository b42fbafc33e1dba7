// model/archs/olmo2.cpp — OLMo 2 (AI2's fully open 1B/7B/13B): no norm before attention
// or FFN; RMSNorm after each, before the residual add; q and k RMS-normalized over the
// whole projection (not per head) before NEOX RoPE; SiLU-gated FFN; an untied output.
#include "model/arch.h"

namespace strata::model {
namespace {

// x += post_norm(attn(x)); x += post_norm(ffn(x)).
void build(const Keys&, HParams& hp) {
    const Attention attention{.qk_norm = QkNorm::Whole, .rope = RopeStyle::Neox};
    hp.layers.assign(hp.n_layer, Layer{{{.block = attention, .post = rms_norm(PostAttnNorm)},
                                        {.block = GatedFfn{}, .post = rms_norm(PostFfnNorm)}}});
}

const Registration registered{{"olmo2", build}};

}  // namespace

}  // namespace strata::model
