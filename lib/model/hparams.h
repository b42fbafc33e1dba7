// model/hparams.h — a model's hyperparameters, read from GGUF metadata and checked
// for sanity (each out-of-range value is an error naming its key).
// Must not touch: tensor data.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/gguf.h"
#include "model/arch.h"

namespace strata::model {

struct HParams {
    ArchInfo arch;
    std::string name;       // general.name, or the file name
    int32_t n_vocab = 0;
    int32_t n_ctx_train = 0;
    int32_t n_embd = 0;
    int32_t n_layer = 0;
    int32_t n_ff = 0;
    int32_t n_head = 0;
    int32_t n_head_kv = 0;
    int32_t head_dim = 0;   // attention.key_length (= value_length), default n_embd / n_head
    int32_t n_rot = 0;      // rope.dimension_count, default head_dim
    float rms_eps = 1e-5f;
    float rope_freq_base = 10000.0f;

    int32_t q_dim() const { return n_head * head_dim; }
    int32_t kv_dim() const { return n_head_kv * head_dim; }

    // Throws std::runtime_error naming the key for a missing or out-of-range value.
    static HParams from_gguf(const gguf::File& f);
};

}  // namespace strata::model
