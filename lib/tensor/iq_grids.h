// tensor/iq_grids.h — internal: the lattice codebooks and sign tables of the IQ1/IQ2/IQ3
// formats, as data. Owns: these constants. Must not touch: code (tables only).
// The values are format constants copied from GGML's ggml-common.h (github.com/ggml-org/ggml,
// src/ggml-common.h at commit d99724f2b141fed9e1a9f402213506c081433465; the same tables are in
// llama.cpp's ggml/src/ggml-common.h), table by table, under GGML's names given beside each.
// Grid entries pack one value per byte, element j in bits 8j..8j+7 (GGML reads them
// through a byte pointer on little-endian machines: the same order).
#pragma once

#include <cstdint>

namespace strata::iq {

// the bit of element j (0..7) in a sign byte (GGML: kmask_iq2xs).
extern const uint8_t kIQ2SignMask[8];
// 7 stored sign bits -> 8 sign bits (the eighth makes the count of minus signs even) (GGML: ksigns_iq2xs).
extern const uint8_t kIQ2Signs[128];
// IQ2_XXS: 8 magnitudes from {8, 25, 43} per entry, one per byte (byte j = element j) (GGML: iq2xxs_grid).
extern const uint64_t kIQ2XXSGrid[256];
// IQ2_XS: as kIQ2XXSGrid, 512 entries (GGML: iq2xs_grid).
extern const uint64_t kIQ2XSGrid[512];
// IQ2_S: as kIQ2XXSGrid, 1024 entries (GGML: iq2s_grid).
extern const uint64_t kIQ2SGrid[1024];
// IQ3_XXS: 4 magnitudes from {4, 12, ..., 52, 62} per entry, one per byte (GGML: iq3xxs_grid).
extern const uint32_t kIQ3XXSGrid[256];
// IQ3_S: 4 odd magnitudes 1..15 per entry, one per byte (GGML: iq3s_grid).
extern const uint32_t kIQ3SGrid[512];
// IQ1_S / IQ1_M: 8 values from {-1, 0, 1} per entry, one int8 per byte (GGML: iq1s_grid).
extern const uint64_t kIQ1SGrid[2048];

}  // namespace strata::iq
