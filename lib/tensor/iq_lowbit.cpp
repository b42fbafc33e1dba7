// tensor/iq_lowbit.cpp — decoding of the lattice formats IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ3_XXS and IQ3_S as GGML defines them: dequantization and the dot product with Q8_K
// activations in the order of GGML's generic ggml_vec_dot_<type>_q8_K. Both go through one
// decoder per type, which turns a 32-weight sub-block into signed codebook values and integer
// scales. No quantizers: GGML's need an importance matrix. Must not touch: other formats,
// kernels.
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/codecs.h"
#include "tensor/fp16.h"
#include "tensor/iq_grids.h"

namespace strata {
namespace {

using namespace iq;

// A decoded sub-block of 32 weights: weight j = d * c * ls[j / 16] * (v[j] + shift[j / 8] / 8),
// with d the super-block scale and c the type's constant (Lattice below). ls are odd; shift
// is +-1 for the IQ1 types (their +-1/8 offset per group) and 0 for the others.
struct Sub {
    int8_t v[32];
    int ls[2];
    int8_t shift[4] = {0, 0, 0, 0};
};

// Byte j of a packed codebook entry.
template <class Word>
int entry_byte(Word w, int j) { return static_cast<int>((w >> 8 * j) & 0xFF); }

// n magnitudes of entry g with the signs of sign byte s (bit first + j for element j).
template <class Word>
void signed_entry(Word g, uint8_t s, int first, int n, int8_t* out) {
    for (int j = 0; j < n; ++j)
        out[j] = static_cast<int8_t>(s & kIQ2SignMask[first + j] ? -entry_byte(g, j) : entry_byte(g, j));
}

uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// IQ2_XXS: per sub-block 8 bytes; bytes 0..3 index kIQ2XXSGrid, the word of bytes 4..7 holds
// four 7-bit sign indices (kIQ2Signs) and the 4-bit scale s in its top bits: ls = 2s + 1.
void decode_iq2_xxs(const void* blk, int ib, Sub& s) {
    const auto* q = reinterpret_cast<const uint8_t*>(static_cast<const BlockIQ2_XXS*>(blk)->qs) + 8 * ib;
    const uint32_t aux = load_u32(q + 4);
    s.ls[0] = s.ls[1] = 2 * static_cast<int>(aux >> 28) + 1;
    for (int l = 0; l < 4; ++l) signed_entry(kIQ2XXSGrid[q[l]], kIQ2Signs[(aux >> 7 * l) & 127], 0, 8, s.v + 8 * l);
}

// IQ2_XS: per group of 8 a 16-bit word, 9 bits of kIQ2XSGrid index and a 7-bit sign index;
// a 4-bit scale per half sub-block (low nibble: first half).
void decode_iq2_xs(const void* blk, int ib, Sub& s) {
    const auto& b = *static_cast<const BlockIQ2_XS*>(blk);
    s.ls[0] = 2 * (b.scales[ib] & 0xF) + 1;
    s.ls[1] = 2 * (b.scales[ib] >> 4) + 1;
    for (int l = 0; l < 4; ++l) {
        const uint16_t q = b.qs[4 * ib + l];
        signed_entry(kIQ2XSGrid[q & 511], kIQ2Signs[q >> 9], 0, 8, s.v + 8 * l);
    }
}

// IQ2_S: 10-bit kIQ2SGrid indices (low 8 bits in qs[0..32), 2 high bits per group in qh), the
// eight sign bits of each group stored whole in qs[32..64); scales as IQ2_XS.
void decode_iq2_s(const void* blk, int ib, Sub& s) {
    const auto& b = *static_cast<const BlockIQ2_S*>(blk);
    s.ls[0] = 2 * (b.scales[ib] & 0xF) + 1;
    s.ls[1] = 2 * (b.scales[ib] >> 4) + 1;
    for (int l = 0; l < 4; ++l) {
        const int index = b.qs[4 * ib + l] | ((b.qh[ib] << (8 - 2 * l)) & 0x300);
        signed_entry(kIQ2SGrid[index], b.qs[QK_K / 8 + 4 * ib + l], 0, 8, s.v + 8 * l);
    }
}

// IQ3_XXS: qs[0..64) index kIQ3XXSGrid, two entries of 4 per group of 8; qs[64..96) holds a
// word per sub-block laid out as IQ2_XXS's second word.
void decode_iq3_xxs(const void* blk, int ib, Sub& s) {
    const uint8_t* q = static_cast<const BlockIQ3_XXS*>(blk)->qs;
    const uint32_t aux = load_u32(q + QK_K / 4 + 4 * ib);
    s.ls[0] = s.ls[1] = 2 * static_cast<int>(aux >> 28) + 1;
    for (int l = 0; l < 4; ++l) {
        const uint8_t signs = kIQ2Signs[(aux >> 7 * l) & 127];
        signed_entry(kIQ3XXSGrid[q[8 * ib + 2 * l]], signs, 0, 4, s.v + 8 * l);
        signed_entry(kIQ3XXSGrid[q[8 * ib + 2 * l + 1]], signs, 4, 4, s.v + 8 * l + 4);
    }
}

// IQ3_S: 9-bit kIQ3SGrid indices (low 8 bits in qs, the ninth in qh[ib], bit 2l or 2l + 1),
// whole sign bytes, one 4-bit scale per sub-block (nibble ib % 2 of scales[ib / 2]).
void decode_iq3_s(const void* blk, int ib, Sub& s) {
    const auto& b = *static_cast<const BlockIQ3_S*>(blk);
    s.ls[0] = s.ls[1] = 2 * ((b.scales[ib / 2] >> 4 * (ib % 2)) & 0xF) + 1;
    const uint8_t* q = b.qs + 8 * ib;
    for (int l = 0; l < 4; ++l) {
        const uint8_t signs = b.signs[4 * ib + l];
        signed_entry(kIQ3SGrid[q[2 * l] | ((b.qh[ib] << (8 - 2 * l)) & 256)], signs, 0, 4, s.v + 8 * l);
        signed_entry(kIQ3SGrid[q[2 * l + 1] | ((b.qh[ib] << (7 - 2 * l)) & 256)], signs, 4, 4, s.v + 8 * l + 4);
    }
}

// Eight values from {-1, 0, 1} of kIQ1SGrid entry index.
void iq1_entry(int index, int8_t* out) {
    for (int j = 0; j < 8; ++j) out[j] = static_cast<int8_t>(entry_byte(kIQ1SGrid[index], j));
}

// IQ1_S: 11-bit kIQ1SGrid indices (low 8 bits in qs, 3 high bits per group in qh[ib] bits
// 3l..3l + 2), a 3-bit scale in bits 12..14 and the sign of the shift in bit 15.
void decode_iq1_s(const void* blk, int ib, Sub& s) {
    const auto& b = *static_cast<const BlockIQ1_S*>(blk);
    const int qh = b.qh[ib];
    s.ls[0] = s.ls[1] = 2 * ((qh >> 12) & 7) + 1;
    for (int l = 0; l < 4; ++l) {
        iq1_entry(b.qs[4 * ib + l] | (((qh >> 3 * l) & 7) << 8), s.v + 8 * l);
        s.shift[l] = qh & 0x8000 ? -1 : 1;
    }
}

// The four 16-bit words of an IQ1_M block's scales: 3-bit scales in bits 0..11, the F16
// super-block scale in the top nibbles (word 0: its bits 0..3, ..., word 3: bits 12..15).
void iq1_m_words(const BlockIQ1_M& b, uint16_t sc[4]) { std::memcpy(sc, b.scales, sizeof b.scales); }

// IQ1_M: 11-bit indices (3 high bits in a nibble of qh, whose bit 3 is the group's shift
// sign), a 3-bit scale per half sub-block.
void decode_iq1_m(const void* blk, int ib, Sub& s) {
    const auto& b = *static_cast<const BlockIQ1_M*>(blk);
    uint16_t sc[4];
    iq1_m_words(b, sc);
    s.ls[0] = 2 * ((sc[ib / 2] >> 6 * (ib % 2)) & 7) + 1;
    s.ls[1] = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1;
    for (int l = 0; l < 4; ++l) {
        const int nibble = (b.qh[2 * ib + l / 2] >> 4 * (l % 2)) & 0xF;
        iq1_entry(b.qs[4 * ib + l] | ((nibble & 7) << 8), s.v + 8 * l);
        s.shift[l] = nibble & 8 ? -1 : 1;
    }
}

float iq1_m_scale(const void* blk) {
    uint16_t sc[4];
    iq1_m_words(*static_cast<const BlockIQ1_M*>(blk), sc);
    return fp16_to_fp32(static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000)));
}

