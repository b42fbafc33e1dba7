// kernels/simd/gemm_lattice_panels.h — the lattice formats' (IQ1_S..IQ3_S) products for many
// tokens: a block of rows is decoded once into plain signed bytes (gemm_lattice.h's sub-blocks,
// the sign put on each entry; for the IQ1 types 8 x entry + the group's shift sign, so that one
// integer carries both of the reference's sums) with each 16 weights' scale, each super-block's
// offset correction and its d, and every token of the call meets that panel. The activations
// become unsigned bytes (q + 128) with a token in each 32-bit lane (16 tokens a vector on
// AVX-512, 8 on AVX2), so each step broadcasts 4 weights of a row against a vector of tokens:
// vpdpbusd on AVX-512 (a group's sum then times its scale, vpmulld), vpmaddubsw and vpmaddwd by
// the scale on AVX2. The integer sums are the reference's (the q + 128 taken back by the
// correction), and the float step per super-block is its step in its order, lane by lane, so
// every result equals tensor/dot_ref.h's bit for bit.
// Must not touch: the sub-block decoding (gemm_lattice.h), other weight families.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/simd/gemm_driver.h"
#include "kernels/simd/gemm_lattice.h"

namespace {
namespace simd {

// One row's super-block in a panel: its d, minus 128 x the scaled sum of its weights (what
// the activations' + 128 adds), and each 16 weights' scale (as int32, for one broadcast).
struct PanelMeta {
    float d;
    int32_t offset;
    int32_t ls[strata::QK_K / 16];
};

// A decoded row: QK_K signed bytes per super-block, then its blocks' PanelMeta.
struct PanelRow {
    int8_t* w;
    PanelMeta* meta;
};

// The bytes of sub-block s as the panel holds them.
template <class Type>
__m256i panel_bytes(const LatticeSub& s) {
    if constexpr (!Type::kShift) return _mm256_sign_epi8(s.mag, s.sgn);
    // IQ1: entries -1, 0, 1 times 8, plus the sign of the group's shift (s.shift's words, 4 a
    // group of 8 bytes, hold +-ls).
    const __m256i shift = _mm256_or_si256(_mm256_cmpgt_epi16(_mm256_setzero_si256(), s.shift), _mm256_set1_epi16(1));
    const __m256i shift_bytes = _mm256_or_si256(_mm256_and_si256(shift, _mm256_set1_epi16(0xFF)), _mm256_slli_epi16(shift, 8));
    return _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), s.sgn), shift_bytes);
}

// Row `w`'s `blocks` super-blocks into the panel row p.
template <class Type>
void decode_panel_row(const typename Type::Block* w, int64_t blocks, PanelRow p) {
    const __m256i ones = _mm256_set1_epi8(1);
    for (int64_t b = 0; b < blocks; ++b) {
        PanelMeta& m = p.meta[b];
        __m256i scaled = _mm256_setzero_si256();
        for (int ib = 0; ib < strata::QK_K / 32; ++ib) {
            LatticeSub s;
            if constexpr (requires { Type::sub_wide(w[b], ib, s); }) Type::sub_wide(w[b], ib, s);
            else Type::sub(w[b], ib, s);
            const __m256i bytes = panel_bytes<Type>(s);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(p.w + b * strata::QK_K + 32 * ib), bytes);
            m.ls[2 * ib] = _mm256_extract_epi16(s.scale, 0);
            m.ls[2 * ib + 1] = _mm256_extract_epi16(s.scale, 8);
            scaled = _mm256_add_epi32(scaled, _mm256_madd_epi16(_mm256_maddubs_epi16(ones, bytes), s.scale));
        }
        m.d = Type::d(w[b]);
        m.offset = -128 * hsum_i32(scaled);
    }
}

