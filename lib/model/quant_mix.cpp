// model/quant_mix.cpp — llama.cpp's default quantization mixes (llama_tensor_get_type
// without imatrix, pure mode or user overrides), restricted to the file types strata writes.
#include "model/quant_mix.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace strata::model {
namespace {

// llama_ftype ids.
enum FtypeId : uint32_t {
    kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 7, kQ5_0 = 8, kQ5_1 = 9, kQ2_K = 10,
    kQ3_K_S = 11, kQ3_K_M = 12, kQ3_K_L = 13, kQ4_K_S = 14, kQ4_K_M = 15, kQ5_K_S = 16, kQ5_K_M = 17,
    kQ6_K = 18, kIQ4_NL = 25, kIQ4_XS = 30, kBF16 = 32, kMXFP4_MOE = 38,
};

constexpr std::array kFileTypes = {
    FileType{"F32", kF32, DType::F32},         FileType{"F16", kF16, DType::F16},
    FileType{"BF16", kBF16, DType::BF16},      FileType{"Q8_0", kQ8_0, DType::Q8_0},
    FileType{"Q4_0", kQ4_0, DType::Q4_0},      FileType{"Q4_1", kQ4_1, DType::Q4_1},
    FileType{"Q5_0", kQ5_0, DType::Q5_0},      FileType{"Q5_1", kQ5_1, DType::Q5_1},
    FileType{"Q2_K", kQ2_K, DType::Q2_K},      FileType{"Q3_K_S", kQ3_K_S, DType::Q3_K},
    FileType{"Q3_K_M", kQ3_K_M, DType::Q3_K},  FileType{"Q3_K_L", kQ3_K_L, DType::Q3_K},
    FileType{"Q4_K_S", kQ4_K_S, DType::Q4_K},  FileType{"Q4_K_M", kQ4_K_M, DType::Q4_K},
    FileType{"Q5_K_S", kQ5_K_S, DType::Q5_K},  FileType{"Q5_K_M", kQ5_K_M, DType::Q5_K},
    FileType{"Q6_K", kQ6_K, DType::Q6_K},
    FileType{"IQ4_NL", kIQ4_NL, DType::IQ4_NL}, FileType{"IQ4_XS", kIQ4_XS, DType::IQ4_XS},
    FileType{"MXFP4_MOE", kMXFP4_MOE, DType::MXFP4},
};

constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"Q3_K", "Q3_K_M"}, {"Q4_K", "Q4_K_M"}, {"Q5_K", "Q5_K_M"}};

std::string upper(std::string_view s) {
    std::string r(s);
    for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return r;
}

int64_t block_elems(DType t) { return dtype_info(t).block_elems; }
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The dimensions that count, as ggml_n_dims: trailing sizes of 1 are not dimensions.
int effective_dims(const gguf::TensorInfo& t) {
    for (int d = gguf::kMaxDims - 1; d > 0; --d)
        if (t.ne[d] > 1) return d + 1;
    return 1;
}

std::vector<int64_t> shape_of(const gguf::TensorInfo& t) { return {t.ne, t.ne + effective_dims(t)}; }

// Whether llama.cpp quantizes a tensor at all: 2-D and 3-D weights, except norms, MoE
// routers and the small or position-like tensors some architectures have.
bool quantizable(const gguf::TensorInfo& t) {
    std::string_view name = t.name;
    if (effective_dims(t) < 2 || !name.ends_with("weight")) return false;
    static constexpr std::string_view kKept[] = {
        "_norm.weight", "ffn_gate_inp.weight", "altup", "laurel", "per_layer_model_proj", "ssm_conv1d",
        "shortconv.conv.weight", "attn_rel_b.weight", ".position_embd.",
    };
    for (auto k : kKept)
        if (contains(name, k)) return false;
    if (name == "position_embd.weight" || name == "token_types.weight") return false;
    static constexpr std::string_view kRwkvSmall[] = {
        "first.weight", "w0.weight", "w1.weight", "w2.weight", "v0.weight", "v1.weight", "v2.weight", "a0.weight",
        "a1.weight", "a2.weight", "g1.weight", "g2.weight", "decay_w1.weight", "decay_w2.weight", "lerp_fused.weight",
    };
    if (auto at = name.find("time_mix_"); at != std::string_view::npos) {
        std::string_view rest = name.substr(at + 9);
        for (auto s : kRwkvSmall)
            if (rest.starts_with(s)) return false;
    }
    return true;
}

enum class Category { TokenEmbd, Output, AttnV, AttnK, AttnOutput, FfnDown, Other };

