// model/archs/lfm2.cpp — LFM2 (Liquid AI): gated short convolutions in the layers whose
// attention.head_count_kv is 0, grouped-query attention with per-head q/k norms and NEOX RoPE
// in the others, a SiLU-gated FFN after each; the final norm is the file's token_embd_norm.
#include <stdexcept>

#include "model/arch.h"

namespace strata::model {
namespace {

void build(const Keys& keys, HParams& hp) {
    hp.shortconv = keys.required("shortconv.l_cache", 2, 64);
    hp.output_norm = "token_embd_norm.weight";
    const std::vector<int64_t> kv_heads = keys.ints("attention.head_count_kv");
    if (kv_heads.size() != size_t(hp.n_layer))
        throw std::runtime_error("model metadata: " + hp.arch + ".attention.head_count_kv must give each of the " +
                                 std::to_string(hp.n_layer) + " layers its count (0: a short convolution)");
    const Attention attention{.qk_norm = QkNorm::PerHead, .rope = RopeStyle::Neox};
    for (const int64_t heads : kv_heads) {
        if (heads != 0 && heads != hp.n_head_kv)
            throw std::runtime_error("model metadata: " + hp.arch + ".attention.head_count_kv differs between attention layers (not supported)");
        hp.layers.push_back(heads == 0 ? Layer{{{.pre = rms_norm(AttnNorm), .block = ShortConv{}}, {.pre = rms_norm(FfnNorm), .block = GatedFfn{}}}}
                                       : pre_norm(attention, GatedFfn{}));
    }
}

const Registration registered{{"lfm2", build}};

}  // namespace

}  // namespace strata::model
