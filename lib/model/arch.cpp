// model/arch.cpp — the registry of builders (each file in archs/ registers its own) and the
// layer shapes they share.
#include "model/arch.h"

#include <algorithm>

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
