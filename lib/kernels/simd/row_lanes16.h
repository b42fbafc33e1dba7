// kernels/simd/row_lanes16.h — AVX-512 only: 16 weight rows in the int32 lanes of a vector, what
// the few-token products that take a row per lane share (gemm_kquant_rows16_avx512.h,
// gemm_legacy_rows16_avx512.h): a tile's row starts, the transposition of the rows' dwords to one
// vector per position (or their loads from two 8-row groups), F16 values by lane, IQ4 codes
// by lookup.
// Must not touch: any weight type's layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/simd/intrinsics.h"
#include "kernels/simd/nibbles.h"

namespace {
namespace simd {

// Lane L holds row lane_rows()[L]: the order the transposition leaves (rows 0-3, 8-11, 4-7,
// 12-15; its own inverse).
inline __m512i lane_rows() { return _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15); }

// Where a tile's 16 rows start, ldw apart: the first nr (1..16) rows, and past them row 0
// again (read, never stored), so that a range's last rows take the same path.
struct RowSpan {
    size_t at[16];
    __m512i lanes;  // at[] by lane (int32)
    RowSpan(size_t ldw, int nr) {
        for (int r = 0; r < 16; ++r) at[r] = r < nr ? r * ldw : 0;
        const __m512i row = _mm512_maskz_mov_epi32(_mm512_cmplt_epi32_mask(lane_rows(), _mm512_set1_epi32(nr)), lane_rows());
        lanes = _mm512_mullo_epi32(row, _mm512_set1_epi32(static_cast<int>(ldw)));
    }
    // The dwords from byte `offset` of each row's block, one vector each in lane_rows()
    // order (transpose4, transpose8 below), and its F16 value there (halves16): what the
    // K-quant forms that also read the 8-row layouts take (Interleaved16).
    static constexpr int kInterleave = 1;  // blocks of a super-block: one row's
    void dwords4(const uint8_t* block, size_t offset, __m512i (&out)[4]) const;
    void dwords8(const uint8_t* block, size_t offset, __m512i (&out)[8]) const;
    __m512 halves(const uint8_t* block, size_t offset) const;
    // The same where the value leads its block (2 more bytes of the row follow it).
    __m512 leading_halves(const uint8_t* block, size_t offset) const;
    // A vector by lane in row order (row r in lane r): what a tile stores.
    static __m512 by_row(__m512 lanes) { return _mm512_permutexvar_ps(lane_rows(), lanes); }
};

// The 8 dwords at w + rows.at[r] (r = 0..15) as 8 vectors: lane L of out[i] is dword i of
// row lane_rows()[L].
inline void transpose8(const uint8_t* w, const RowSpan& rows, __m512i (&out)[8]) {
    __m512i z[8], a[8], b[8];
    auto half = [&](int r) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + rows.at[r])); };
    for (int i = 0; i < 8; ++i) z[i] = _mm512_inserti64x4(_mm512_castsi256_si512(half(i)), half(i + 8), 1);
    // 128-bit lanes of z[i]: row i dwords 0-3, 4-7, row i + 8 dwords 0-3, 4-7.
    for (int p = 0; p < 4; ++p) {
        a[2 * p] = _mm512_unpacklo_epi32(z[2 * p], z[2 * p + 1]);
        a[2 * p + 1] = _mm512_unpackhi_epi32(z[2 * p], z[2 * p + 1]);
    }
    // b[4q + d]: rows 4q .. 4q + 3 (and + 8), dwords d and d + 4, one per 128-bit lane.
    for (int q = 0; q < 2; ++q)
        for (int h = 0; h < 2; ++h) {
            b[4 * q + 2 * h] = _mm512_unpacklo_epi64(a[4 * q + h], a[4 * q + h + 2]);
            b[4 * q + 2 * h + 1] = _mm512_unpackhi_epi64(a[4 * q + h], a[4 * q + h + 2]);
        }
    for (int d = 0; d < 4; ++d) {
        out[d] = _mm512_shuffle_i32x4(b[d], b[4 + d], _MM_SHUFFLE(2, 0, 2, 0));
        out[d + 4] = _mm512_shuffle_i32x4(b[d], b[4 + d], _MM_SHUFFLE(3, 1, 3, 1));
    }
}

// Four 128-bit rows as the lanes of one vector (lane r: row r).
inline __m512i quad_lanes(__m128i r0, __m128i r1, __m128i r2, __m128i r3) {
    const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(r0), r1, 1);
    const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(r2), r3, 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// The 4 dwords at w + rows.at[r] (r = 0..15) as 4 vectors, lane L of out[c] dword c of row