// attn_qkv and attn_kv_b count as attn_v (llama.cpp treats all three as sensitive).
Category categorize(std::string_view name) {
    if (name == "output.weight") return Category::Output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Category::TokenEmbd;
    if (contains(name, "attn_qkv.weight") || contains(name, "attn_kv_b.weight") || contains(name, "attn_v.weight"))
        return Category::AttnV;
    if (contains(name, "attn_k.weight")) return Category::AttnK;
    if (contains(name, "attn_q.weight")) return Category::Other;
    if (contains(name, "attn_output.weight")) return Category::AttnOutput;
    if (contains(name, "ffn_up") || contains(name, "ffn_gate")) return Category::Other;
    if (contains(name, "ffn_down")) return Category::FfnDown;
    return Category::Other;
}

// The block a tensor belongs to ("blk.N."), or -1.
int layer_of(std::string_view name) {
    int layer = -1;
    if (std::sscanf(std::string(name).c_str(), "blk.%d.", &layer) != 1) return -1;
    return layer;
}

// The model facts the rules look at.
struct ModelFacts {
    bool falcon = false;
    bool is_70b = false;     // llama.cpp's LLM_TYPE_70B: 8 query heads per attn_v row
    int n_layer = 0;
    int64_t n_gqa = 0;       // query heads per kv head (layer 0)
    int64_t n_expert = 0;
    bool has_output = false;
    int n_attn_v = 0;
};

int64_t first_int(const gguf::File& f, const std::string& key, int64_t absent) {
    if (const gguf::Value* v = f.find(key)) {
        if (auto i = v->as_int()) return *i;
        if (v->type == gguf::ValueType::ARRAY && v->array_count > 0)
            if (auto i = v->int_at(0)) return *i;
        throw std::runtime_error(key + " is not an integer");
    }
    return absent;
}

ModelFacts read_facts(const gguf::File& f) {
    const auto arch = f.get_string("general.architecture");
    if (!arch) throw std::runtime_error("general.architecture is missing: cannot choose the quantization mix");
    const std::string a(*arch);
    ModelFacts m;
    m.falcon = a == "falcon";
    const int64_t n_layer = first_int(f, a + ".block_count", -1);
    if (n_layer < 0 || n_layer > 100000) throw std::runtime_error(a + ".block_count is missing or invalid");
    m.n_layer = static_cast<int>(n_layer);
    const int64_t n_head = first_int(f, a + ".attention.head_count", 0);
    const int64_t n_head_kv = first_int(f, a + ".attention.head_count_kv", n_head);
    m.n_gqa = n_head_kv > 0 ? n_head / n_head_kv : 0;
    m.n_expert = first_int(f, a + ".expert_count", 0);
    m.is_70b = n_layer == 80 && ((a == "llama" && n_head != n_head_kv) || a == "qwen2");
    for (const auto& t : f.tensors()) {
        m.has_output |= t.name == "output.weight";
        m.n_attn_v += categorize(t.name) == Category::AttnV;
    }
    return m;
}

bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// llama_tensor_get_type_impl for the file types above: the mix's type before fallbacks.
class Mixer {
public:
    Mixer(const ModelFacts& m, const FileType& ft) : m_(m), ft_(ft.id), base_(ft.base) {}

    DType choose(const gguf::TensorInfo& t) {
        if (ft_ == kMXFP4_MOE) return t.ne[2] > 1 ? DType::MXFP4 : DType::Q8_0;  // experts, the rest
        const Category c = categorize(t.name);
        if (c == Category::Output || (c == Category::TokenEmbd && !m_.has_output)) return output_type(t);
        switch (c) {
            case Category::AttnV: return attn_v_type();
            case Category::AttnK: return m_.n_expert == 8 ? DType::Q8_0 : base_;
            case Category::FfnDown: return ffn_down_type(t);
            case Category::AttnOutput: return attn_output_type();
            default: return base_;
        }
    }

private:
    DType output_type(const gguf::TensorInfo& t) const {
        if (m_.falcon || t.ne[0] % block_elems(base_) != 0) return DType::Q8_0;
        return base_ == DType::Q8_0 ? base_ : DType::Q6_K;
    }

    DType attn_v_type() {
        const int i = i_attn_v_++;
        DType t = base_;
        if (ft_ == kQ2_K) t = m_.n_gqa >= 4 ? DType::Q4_K : DType::Q3_K;
        else if (ft_ == kQ3_K_M) t = i < 2 ? DType::Q5_K : DType::Q4_K;
        else if (ft_ == kQ3_K_L) t = DType::Q5_K;
        else if ((ft_ == kIQ4_NL || ft_ == kIQ4_XS) && m_.n_gqa >= 4) t = DType::Q5_K;
        else if ((ft_ == kQ4_K_M || ft_ == kQ5_K_M) && use_more_bits(i, m_.n_attn_v)) t = DType::Q6_K;
        else if (ft_ == kQ4_K_S && i < 4) t = DType::Q5_K;
        if (m_.is_70b && (t == DType::Q3_K || t == DType::Q4_K)) t = DType::Q5_K;
        if (m_.n_expert == 8) t = DType::Q8_0;
        return t;
    }