// The F16 d at the start of every other lattice block.
float leading_d(const void* blk) {
    uint16_t d;
    std::memcpy(&d, blk, sizeof d);
    return fp16_to_fp32(d);
}

// A lattice type: its decoder, its super-block scale and its constant c. GGML's scale
// expressions (IQ2: d * (0.5 + s) / 4, IQ3_XXS: d * (0.5 + s) / 2, IQ3_S and IQ1: d * (2s + 1))
// equal (d * ls) * c exactly, c being a power of two; its dot products end with the same c.
struct Lattice {
    uint32_t bytes;
    void (*decode)(const void* blk, int ib, Sub& s);
    float (*d)(const void* blk);
    float c;
};

Lattice lattice(DType t) {
    switch (t) {
        case DType::IQ2_XXS: return {sizeof(BlockIQ2_XXS), decode_iq2_xxs, leading_d, 0.125f};
        case DType::IQ2_XS: return {sizeof(BlockIQ2_XS), decode_iq2_xs, leading_d, 0.125f};
        case DType::IQ2_S: return {sizeof(BlockIQ2_S), decode_iq2_s, leading_d, 0.125f};
        case DType::IQ3_XXS: return {sizeof(BlockIQ3_XXS), decode_iq3_xxs, leading_d, 0.25f};
        case DType::IQ3_S: return {sizeof(BlockIQ3_S), decode_iq3_s, leading_d, 1.0f};
        case DType::IQ1_S: return {sizeof(BlockIQ1_S), decode_iq1_s, leading_d, 1.0f};
        default: return {sizeof(BlockIQ1_M), decode_iq1_m, iq1_m_scale, 1.0f};
    }
}

