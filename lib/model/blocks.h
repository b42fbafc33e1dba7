// model/blocks.h — the tensors one layer's blocks read in the current pass: weight matrices
// and vectors by slot (model/layer.h), resolved to the bytes the weight source holds.
// Running the blocks is blocks.cpp's (Model::Impl, model_impl.h).
// Must not touch: file parsing, weight I/O (weights/), architecture names.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "model/layer.h"
#include "tensor/dtype.h"

namespace strata::model {

// A weight matrix of `rows` rows of k elements (ggml ne = [k, rows]; a 3-D tensor of
// experts, ne = [k, rows per expert, experts], is one matrix of all their rows). A vector
// (a norm's weight, a bias) is one row of F32.
struct Matrix {
    DType type = DType::F32;
    int64_t k = 0;
    int64_t rows = 0;
    size_t row_bytes = 0;
    const uint8_t* data = nullptr;

    // Rows [first, first + n) as a matrix of their own (one expert of a 3-D tensor).
    Matrix slice(int64_t first, int64_t n) const { return {type, k, n, row_bytes, data + size_t(first) * row_bytes}; }
};

// What one layer's blocks read, by slot (absent: data null).
struct LayerWeights {
    int layer = -1;
    std::array<Matrix, kSlots> tensors;

    const Matrix& mat(Slot s) const { return tensors[s]; }
    const float* vec(Slot s) const { return reinterpret_cast<const float*>(tensors[s].data); }
};

}  // namespace strata::model
