// kernels/scratch.h — per-thread scratch memory for the SIMD kernels.
// Owns: one growing buffer per thread. It is defined in a translation unit compiled with
// the project's flags only, so that the SIMD variants instantiate no std template of their
// own for it (a weak symbol there could be linked in for every caller: see meson.build).
// Must not touch: what the kernels keep in it (each call lays out its own).
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::kernels {

// At least `bytes` bytes for the calling thread, valid until its next call.
uint8_t* thread_scratch(size_t bytes);

}  // namespace strata::kernels
