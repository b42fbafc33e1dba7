// kernels/simd/row_lanes8.h — 8 weight rows in the int32 lanes of a 256-bit vector, what the
// few-token products that take a row per lane share (gemm_kquant_rows8_avx2.h,
// gemm_legacy_rows8_avx2.h; AVX2, and the 8-row layouts on both variants): a tile's row starts,
// the transposition of the rows' dwords to one vector per position (rows in natural lane
// order) or their loads from an 8-row group, the dword broadcast, F16 values by lane.
// The AVX-512 counterpart is row_lanes16.h.
// Must not touch: any weight type's layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/simd/intrinsics.h"

namespace {
namespace simd {

// Where a tile's 8 rows start, ldw apart: the first nr (1..8) rows, and past them row 0
// again (read, never stored), so that a range's last rows take the same path.
struct RowSpan8 {
    size_t at[8];
    RowSpan8(size_t ldw, int nr) {
        for (int r = 0; r < 8; ++r) at[r] = r < nr ? r * ldw : 0;
    }
    static constexpr int kInterleave = 1;  // blocks of a super-block: one row's
    void dwords4(const uint8_t* block, size_t offset, __m256i* out) const;
    void dwords8(const uint8_t* block, size_t offset, __m256i (&out)[8], int second = 16) const;
    __m256 halves(const uint8_t* block, size_t offset) const;
};

// The 4 dwords at w + rows.at[r] (r = 0..7) as 4 vectors: lane r of out[c] is dword c of
// row r.
inline void transpose4x8(const uint8_t* w, const RowSpan8& rows, __m256i* out) {
    auto two = [&](int r) {
        const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + rows.at[r]));
        return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + rows.at[r + 4])), 1);
    };
    // z[i]: rows i and i + 4, one per 128-bit lane.
    const __m256i z0 = two(0), z1 = two(1), z2 = two(2), z3 = two(3);
    const __m256i a0 = _mm256_unpacklo_epi32(z0, z1), a1 = _mm256_unpackhi_epi32(z0, z1);
    const __m256i a2 = _mm256_unpacklo_epi32(z2, z3), a3 = _mm256_unpackhi_epi32(z2, z3);
    out[0] = _mm256_unpacklo_epi64(a0, a2);
    out[1] = _mm256_unpackhi_epi64(a0, a2);
    out[2] = _mm256_unpacklo_epi64(a1, a3);
    out[3] = _mm256_unpackhi_epi64(a1, a3);
}

// The same for 8 dwords (32 bytes per row), dwords 4..7 the 16 bytes at w + second.
inline void transpose8x8(const uint8_t* w, const RowSpan8& rows, __m256i (&out)[8], int second = 16) {
    transpose4x8(w, rows, out);
    transpose4x8(w + second, rows, out + 4);
}

inline void RowSpan8::dwords4(const uint8_t* block, size_t offset, __m256i* out) const { transpose4x8(block + offset, *this, out); }
inline void RowSpan8::dwords8(const uint8_t* block, size_t offset, __m256i (&out)[8], int second) const {
    transpose8x8(block + offset, *this, out, second);
}

// Interleaved8 stands where RowSpan8 does for an 8-row group (tensor/repack.h: Q4_K_R8,
// ...), which holds each dword of its 8 rows' super-block as one vector already:
// dwords4 and dwords8 (both: the dwords from byte `offset` of every row's block, one vector
// each with a row in each lane; dwords8's last 4 from offset + second) load them where
// RowSpan8's transpose, and halves (the F16 value at `offset` of each row's block, by lane)
// loads the 8 values that follow the dwords (Q6_K's d, past its last whole dword).
struct Interleaved8 {
    static constexpr int kInterleave = 8;  // blocks of a super-block: the group's 8 rows'
    Interleaved8(size_t, int) {}
    void dwords4(const uint8_t* block, size_t offset, __m256i* out) const {
        for (int i = 0; i < 4; ++i) out[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 8 * offset + 32 * i));
    }
    void dwords8(const uint8_t* block, size_t offset, __m256i (&out)[8], int second = 16) const {
        dwords4(block, offset, out);
        dwords4(block, offset + second, out + 4);
    }
    __m256 halves(const uint8_t* block, size_t offset) const {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 8 * offset)));
    }
};

// A dword in every lane, loaded as such (a broadcast from a general register would take a
// vector pipe).
inline __m256i dword8(const void* p) { return _mm256_broadcastd_epi32(_mm_loadu_si32(p)); }

// The F16 values at w + rows.at[r] (r = 0..7) by lane.
inline __m256 halves8(const uint8_t* w, const RowSpan8& rows) {
    uint16_t h[8];
    for (int r = 0; r < 8; ++r) std::memcpy(&h[r], w + rows.at[r], sizeof h[r]);
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)));
}

inline __m256 RowSpan8::halves(const uint8_t* block, size_t offset) const { return halves8(block + offset, *this); }

}  // namespace simd
}  // namespace