    DType ffn_down_type(const gguf::TensorInfo& t) {
        int i = i_ffn_down_++;
        const int n = m_.n_layer;
        if (m_.n_expert > 1) {  // experts are not in layer order: take the layer from the name
            i = layer_of(t.name);
            if (i < 0 || i >= n) throw std::runtime_error("cannot tell the layer of " + t.name);
        }
        switch (ft_) {
            case kQ2_K: return DType::Q3_K;
            case kQ3_K_M:
                return i < n / 16 ? DType::Q5_K : !m_.falcon || use_more_bits(i, n) ? DType::Q4_K : DType::Q3_K;
            case kQ3_K_L: return m_.falcon ? DType::Q4_K : DType::Q5_K;
            case kQ4_K_M:
                if (m_.falcon) return i < n / 16 ? DType::Q6_K : use_more_bits(i, n) ? DType::Q5_K : DType::Q4_K;
                return use_more_bits(i, n) ? DType::Q6_K : base_;
            case kQ5_K_M: return use_more_bits(i, n) ? DType::Q6_K : base_;
            case kQ4_K_S: return !m_.falcon && i < n / 8 ? DType::Q5_K : base_;
            case kIQ4_NL: case kIQ4_XS: return i < n / 8 ? DType::Q5_K : base_;  // (without an imatrix)
            default: return base_;
        }
    }

    DType attn_output_type() const {
        if (m_.falcon) return ft_ == kQ3_K_L ? DType::Q4_K : base_;
        if (m_.n_expert == 8) {
            const bool bump = ft_ == kQ2_K || ft_ == kQ3_K_S || ft_ == kQ3_K_M || ft_ == kQ4_K_S || ft_ == kQ4_K_M ||
                              ft_ == kIQ4_NL || ft_ == kIQ4_XS;
            return bump ? DType::Q5_K : base_;
        }
        switch (ft_) {
            case kQ2_K: return DType::Q3_K;
            case kQ3_K_M: return DType::Q4_K;
            case kQ3_K_L: return DType::Q5_K;
            default: return base_;
        }
    }

    const ModelFacts& m_;
    uint32_t ft_;
    DType base_;
    int i_attn_v_ = 0, i_ffn_down_ = 0;
};

// tensor_type_fallback: a type whose block does not divide the row length is replaced by a
// 32-element type of similar size, or by F16 when even 32 does not divide it.
TensorPlan with_fallback(const gguf::TensorInfo& t, DType want) {
    const int64_t ncols = t.ne[0];
    if (ncols % block_elems(want) == 0) return {&t, want, shape_of(t), {}};
    DType alt = DType::F16;
    switch (want) {
        case DType::Q2_K: case DType::Q3_K: alt = DType::Q4_0; break;
        case DType::Q4_K: alt = DType::Q5_0; break;
        case DType::Q5_K: alt = DType::Q5_1; break;
        case DType::Q6_K: alt = DType::Q8_0; break;
        case DType::IQ4_XS: alt = DType::IQ4_NL; break;
        default: break;
    }
    if (ncols % block_elems(alt) != 0) alt = DType::F16;
    return {&t, alt, shape_of(t),
            "rows of " + std::to_string(ncols) + " are not a multiple of " + std::to_string(block_elems(want)) + " (" +
                std::string(dtype_name(want)) + ")"};
}

// llama.cpp's tensor order: tensors outside blocks first, then by block number, by name
// within each group.
std::vector<const gguf::TensorInfo*> llama_cpp_order(const gguf::File& f) {
    std::vector<const gguf::TensorInfo*> order;
    for (const auto& t : f.tensors()) order.push_back(&t);
    std::stable_sort(order.begin(), order.end(), [](const gguf::TensorInfo* a, const gguf::TensorInfo* b) {
        const int la = layer_of(a->name), lb = layer_of(b->name);
        return la != lb ? la < lb : a->name < b->name;
    });
    return order;
}

}  // namespace

std::span<const FileType> file_types() { return kFileTypes; }

std::optional<FileType> file_type_from_name(std::string_view name) {
    std::string want = upper(name);
    for (const auto& [alias, target] : kAliases)
        if (want == alias) want = target;
    for (const auto& ft : kFileTypes)
        if (ft.name == want) return ft;
    return std::nullopt;
}

std::vector<TensorPlan> plan_quantization(const gguf::File& src, const FileType& ft) {
    const ModelFacts facts = read_facts(src);
    Mixer mixer(facts, ft);
    std::vector<TensorPlan> plan;
    for (const gguf::TensorInfo* t : llama_cpp_order(src)) {
        if (!quantizable(*t)) plan.push_back({t, t->type, shape_of(*t), {}});
        else if (!is_block_quantized(ft.base)) plan.push_back({t, ft.base, shape_of(*t), {}});
        else plan.push_back(with_fallback(*t, mixer.choose(*t)));
    }
    return plan;
}

}  // namespace strata::model
