// weights/weights.h — where the forward pass gets weight bytes from.
// Owns: the WeightSource interface (global tensors always readable; a layer's tensors
// readable between acquire(layer) and release(layer)) and the layout that says which
// tensors belong to which layer. Resident (mmap) and streamed (io_uring) sources
// implement it; the forward pass is written once against it and does not know which
// one runs. Must not touch: tensor math, model semantics.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gguf/gguf.h"

namespace strata::weights {

// Which tensors the model reads: `globals` stay readable for the whole run (embeddings,
// final norm, output matrix, rope factors); `layers[l]` are read only while layer l runs.
struct Layout {
    std::vector<const gguf::TensorInfo*> globals;
    std::vector<std::vector<const gguf::TensorInfo*>> layers;
};

class WeightSource {
public:
    virtual ~WeightSource() = default;
    // Bytes of layout.globals[i].
    virtual const uint8_t* global(size_t i) const = 0;
    // Makes layer l's tensors readable; the result is parallel to layout.layers[l] and
    // valid until release(l). Layers are acquired in order 0..n-1 within a pass.
    // Throws std::runtime_error when the bytes cannot be read (streaming I/O error).
    virtual std::span<const uint8_t* const> acquire(int layer) = 0;
    virtual void release(int layer) = 0;
    // A forward pass starts (streaming sources start prefetching layer 0..).
    virtual void begin_pass() {}
};

// The whole file stays mapped; acquire() returns pointers into the mapping.
// Resident ranges are advised MADV_WILLNEED (and mlock'ed when asked).
std::unique_ptr<WeightSource> make_resident(std::shared_ptr<const gguf::File> file, Layout layout, bool lock = false);

}  // namespace strata::weights