#ifdef __AVX512VNNI__
// 16 tokens a vector: one token's 4 bytes in each 32-bit lane.
struct PanelLanes {
    static constexpr int kTokens = 16;
    using I = __m512i;
    using F = __m512;
    static I load(const uint8_t* p) { return _mm512_load_si512(p); }
    static I set1(int32_t x) { return _mm512_set1_epi32(x); }
    static I add(I a, I b) { return _mm512_add_epi32(a, b); }
    // acc + the products of `chunks` 4-byte steps of a row's bytes w against the tokens'
    // activations at acts (one vector a step), times the group's scale ls.
    template <int Chunks>
    static I group(I acc, const uint8_t* acts, const int8_t* w, int32_t ls) {
        I sum = _mm512_setzero_si512();
        for (int c = 0; c < Chunks; ++c) sum = _mm512_dpbusd_epi32(sum, load(acts + 64 * c), set1(load_u32(w + 4 * c)));
        return add(acc, _mm512_mullo_epi32(sum, set1(ls)));
    }
    static F to_float(I v) { return _mm512_cvtepi32_ps(v); }
    static F fset1(float x) { return _mm512_set1_ps(x); }
    static F fzero() { return _mm512_setzero_ps(); }
    static F fload(const float* p) { return _mm512_load_ps(p); }
    static F fadd(F a, F b) { return _mm512_add_ps(a, b); }
    static F fmul(F a, F b) { return _mm512_mul_ps(a, b); }
    static void fstore(float* p, F v) { _mm512_storeu_ps(p, v); }
};
#else
// 8 tokens a vector: vpmaddubsw's int16 pairs (at most 2 x 255 x 62, no saturation) into
// int32 by vpmaddwd with the scale.
struct PanelLanes {
    static constexpr int kTokens = 8;
    using I = __m256i;
    using F = __m256;
    static I load(const uint8_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
    static I set1(int32_t x) { return _mm256_set1_epi32(x); }
    static I add(I a, I b) { return _mm256_add_epi32(a, b); }
    template <int Chunks>
    static I group(I acc, const uint8_t* acts, const int8_t* w, int32_t ls) {
        const I scale = _mm256_set1_epi16(static_cast<short>(ls));
        for (int c = 0; c < Chunks; ++c)
            acc = add(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(load(acts + 32 * c), set1(load_u32(w + 4 * c))), scale));
        return acc;
    }
    static F to_float(I v) { return _mm256_cvtepi32_ps(v); }
    static F fset1(float x) { return _mm256_set1_ps(x); }
    static F fzero() { return _mm256_setzero_ps(); }
    static F fload(const float* p) { return _mm256_load_ps(p); }
    static F fadd(F a, F b) { return _mm256_add_ps(a, b); }
    static F fmul(F a, F b) { return _mm256_mul_ps(a, b); }
    static void fstore(float* p, F v) { _mm256_storeu_ps(p, v); }
};
#endif

// A vector of tokens' activations for one super-block: 64 steps of 4 bytes (q + 128) per
// token, then the tokens' d.
constexpr int64_t kLaneBlockBytes = 64 * PanelLanes::kTokens * 4 + PanelLanes::kTokens * 4;

// Tokens [t0, t0 + kTokens) of X (Q8_K rows ldx apart; those past nt as zeros) into lane
// blocks, one per super-block.
inline void prepare_lanes(const uint8_t* X, size_t ldx, int64_t t0, int64_t nt, int64_t blocks, uint8_t* out) {
    constexpr int T = PanelLanes::kTokens;
    for (int64_t b = 0; b < blocks; ++b, out += kLaneBlockBytes) {
        auto* d = reinterpret_cast<float*>(out + 64 * T * 4);
        for (int t = 0; t < T; ++t) {
            const bool real = t0 + t < nt;
            const auto* a = reinterpret_cast<const strata::BlockQ8_K*>(X + (t0 + t) * ldx) + b;
            for (int c = 0; c < 64; ++c) {
                const uint32_t q = real ? load_u32(a->qs + 4 * c) ^ 0x80808080u : 0x80808080u;
                std::memcpy(out + (c * T + t) * 4, &q, 4);
            }
            d[t] = real ? a->d : 0.0f;
        }
    }
}

