// tensor/blocks.h — quantized block layouts, byte-for-byte identical to GGML's.
// Owns: the structs and the constants QK (elements per block). Every struct's size is
// checked at compile time against the GGUF block size in dtype.h's table.
// Inline functions here are for the generic code only: SIMD translation units (kernels/simd)
// must not call them (an AVX-512 copy could be the one the linker keeps).
#pragma once

#include <cstdint>

namespace strata {

constexpr int QK4_NL = 32, QK_MXFP4 = 32;
constexpr int QK4_0 = 32, QK4_1 = 32, QK5_0 = 32, QK5_1 = 32, QK8_0 = 32, QK8_1 = 32;
constexpr int QK_K = 256;
constexpr int K_SCALE_SIZE = 12;

struct BlockQ4_0 { uint16_t d; uint8_t qs[QK4_0 / 2]; };
struct BlockQ4_1 { uint16_t d, m; uint8_t qs[QK4_1 / 2]; };
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; };
struct BlockQ5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[QK8_0]; };
struct BlockQ8_1 { uint16_t d, s; int8_t qs[QK8_1]; };  // s = d * sum(qs)

// K-quants: super-blocks of 256.
struct BlockQ2_K { uint8_t scales[QK_K / 16]; uint8_t qs[QK_K / 4]; uint16_t d, dmin; };
struct BlockQ3_K { uint8_t hmask[QK_K / 8]; uint8_t qs[QK_K / 4]; uint8_t scales[12]; uint16_t d; };
struct BlockQ4_K { uint16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; };
struct BlockQ5_K { uint16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; };
struct BlockQ6_K { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; uint16_t d; };
struct BlockQ8_K { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; };  // activations only

// Non-linear 4-bit: each code indexes kIQ4NLValues, scaled by the block's d. IQ4_NL blocks
// hold 32 weights (low nibbles of qs[j]: element j, high nibbles: element j + 16); IQ4_XS
// super-blocks hold eight such 32-element sub-blocks, each with a 6-bit scale (ls - 32) * d:
// its low 4 bits in scales_l (nibble ib), its high 2 bits in scales_h (bits 2ib, 2ib + 1).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
struct BlockIQ4_NL { uint16_t d; uint8_t qs[QK4_NL / 2]; };
struct BlockIQ4_XS { uint16_t d; uint16_t scales_h; uint8_t scales_l[QK_K / 64]; uint8_t qs[QK_K / 2]; };

// MXFP4 (OCP microscaling FP4): 32 E2M1 codes (element j in the low nibble of qs[j], element
// j + 16 in the high nibble) sharing a power-of-two scale, the E8M0 byte e (2^(e - 127)).
// kMXFP4Values holds the E2M1 values doubled (0, ±0.5, ±1, ±1.5, ±2, ±3, ±4, ±6 times 2), so a
// weight is kMXFP4Values[code] * 2^(e - 128) (GGML's kvalues_mxfp4 and E8M0_TO_FP32_HALF).
inline constexpr int8_t kMXFP4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
struct BlockMXFP4 { uint8_t e; uint8_t qs[QK_MXFP4 / 2]; };

// Lattice formats (tensor/iq_grids.h), super-blocks of 256 in eight sub-blocks of 32 whose
// groups of 8 (IQ3: 4) weights are one codebook entry each; the bit-level layout of each is
// documented with its decoder in tensor/iq_lowbit.cpp.
struct BlockIQ2_XXS { uint16_t d; uint16_t qs[QK_K / 8]; };
struct BlockIQ2_XS { uint16_t d; uint16_t qs[QK_K / 8]; uint8_t scales[QK_K / 32]; };
struct BlockIQ2_S { uint16_t d; uint8_t qs[QK_K / 4]; uint8_t qh[QK_K / 32]; uint8_t scales[QK_K / 32]; };
struct BlockIQ3_XXS { uint16_t d; uint8_t qs[3 * QK_K / 8]; };
struct BlockIQ3_S { uint16_t d; uint8_t qs[QK_K / 4]; uint8_t qh[QK_K / 32]; uint8_t signs[QK_K / 8]; uint8_t scales[QK_K / 64]; };
struct BlockIQ1_S { uint16_t d; uint8_t qs[QK_K / 8]; uint16_t qh[QK_K / 32]; };
struct BlockIQ1_M { uint8_t qs[QK_K / 8]; uint8_t qh[QK_K / 16]; uint8_t scales[QK_K / 32]; };  // no d: in scales

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockMXFP4) == 17);
static_assert(sizeof(BlockIQ2_XXS) == 66);
static_assert(sizeof(BlockIQ2_XS) == 74);
static_assert(sizeof(BlockIQ2_S) == 82);
static_assert(sizeof(BlockIQ3_XXS) == 98);
static_assert(sizeof(BlockIQ3_S) == 110);
static_assert(sizeof(BlockIQ1_S) == 50);
static_assert(sizeof(BlockIQ1_M) == 56);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block.
inline void get_scale_min_k4(int j, const uint8_t* q, uint8_t& d, uint8_t& m) {
    if (j < 4) {
        d = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4);
    }
}

// The 6-bit scale ls (0..63) of sub-block ib (0..7) of an IQ4_XS super-block; its weights
// are d * (ls - 32) * kIQ4NLValues[code].
inline int iq4xs_scale(const BlockIQ4_XS& b, int ib) {
    return ((b.scales_l[ib / 2] >> 4 * (ib % 2)) & 0xF) | (((b.scales_h >> 2 * ib) & 3) << 4);
}

}  // namespace strata
