// model/quantize_model.h — whole-model quantization: a GGUF file in, a GGUF file out with
// every tensor converted to the type quant_mix chose for it.
// Owns: the conversion loop (rows dequantized to float and requantized, in parallel,
// chunk by chunk), the output metadata (the source's, plus general.file_type and
// general.quantization_version) and streaming: the output is written tensor by tensor
// through gguf::Writer fill callbacks, so no more than one chunk of output and a row of
// floats per thread is held in memory, and the source pages are released once used.
// Must not touch: the mix rules (quant_mix) or the block formats (tensor/).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "model/quant_mix.h"

namespace strata::model {

// Reported after each tensor has been written.
struct TensorDone {
    size_t index = 0, count = 0;  // 0-based position in the output, of count tensors
    const TensorPlan* plan = nullptr;
    uint64_t bytes_in = 0, bytes_out = 0;
    double seconds = 0;
};

struct QuantizeOptions {
    int threads = 0;                // 0: one per online CPU
    bool allow_requantize = false;  // convert tensors that are already quantized (loses quality)
    std::function<void(const TensorDone&)> on_tensor;
};

struct QuantizeResult {
    size_t tensors = 0, converted = 0, fallbacks = 0;
    uint64_t bytes_in = 0, bytes_out = 0;  // tensor data only
    double seconds = 0;
};

// Quantizes the model at in_path to out_path (written atomically). Throws std::runtime_error
// (or gguf::GgufError for a bad input file) naming the tensor when a tensor is quantized
// already and !allow_requantize, has a type without float values, or holds NaN or Inf.
QuantizeResult quantize_model(const std::string& in_path, const std::string& out_path, const FileType& ft,
                              const QuantizeOptions& options = {});

// GGML_QNT_VERSION: the block formats' version, written to general.quantization_version.
constexpr uint32_t kQuantizationVersion = 2;

}  // namespace strata::model