// NR panel rows against one vector of tokens (lane blocks `acts`), `blocks` super-blocks: per
// super-block the integer sums group by group, then the reference's float step; out[r] the
// tokens' results of row r.
template <class Type, int NR>
void panel_tile(const PanelRow* rows, const uint8_t* acts, int64_t blocks, typename PanelLanes::F (&out)[NR]) {
    using L = PanelLanes;
    constexpr int kGroup = Type::kHalves ? 4 : 8;  // 4-byte steps per scale
    typename L::F sum[NR];
    for (int r = 0; r < NR; ++r) sum[r] = L::fzero();
    for (int64_t b = 0; b < blocks; ++b, acts += kLaneBlockBytes) {
        typename L::I acc[NR];
        for (int r = 0; r < NR; ++r) acc[r] = L::set1(rows[r].meta[b].offset);
        for (int g = 0; g < 64 / kGroup; ++g)
            for (int r = 0; r < NR; ++r)
                acc[r] = L::template group<kGroup>(acc[r], acts + g * kGroup * 4 * L::kTokens,
                                                   rows[r].w + b * strata::QK_K + 4 * kGroup * g,
                                                   rows[r].meta[b].ls[g * kGroup / 4]);
        const typename L::F da = L::fload(reinterpret_cast<const float*>(acts + 64 * L::kTokens * 4));
        for (int r = 0; r < NR; ++r) {
            typename L::F x = L::to_float(acc[r]);
            if constexpr (Type::kShift) x = L::fmul(x, L::fset1(0.125f));  // (8 isum + ishift) / 8, exact
            sum[r] = L::fadd(sum[r], L::fmul(L::fmul(L::fset1(rows[r].meta[b].d), da), x));
        }
    }
    for (int r = 0; r < NR; ++r) out[r] = L::fmul(L::fset1(Type::kC), sum[r]);
}

// Rows of a panel per tile (the sums of 8 rows and their groups' products fill the registers).
constexpr int kPanelRows = 8;
// Decoded rows per block: their bytes and the tokens' lane block of one super-block step stay
// in L2 while every vector of tokens meets them.
constexpr int64_t kPanelBytes = 256 * 1024;

// Rows [r0, r1) of a lattice type against nt tokens: blocks of rows decoded into a panel, the
// tokens prepared into lane blocks once, every vector of tokens against every tile of the panel.
template <class Type>
void lattice_panels(int64_t k, const void* W, size_t ldw, int64_t r0, int64_t r1, const void* X, size_t ldx, int64_t nt, float* Y,
                    size_t ldy) {
    constexpr int T = PanelLanes::kTokens;
    const int64_t blocks = k / strata::QK_K, vectors = (nt + T - 1) / T;
    const auto* x = static_cast<const uint8_t*>(X);
    thread_local Scratch act_scratch, panel_scratch;
    auto* acts = static_cast<uint8_t*>(act_scratch.get(static_cast<size_t>(vectors * blocks * kLaneBlockBytes)));
    for (int64_t v = 0; v < vectors; ++v) prepare_lanes(x, ldx, v * T, nt, blocks, acts + v * blocks * kLaneBlockBytes);

    const int64_t row_bytes = blocks * (strata::QK_K + static_cast<int64_t>(sizeof(PanelMeta)));
    const int64_t fit = kPanelBytes / row_bytes / kPanelRows * kPanelRows, block_rows = fit > kPanelRows ? fit : kPanelRows;
    auto* panel = static_cast<uint8_t*>(panel_scratch.get(static_cast<size_t>(block_rows * row_bytes)));
    PanelRow rows[kPanelBytes / strata::QK_K];
    for (int64_t rb = r0; rb < r1; rb += block_rows) {
        const int64_t n = min64(block_rows, r1 - rb);
        for (int64_t r = 0; r < n; ++r) {
            rows[r] = {reinterpret_cast<int8_t*>(panel + r * row_bytes),
                       reinterpret_cast<PanelMeta*>(panel + r * row_bytes + blocks * strata::QK_K)};
            decode_panel_row<Type>(reinterpret_cast<const typename Type::Block*>(static_cast<const uint8_t*>(W) + (rb + r) * ldw),
                                   blocks, rows[r]);
        }
        for (int64_t v = 0; v < vectors; ++v) {
            const int64_t tokens = min64(T, nt - v * T);
            for (int64_t r = 0; r < n; r += kPanelRows) {
                with_count<kPanelRows>(static_cast<int>(min64(kPanelRows, n - r)), [&](auto nr) {
                    constexpr int NR = decltype(nr)::value;
                    typename PanelLanes::F out[NR];
                    panel_tile<Type, NR>(rows + r, acts + v * blocks * kLaneBlockBytes, blocks, out);
                    for (int i = 0; i < NR; ++i) {
                        alignas(64) float lanes[T];
                        PanelLanes::fstore(lanes, out[i]);
                        for (int64_t t = 0; t < tokens; ++t) Y[(v * T + t) * ldy + rb + r + i] = lanes[t];
                    }
                });
            }
        }
    }
}

}  // namespace simd
}  // namespace