// lane_rows()[L] (for the scale bytes and d).
inline void transpose4(const uint8_t* w, const RowSpan& rows, __m512i (&out)[4]) {
    auto head = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + rows.at[r])); };
    auto quad = [&](int r) { return quad_lanes(head(r), head(r + 1), head(r + 2), head(r + 3)); };
    // h[k]: the rows of lanes 4k .. 4k + 3, one per 128-bit lane.
    const __m512i h[4] = {quad(0), quad(8), quad(4), quad(12)};
    // Dword c of the 8 rows of h[x], h[y] in lanes 0-7, dword c + 2 in lanes 8-15.
    auto pick = [](int c) {
        return _mm512_setr_epi32(c, 4 + c, 8 + c, 12 + c, 16 + c, 20 + c, 24 + c, 28 + c, c + 2, 6 + c, 10 + c, 14 + c, 18 + c, 22 + c,
                                 26 + c, 30 + c);
    };
    const __m512i lo02 = _mm512_permutex2var_epi32(h[0], pick(0), h[1]), hi02 = _mm512_permutex2var_epi32(h[2], pick(0), h[3]);
    const __m512i lo13 = _mm512_permutex2var_epi32(h[0], pick(1), h[1]), hi13 = _mm512_permutex2var_epi32(h[2], pick(1), h[3]);
    const __m512i low = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const __m512i high = _mm512_add_epi32(low, _mm512_set1_epi32(8));
    out[0] = _mm512_permutex2var_epi32(lo02, low, hi02);
    out[1] = _mm512_permutex2var_epi32(lo13, low, hi13);
    out[2] = _mm512_permutex2var_epi32(lo02, high, hi02);
    out[3] = _mm512_permutex2var_epi32(lo13, high, hi13);
}

inline void RowSpan::dwords4(const uint8_t* block, size_t offset, __m512i (&out)[4]) const { transpose4(block + offset, *this, out); }
inline void RowSpan::dwords8(const uint8_t* block, size_t offset, __m512i (&out)[8]) const { transpose8(block + offset, *this, out); }

// Interleaved16 stands where RowSpan does for two 8-row groups (tensor/repack.h: Q4_K_R8,
// ...), the second 8 ldw on from the first (or the first again when nr <= 8: read,
// never stored): each of their dword vectors (8 rows) is one load, and the two join in
// row order (lane r: row r) with one 256-bit insert from memory, where 16 rows as stored
// take 3 shuffles a vector (transpose8); joined in lane_rows() order instead (a two-source
// permutation and a register copy a vector) was about as fast (tests/bench/HISTORY.md,
// "Interleaved16").
// halves loads the 8 F16 values of each group that follow its dwords (Q6_K's d).
struct Interleaved16 {
    static constexpr int kInterleave = 8;  // blocks of a super-block in each group
    size_t second;
    Interleaved16(size_t ldw, int nr) : second(nr > 8 ? 8 * ldw : 0) {}
    __m512i join(const uint8_t* a) const {
        const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
        return _mm512_inserti64x4(_mm512_castsi256_si512(lo), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + second)), 1);
    }
    template <int N>
    void dwords(const uint8_t* block, size_t offset, __m512i (&out)[N]) const {
        for (int i = 0; i < N; ++i) out[i] = join(block + 8 * offset + 32 * i);
    }
    void dwords4(const uint8_t* block, size_t offset, __m512i (&out)[4]) const { dwords(block, offset, out); }
    void dwords8(const uint8_t* block, size_t offset, __m512i (&out)[8]) const { dwords(block, offset, out); }
    __m512 halves(const uint8_t* block, size_t offset) const {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 8 * offset));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + second + 8 * offset));
        return _mm512_cvtph_ps(_mm256_set_m128i(b, a));
    }
    // Interleaved, a leading value is read as any other.
    __m512 leading_halves(const uint8_t* block, size_t offset) const { return halves(block, offset); }
    static __m512 by_row(__m512 lanes) { return lanes; }
};

// A dword in every lane, loaded as such (vpdpbusd's {1to16} operand): a broadcast from a
// general register would take a vector pipe.
inline __m512i dword16(const void* p) { return _mm512_broadcastd_epi32(_mm_loadu_si32(p)); }

// The F16 values at w + rows.at[r] (r = 0..15) by lane.
inline __m512 halves16(const uint8_t* w, const RowSpan& rows) {
    // The dword ending with each value: its high word (the block's bytes before it).
    const __m512i dwords = _mm512_i32gather_epi32(rows.lanes, w - 2, 1);
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dwords, 16)));
}

inline __m512 RowSpan::halves(const uint8_t* block, size_t offset) const { return halves16(block + offset, *this); }
// The dword that starts with each value (its low word; the block's bytes after it).
inline __m512 RowSpan::leading_halves(const uint8_t* block, size_t offset) const {
    const __m512i dwords = _mm512_i32gather_epi32(lanes, block + offset, 1);
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dwords));
}

// IQ4 codes (bytes 0..15) to their table values + 128 (1..241, unsigned for vpdpbusd).
inline __m512i iq4_unsigned16(__m512i codes) {
    return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm256_castsi256_si128(iq4_table(-128))), codes);
}

}  // namespace simd
}  // namespace