constexpr float kShift = 0.125f;  // GGML's IQ1S_DELTA / IQ1M_DELTA

}  // namespace

bool is_lattice_type(DType t) {
    switch (t) {
        case DType::IQ2_XXS: case DType::IQ2_XS: case DType::IQ2_S: case DType::IQ3_XXS: case DType::IQ3_S:
        case DType::IQ1_S: case DType::IQ1_M:
            return true;
        default: return false;
    }
}

void dequantize_lattice(DType t, const void* x, float* y, int64_t n) {
    const Lattice L = lattice(t);
    const auto* blk = static_cast<const uint8_t*>(x);
    for (int64_t b = 0; b < n / QK_K; ++b, blk += L.bytes) {
        const float d = L.d(blk);
        for (int ib = 0; ib < QK_K / 32; ++ib, y += 32) {
            Sub s;
            L.decode(blk, ib, s);
            for (int j = 0; j < 32; ++j) y[j] = d * s.ls[j / 16] * L.c * (s.v[j] + kShift * s.shift[j / 8]);
        }
    }
}

// Per super-block two integer sums, sum(ls * v * q8) and sum(ls * shift * q8), combined in
// float as GGML's generic dots do.
float dot_lattice_q8_k(DType t, const void* w, const void* va, int64_t k) {
    const Lattice L = lattice(t);
    const auto* blk = static_cast<const uint8_t*>(w);
    const auto* a = static_cast<const BlockQ8_K*>(va);
    float sum = 0;
    for (int64_t b = 0; b < k / QK_K; ++b, blk += L.bytes) {
        int isum = 0, ishift = 0;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            Sub s;
            L.decode(blk, ib, s);
            const int8_t* q8 = a[b].qs + 32 * ib;
            for (int g = 0; g < 4; ++g) {
                int dot = 0, plain = 0;
                for (int j = 8 * g; j < 8 * g + 8; ++j) {
                    dot += s.v[j] * q8[j];
                    plain += q8[j];
                }
                isum += s.ls[g / 2] * dot;
                ishift += s.ls[g / 2] * s.shift[g] * plain;
            }
        }
        sum += L.d(blk) * a[b].d * (isum + kShift * ishift);
    }
    return L.c * sum;
}

}  // namespace strata
