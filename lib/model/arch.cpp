// model/arch.cpp — the list of builders and the layer shapes they share.
#include "model/arch.h"

namespace strata::model {

// The builders, one per file in archs/.
extern const Builder kLlama, kQwen2, kQwen3, kGemma2, kGemma3, kPhi3, kGranite, kOlmo2, kQwen3Moe, kOlmoe, kBert;

namespace {

const Builder* const kBuilders[] = {&kLlama, &kQwen2, &kQwen3, &kGemma2, &kGemma3, &kPhi3, &kGranite, &kOlmo2, &kQwen3Moe, &kOlmoe, &kBert};

}  // namespace

const Builder* find_builder(std::string_view name) {
    for (const auto* b : kBuilders)
        if (b->name == name) return b;
    return nullptr;
}

std::string arch_names() {
    std::string s;
    for (const auto* b : kBuilders) s += (s.empty() ? "" : ", ") + std::string(b->name);
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
