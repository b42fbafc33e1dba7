// kernels/gemm_routes.h — the legend of the matrix products, and their dispatch: one row per
// (ISA, weight type, token range) naming the kernel that serves it. Each variant's install
// (scalar_dot.cpp, simd/gemm_*.cpp) fills its table from the rows of its ISA and the kernels
// its sources provide, and gemm() picks the row by token count, so this table cannot drift
// from what runs. Adding a weight type: its rows here (every ISA, token ranges from 1 up to
// kAnyTokens), its kernels in the family's source. kernel_bench --legend prints the table.
// Must not touch: the kernels (scalar_dot.cpp, simd/), CPU detection (dispatch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"
#include "tensor/dtype.h"

namespace strata::kernels::detail {

// A kernel: one entry point per weight type, in the source named by kernel_source().
enum class Kernel : uint8_t {
    ScalarDots,     // the reference: one dot per (row, token)
    ScalarR8Rows,   // the reference for an 8-row layout: each row out of its group, then its dots
    FloatFused,     // few tokens: weights widened in registers, straight from the row
    FloatStepped,   // weights widened once per 256-element step and token block
    LegacyRows8,    // 8 rows x up to 8 tokens a tile, a row per int32 lane (AVX2 vpmaddubsw)
    LegacyRows16,   // 16 rows x up to 8 tokens a tile (vpdpbusd); 1-2 tokens a row at a time
    LegacyX4,       // 4 rows x 4 tokens in every vector's 16 lanes
    LegacyR8,       // the 8-row layouts Q8_0_R8, Q4_0_R8, IQ4_NL_R8, read as stored
    KQuantRows8,    // 8 rows x up to 8 tokens a tile, a row per int32 lane (AVX2 vpmaddubsw)
    KQuantQuads,    // 16-row lanes or 4 rows x 4 groups (vpdpbusd), up to 8 tokens a tile
    KQuantX4,       // 4 rows x 4 tokens in every vector's 16 lanes
    KQuantR8,       // the 8-row layouts Q4_K_R8, Q5_K_R8, Q6_K_R8, IQ4_XS_R8, read as stored
    Q4KResident,    // one token of Q4_K_R: group sums in lanes of their own
    Mxfp4Blocks,    // MXFP4: 8 blocks' integer dots a step, reduced together
    LatticeSubs,    // IQ1_S..IQ3_S: each sub-block's entries gathered once for 4 (AVX-512: 16) tokens
    LatticePanels,  // IQ1_S..IQ3_S, many tokens: rows decoded once into bytes, 8 rows x 8 (16) tokens a tile
};

constexpr const char* kernel_name(Kernel k) {
    switch (k) {
        case Kernel::ScalarDots: return "scalar-dots";
        case Kernel::ScalarR8Rows: return "scalar-r8-rows";
        case Kernel::FloatFused: return "float-fused";
        case Kernel::FloatStepped: return "float-stepped";
        case Kernel::LegacyRows8: return "legacy-rows8";
        case Kernel::LegacyRows16: return "legacy-rows16";
        case Kernel::LegacyX4: return "legacy-x4";
        case Kernel::LegacyR8: return "legacy-r8";
        case Kernel::KQuantRows8: return "kquant-rows8";
        case Kernel::KQuantQuads: return "kquant-quads";
        case Kernel::KQuantX4: return "kquant-x4";
        case Kernel::KQuantR8: return "kquant-r8";
        case Kernel::Q4KResident: return "q4k-resident";
        case Kernel::Mxfp4Blocks: return "mxfp4-blocks";
        case Kernel::LatticeSubs: return "lattice-subs";
        case Kernel::LatticePanels: return "lattice-panels";
    }
    return "?";
}

// Where the kernel's inner choices (tiles by token count, one-token paths) are written down.
constexpr const char* kernel_source(Kernel k) {
    switch (k) {
        case Kernel::ScalarDots: case Kernel::ScalarR8Rows: return "scalar_dot.cpp";
        case Kernel::FloatFused: case Kernel::FloatStepped: return "simd/gemm_float.h";
        case Kernel::LegacyRows8: return "simd/gemm_legacy_rows8_avx2.h";
        case Kernel::LegacyRows16: return "simd/gemm_legacy_rows16_avx512.h";
        case Kernel::LegacyX4: return "simd/gemm_legacy_x4_avx512.h";
        case Kernel::LegacyR8: return "simd/gemm_legacy_lanes.h";
        case Kernel::KQuantRows8: return "simd/gemm_kquant_rows8_avx2.h";
        case Kernel::KQuantQuads: return "simd/gemm_kquant_quads_avx512.h";
        case Kernel::KQuantX4: return "simd/gemm_kquant_x4_avx512.h";
        case Kernel::KQuantR8: return "simd/gemm_kquant_r8.h";
        case Kernel::Q4KResident: return "simd/gemm_kquant_q4k_r.h";
        case Kernel::Mxfp4Blocks: case Kernel::LatticeSubs: return "simd/gemm_lattice.h";
        case Kernel::LatticePanels: return "simd/gemm_lattice_panels.h";
    }
    return "?";
}

constexpr int64_t kAnyTokens = INT64_MAX;
// Float weights: the fused kernel up to as many tokens as its registers hold (FloatGemm's
// kFusedTokens; the stepped one's unpacking pays from there).
constexpr int64_t kFloatFusedAvx2 = 2, kFloatFusedAvx512 = 4;
// AVX-512 quantized weights: the 4 x 4 lanes only past 64 tokens; below, their interleaving
// per call costs more than it saves (tests/bench/HISTORY.md, "kX4ChunkedTokens: the 4 x 4
// lanes from 65 tokens").
constexpr int64_t kX4FromTokens = 65;
// The lattice formats: decoded panels from this many tokens (below, decoding a row into bytes
// costs more than the sub-block products save).
constexpr int64_t kLatticePanelsFrom = 8;

struct GemmRow {
    Isa isa;
    DType w;
    int64_t min_tokens, max_tokens;
    Kernel kernel;
};

// Rows of one (ISA, type) follow each other in token order, from 1 to kAnyTokens.
inline constexpr GemmRow kGemmRows[] = {
    // The scalar reference: every type, every token count.
    {Isa::Scalar, DType::F32, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::F16, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::BF16, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q4_0, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q4_1, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q5_0, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q5_1, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q8_0, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ4_NL, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q8_0_R8, 1, kAnyTokens, Kernel::ScalarR8Rows},
    {Isa::Scalar, DType::Q4_0_R8, 1, kAnyTokens, Kernel::ScalarR8Rows},
    {Isa::Scalar, DType::IQ4_NL_R8, 1, kAnyTokens, Kernel::ScalarR8Rows},
    {Isa::Scalar, DType::Q2_K, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q3_K, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q4_K, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q5_K, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q6_K, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ4_XS, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q4_K_R, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::Q4_K_R8, 1, kAnyTokens, Kernel::ScalarR8Rows},
    {Isa::Scalar, DType::Q5_K_R8, 1, kAnyTokens, Kernel::ScalarR8Rows},
    {Isa::Scalar, DType::Q6_K_R8, 1, kAnyTokens, Kernel::ScalarR8Rows},
    {Isa::Scalar, DType::IQ4_XS_R8, 1, kAnyTokens, Kernel::ScalarR8Rows},
    // MXFP4 and the lattice formats: tensor/dot_ref.h's GGML generic dots.
    {Isa::Scalar, DType::MXFP4, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ1_S, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ1_M, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ2_XXS, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ2_XS, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ2_S, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ3_XXS, 1, kAnyTokens, Kernel::ScalarDots},
    {Isa::Scalar, DType::IQ3_S, 1, kAnyTokens, Kernel::ScalarDots},

    // AVX2 (with FMA, F16C, BMI2).
    {Isa::Avx2, DType::F32, 1, kFloatFusedAvx2, Kernel::FloatFused},
    {Isa::Avx2, DType::F32, kFloatFusedAvx2 + 1, kAnyTokens, Kernel::FloatStepped},
    {Isa::Avx2, DType::F16, 1, kFloatFusedAvx2, Kernel::FloatFused},
    {Isa::Avx2, DType::F16, kFloatFusedAvx2 + 1, kAnyTokens, Kernel::FloatStepped},
    {Isa::Avx2, DType::BF16, 1, kFloatFusedAvx2, Kernel::FloatFused},
    {Isa::Avx2, DType::BF16, kFloatFusedAvx2 + 1, kAnyTokens, Kernel::FloatStepped},
    {Isa::Avx2, DType::Q4_0, 1, kAnyTokens, Kernel::LegacyRows8},
    {Isa::Avx2, DType::Q4_1, 1, kAnyTokens, Kernel::LegacyRows8},
    {Isa::Avx2, DType::Q5_0, 1, kAnyTokens, Kernel::LegacyRows8},
    {Isa::Avx2, DType::Q5_1, 1, kAnyTokens, Kernel::LegacyRows8},
    {Isa::Avx2, DType::Q8_0, 1, kAnyTokens, Kernel::LegacyRows8},
    {Isa::Avx2, DType::IQ4_NL, 1, kAnyTokens, Kernel::LegacyRows8},
    {Isa::Avx2, DType::Q8_0_R8, 1, kAnyTokens, Kernel::LegacyR8},
    {Isa::Avx2, DType::Q4_0_R8, 1, kAnyTokens, Kernel::LegacyR8},
    {Isa::Avx2, DType::IQ4_NL_R8, 1, kAnyTokens, Kernel::LegacyR8},
    {Isa::Avx2, DType::Q2_K, 1, kAnyTokens, Kernel::KQuantRows8},
    {Isa::Avx2, DType::Q3_K, 1, kAnyTokens, Kernel::KQuantRows8},
    {Isa::Avx2, DType::Q4_K, 1, kAnyTokens, Kernel::KQuantRows8},
    {Isa::Avx2, DType::Q5_K, 1, kAnyTokens, Kernel::KQuantRows8},
    {Isa::Avx2, DType::Q6_K, 1, kAnyTokens, Kernel::KQuantRows8},
    {Isa::Avx2, DType::IQ4_XS, 1, kAnyTokens, Kernel::KQuantRows8},
    {Isa::Avx2, DType::Q4_K_R, 1, 1, Kernel::Q4KResident},
    {Isa::Avx2, DType::Q4_K_R, 2, kAnyTokens, Kernel::KQuantRows8},
    {Isa::Avx2, DType::Q4_K_R8, 1, kAnyTokens, Kernel::KQuantR8},
    {Isa::Avx2, DType::Q5_K_R8, 1, kAnyTokens, Kernel::KQuantR8},
    {Isa::Avx2, DType::Q6_K_R8, 1, kAnyTokens, Kernel::KQuantR8},
    {Isa::Avx2, DType::IQ4_XS_R8, 1, kAnyTokens, Kernel::KQuantR8},
    // MXFP4 and the lattice formats: GGML's vec_dot structure, bit-exact to the reference.
    {Isa::Avx2, DType::MXFP4, 1, kAnyTokens, Kernel::Mxfp4Blocks},
    {Isa::Avx2, DType::IQ1_S, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx2, DType::IQ1_S, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx2, DType::IQ1_M, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx2, DType::IQ1_M, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx2, DType::IQ2_XXS, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx2, DType::IQ2_XXS, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx2, DType::IQ2_XS, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx2, DType::IQ2_XS, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx2, DType::IQ2_S, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx2, DType::IQ2_S, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx2, DType::IQ3_XXS, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx2, DType::IQ3_XXS, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx2, DType::IQ3_S, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx2, DType::IQ3_S, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},

    // AVX-512 (F, BW, VL, DQ, VNNI).
    {Isa::Avx512, DType::F32, 1, kFloatFusedAvx512, Kernel::FloatFused},
    {Isa::Avx512, DType::F32, kFloatFusedAvx512 + 1, kAnyTokens, Kernel::FloatStepped},
    {Isa::Avx512, DType::F16, 1, kFloatFusedAvx512, Kernel::FloatFused},
    {Isa::Avx512, DType::F16, kFloatFusedAvx512 + 1, kAnyTokens, Kernel::FloatStepped},
    {Isa::Avx512, DType::BF16, 1, kFloatFusedAvx512, Kernel::FloatFused},
    {Isa::Avx512, DType::BF16, kFloatFusedAvx512 + 1, kAnyTokens, Kernel::FloatStepped},
    {Isa::Avx512, DType::Q4_0, 1, kX4FromTokens - 1, Kernel::LegacyRows16},
    {Isa::Avx512, DType::Q4_0, kX4FromTokens, kAnyTokens, Kernel::LegacyX4},
    {Isa::Avx512, DType::Q4_1, 1, kX4FromTokens - 1, Kernel::LegacyRows16},
    {Isa::Avx512, DType::Q4_1, kX4FromTokens, kAnyTokens, Kernel::LegacyX4},
    {Isa::Avx512, DType::Q5_0, 1, kX4FromTokens - 1, Kernel::LegacyRows16},
    {Isa::Avx512, DType::Q5_0, kX4FromTokens, kAnyTokens, Kernel::LegacyX4},
    {Isa::Avx512, DType::Q5_1, 1, kX4FromTokens - 1, Kernel::LegacyRows16},
    {Isa::Avx512, DType::Q5_1, kX4FromTokens, kAnyTokens, Kernel::LegacyX4},
    {Isa::Avx512, DType::Q8_0, 1, kX4FromTokens - 1, Kernel::LegacyRows16},
    {Isa::Avx512, DType::Q8_0, kX4FromTokens, kAnyTokens, Kernel::LegacyX4},
    {Isa::Avx512, DType::IQ4_NL, 1, kX4FromTokens - 1, Kernel::LegacyRows16},
    {Isa::Avx512, DType::IQ4_NL, kX4FromTokens, kAnyTokens, Kernel::LegacyX4},
    {Isa::Avx512, DType::Q8_0_R8, 1, kAnyTokens, Kernel::LegacyR8},
    {Isa::Avx512, DType::Q4_0_R8, 1, kAnyTokens, Kernel::LegacyR8},
    {Isa::Avx512, DType::IQ4_NL_R8, 1, kAnyTokens, Kernel::LegacyR8},
    {Isa::Avx512, DType::Q2_K, 1, kX4FromTokens - 1, Kernel::KQuantQuads},
    {Isa::Avx512, DType::Q2_K, kX4FromTokens, kAnyTokens, Kernel::KQuantX4},
    {Isa::Avx512, DType::Q3_K, 1, kX4FromTokens - 1, Kernel::KQuantQuads},
    {Isa::Avx512, DType::Q3_K, kX4FromTokens, kAnyTokens, Kernel::KQuantX4},
    {Isa::Avx512, DType::Q4_K, 1, kX4FromTokens - 1, Kernel::KQuantQuads},
    {Isa::Avx512, DType::Q4_K, kX4FromTokens, kAnyTokens, Kernel::KQuantX4},
    {Isa::Avx512, DType::Q5_K, 1, kX4FromTokens - 1, Kernel::KQuantQuads},
    {Isa::Avx512, DType::Q5_K, kX4FromTokens, kAnyTokens, Kernel::KQuantX4},
    {Isa::Avx512, DType::Q6_K, 1, kX4FromTokens - 1, Kernel::KQuantQuads},
    {Isa::Avx512, DType::Q6_K, kX4FromTokens, kAnyTokens, Kernel::KQuantX4},
    {Isa::Avx512, DType::IQ4_XS, 1, kX4FromTokens - 1, Kernel::KQuantQuads},
    {Isa::Avx512, DType::IQ4_XS, kX4FromTokens, kAnyTokens, Kernel::KQuantX4},
    {Isa::Avx512, DType::Q4_K_R, 1, 1, Kernel::Q4KResident},
    {Isa::Avx512, DType::Q4_K_R, 2, kX4FromTokens - 1, Kernel::KQuantQuads},
    {Isa::Avx512, DType::Q4_K_R, kX4FromTokens, kAnyTokens, Kernel::KQuantX4},
    {Isa::Avx512, DType::Q4_K_R8, 1, kAnyTokens, Kernel::KQuantR8},
    {Isa::Avx512, DType::Q5_K_R8, 1, kAnyTokens, Kernel::KQuantR8},
    {Isa::Avx512, DType::Q6_K_R8, 1, kAnyTokens, Kernel::KQuantR8},
    {Isa::Avx512, DType::IQ4_XS_R8, 1, kAnyTokens, Kernel::KQuantR8},
    // MXFP4 and the lattice formats: AVX2's 256-bit kernels, with the AVX-512 encodings.
    {Isa::Avx512, DType::MXFP4, 1, kAnyTokens, Kernel::Mxfp4Blocks},
    {Isa::Avx512, DType::IQ1_S, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx512, DType::IQ1_S, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx512, DType::IQ1_M, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx512, DType::IQ1_M, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx512, DType::IQ2_XXS, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx512, DType::IQ2_XXS, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx512, DType::IQ2_XS, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx512, DType::IQ2_XS, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx512, DType::IQ2_S, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx512, DType::IQ2_S, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx512, DType::IQ3_XXS, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx512, DType::IQ3_XXS, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
    {Isa::Avx512, DType::IQ3_S, 1, kLatticePanelsFrom - 1, Kernel::LatticeSubs},
    {Isa::Avx512, DType::IQ3_S, kLatticePanelsFrom, kAnyTokens, Kernel::LatticePanels},
};
constexpr size_t kGemmRowCount = sizeof(kGemmRows) / sizeof(kGemmRows[0]);

// The most rows one (ISA, type) has.
constexpr int kMaxRoutes = 3;

// Each (ISA, type) starts at 1 token, continues where its previous row ended and ends at
// kAnyTokens, within kMaxRoutes rows: checked when this header compiles.
constexpr bool rows_are_contiguous() {
    for (size_t i = 0; i < kGemmRowCount; ++i) {
        const GemmRow& r = kGemmRows[i];
        const bool continues = i > 0 && kGemmRows[i - 1].isa == r.isa && kGemmRows[i - 1].w == r.w;
        if (r.min_tokens > r.max_tokens) return false;
        if (r.min_tokens != (continues ? kGemmRows[i - 1].max_tokens + 1 : 1)) return false;
        const bool last = i + 1 == kGemmRowCount || kGemmRows[i + 1].isa != r.isa || kGemmRows[i + 1].w != r.w;
        if (last && r.max_tokens != kAnyTokens) return false;
        int n = 1;
        for (size_t j = i; j > 0 && kGemmRows[j - 1].isa == r.isa && kGemmRows[j - 1].w == r.w; --j) ++n;
        if (n > kMaxRoutes) return false;
        for (size_t j = 0; j < i && !continues; ++j)  // one run of rows per (ISA, type)
            if (kGemmRows[j].isa == r.isa && kGemmRows[j].w == r.w) return false;
    }
    return true;
}
static_assert(rows_are_contiguous(), "kGemmRows: each (ISA, type) needs one run of rows covering 1..kAnyTokens");

}  // namespace strata::kernels::detail
