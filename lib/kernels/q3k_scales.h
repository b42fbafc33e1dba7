// kernels/q3k_scales.h — the 12-byte packing of Q3_K's sixteen 6-bit scales, shared by the
// scalar reference and the SIMD variants. Anonymous namespace: every translation unit,
// whatever its -m flags, keeps its own copy. Must not touch: anything else.
#pragma once

#include <cstdint>
#include <cstring>

namespace {

// The sixteen scales of a Q3_K super-block as bytes 0..63 (still offset by 32), four per
// little-endian word: SIMD code builds a vector from the words without a store and reload.
inline void q3k_scale_words(const uint8_t* packed, uint32_t aux[4]) {
    constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
    std::memcpy(aux, packed, 12);
    const uint32_t tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
    aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
    aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
    aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
}

}  // namespace
