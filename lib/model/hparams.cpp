// model/hparams.cpp — reading and bounding the hyperparameters.
#include "model/hparams.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace strata::model {
namespace {

// Range-checked reads of "<arch>.<key>" (gguf::File names the key in its errors).
class Reader {
public:
    Reader(const gguf::File& f, std::string_view arch) : f_(f), prefix_(std::string(arch) + ".") {}

    int32_t required(std::string_view key, int64_t min, int64_t max) const {
        auto v = f_.get_int(prefix_ + std::string(key), min, max);
        if (!v) throw std::runtime_error("model metadata: missing " + prefix_ + std::string(key));
        return static_cast<int32_t>(*v);
    }
    int32_t optional(std::string_view key, int64_t def, int64_t min, int64_t max) const {
        return static_cast<int32_t>(f_.get_int(prefix_ + std::string(key), min, max).value_or(def));
    }
    float real(std::string_view key, double def, double min, double max) const {
        return static_cast<float>(f_.get_float(prefix_ + std::string(key), min, max).value_or(def));
    }

private:
    const gguf::File& f_;
    std::string prefix_;
};

}  // namespace

HParams HParams::from_gguf(const gguf::File& f) {
    auto arch_name = f.get_string("general.architecture");
    if (!arch_name) throw std::runtime_error("model metadata: missing general.architecture");
    auto arch = find_arch(*arch_name);
    if (!arch) throw std::runtime_error("model architecture \"" + std::string(*arch_name) + "\" is not supported (strata runs llama, qwen2)");

    HParams h{.arch = *arch};
    h.name = std::string(f.get_string("general.name").value_or(std::filesystem::path(f.path()).filename().string()));
    Reader r(f, arch->name);
    h.n_embd = r.required("embedding_length", 1, 1 << 16);
    h.n_layer = r.required("block_count", 1, 512);
    h.n_ff = r.required("feed_forward_length", 1, 1 << 18);
    h.n_head = r.required("attention.head_count", 1, 1024);
    h.n_head_kv = r.optional("attention.head_count_kv", h.n_head, 1, h.n_head);
    if (h.n_head % h.n_head_kv)
        throw std::runtime_error("model metadata: attention.head_count " + std::to_string(h.n_head) +
                                 " is not a multiple of attention.head_count_kv " + std::to_string(h.n_head_kv));
    if (h.n_embd % h.n_head && !f.find(std::string(arch->name) + ".attention.key_length"))
        throw std::runtime_error("model metadata: embedding_length is not a multiple of attention.head_count");
    h.head_dim = r.optional("attention.key_length", h.n_embd / h.n_head, 2, 1024);
    if (r.optional("attention.value_length", h.head_dim, 1, 1024) != h.head_dim)
        throw std::runtime_error("model metadata: attention.value_length differs from key_length (not supported)");
    if (h.head_dim % 2) throw std::runtime_error("model metadata: head dimension " + std::to_string(h.head_dim) + " is odd");
    h.n_rot = r.optional("rope.dimension_count", h.head_dim, 2, h.head_dim);
    if (h.n_rot % 2) throw std::runtime_error("model metadata: rope.dimension_count is odd");
    h.n_ctx_train = r.optional("context_length", 2048, 1, 1 << 24);
    h.rms_eps = r.real("attention.layer_norm_rms_epsilon", 1e-5, 0, 1);
    h.rope_freq_base = r.real("rope.freq_base", 10000.0, 1, 1e12);
    return h;
}

}  // namespace strata::model
