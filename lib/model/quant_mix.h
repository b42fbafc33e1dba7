// model/quant_mix.h — which type each tensor of a model gets when the model is quantized
// to a file type such as Q4_K_M: llama.cpp's default mixture rules without an importance
// matrix, so that strata and llama-quantize produce files with the same tensor types.
// Owns: the file-type table (general.file_type ids), the per-tensor rules (what is
// quantized at all, output/embedding types, the extra bits for attn_v and ffn_down in the
// _M/_L mixes, fallbacks for rows that are not a multiple of the block size) and the
// order llama.cpp writes tensors in. Must not touch: tensor bytes (model/quantize_model
// converts them through tensor/), files (it only reads a parsed gguf::File).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"
#include "tensor/dtype.h"

namespace strata::model {

// A target of whole-model quantization, as llama.cpp numbers it (llama_ftype).
struct FileType {
    std::string_view name;  // "Q4_K_M", "Q8_0", "F16", ...
    uint32_t id;            // the value of general.file_type
    DType base;             // the type most tensors get
};

// Every supported target: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_S/M/L,
// Q4_K_S/M, Q5_K_S/M, Q6_K, IQ4_NL, IQ4_XS, and MXFP4_MOE (as gpt-oss ships: the 3-D MoE
// expert tensors MXFP4, every other quantized tensor Q8_0).
std::span<const FileType> file_types();
// Case-insensitive; "Q3_K", "Q4_K" and "Q5_K" mean the _M mixes, as in llama-quantize.
std::optional<FileType> file_type_from_name(std::string_view name);

// The decision for one tensor of the source file.
struct TensorPlan {
    const gguf::TensorInfo* src;  // in the source file
    DType type;                   // type in the output (src->type when it is copied)
    std::vector<int64_t> shape;   // src->ne without trailing 1s, as llama.cpp writes it
    std::string fallback;         // why the mix's type was replaced, or empty
};

// Plans every tensor of `src` for target `ft`, in the order llama.cpp writes them
// (tensors outside blocks first, then block by block; by name within each). The rules
// count attn_v and ffn_down tensors in that order, as llama.cpp does. Throws
// std::runtime_error when the metadata the rules need (architecture, block count) is
// missing or invalid.
std::vector<TensorPlan> plan_quantization(const gguf::File& src, const FileType& ft);

}  // namespace strata::model
