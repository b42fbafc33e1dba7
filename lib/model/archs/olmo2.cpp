// model/archs/olmo2.cpp — OLMo 2 (AI2's fully open 1B/7B/13B): no norm before attention
// or FFN; RMSNorm after each, before the residual add; q and k RMS-normalized over the
// whole projection (not per head) before NEOX RoPE; SiLU-gated FFN; an untied output.
#include "model/arch.h"

namespace strata::model {
namespace {

constexpr TensorNeed kTensors[] = {{Wq}, {Wk}, {Wv}, {QNorm}, {KNorm}, {Wo}, {PostAttnNorm}, {Gate}, {Up}, {Down}, {PostFfnNorm}};

void hparams(const Keys&, HParams& hp) {
    hp.rope_style = RopeStyle::Neox;
    hp.qk_norm = QkNorm::Whole;
}

// x += post_norm(attn(x)); x += post_norm(ffn(x)).
void layer(Blocks& b, const LayerWeights& w, int l) {
    b.attention(w, l, b.stream(), b.scratch());
    b.norm(b.scratch(), w.post_attn_norm, b.scratch());
    b.residual(b.scratch());
    b.ffn(w, b.stream(), b.scratch());
    b.norm(b.scratch(), w.post_ffn_norm, b.scratch());
    b.residual(b.scratch());
}

}  // namespace

const Builder kOlmo2{"olmo2", hparams, kTensors, layer};

}  // namespace strata::model
