// tensor/dtype.h — element types and their storage geometry (block size, bytes per block).
// Owns: the DType enum (numbered exactly as GGML's ggml_type so GGUF type ids map 1:1,
// plus strata's own in-memory layouts, which no file holds), names, block geometry and
// row-size arithmetic. Must not touch: files, kernels, models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

enum class DType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    MXFP4 = 39,
    // strata's own layouts (tensor/repack.h), above GGML's ids: weights rearranged at load,
    // never read from or written to a file.
    Q4_K_R = 100,
    Q4_K_R8 = 101,
    Q6_K_R8 = 102,
    Q5_K_R8 = 103,
    IQ4_XS_R8 = 104,
    Q8_0_R8 = 105,
    Q4_0_R8 = 106,
    IQ4_NL_R8 = 107,
};

struct DTypeInfo {
    DType type;
    std::string_view name;   // GGML spelling: "F32", "Q4_K", ...
    uint32_t block_elems;    // elements per block (1 for plain types)
    uint32_t block_bytes;    // bytes per block
    bool in_files = true;    // false: an in-memory layout of strata's, not a GGUF type
};

// The table of types strata knows (dtype.cpp's lookups and everything sized by type id
// derive from it: adding a type means adding its enum value and its row here).
inline constexpr DTypeInfo kDTypeTable[] = {
    {DType::F32, "F32", 1, 4},
    {DType::F16, "F16", 1, 2},
    {DType::Q4_0, "Q4_0", 32, 18},
    {DType::Q4_1, "Q4_1", 32, 20},
    {DType::Q5_0, "Q5_0", 32, 22},
    {DType::Q5_1, "Q5_1", 32, 24},
    {DType::Q8_0, "Q8_0", 32, 34},
    {DType::Q8_1, "Q8_1", 32, 36},
    {DType::Q2_K, "Q2_K", 256, 84},
    {DType::Q3_K, "Q3_K", 256, 110},
    {DType::Q4_K, "Q4_K", 256, 144},
    {DType::Q5_K, "Q5_K", 256, 176},
    {DType::Q6_K, "Q6_K", 256, 210},
    {DType::Q8_K, "Q8_K", 256, 292},
    {DType::IQ2_XXS, "IQ2_XXS", 256, 66},
    {DType::IQ2_XS, "IQ2_XS", 256, 74},
    {DType::IQ3_XXS, "IQ3_XXS", 256, 98},
    {DType::IQ1_S, "IQ1_S", 256, 50},
    {DType::IQ4_NL, "IQ4_NL", 32, 18},
    {DType::IQ3_S, "IQ3_S", 256, 110},
    {DType::IQ2_S, "IQ2_S", 256, 82},
    {DType::IQ4_XS, "IQ4_XS", 256, 136},
    {DType::I8, "I8", 1, 1},
    {DType::I16, "I16", 1, 2},
    {DType::I32, "I32", 1, 4},
    {DType::I64, "I64", 1, 8},
    {DType::F64, "F64", 1, 8},
    {DType::IQ1_M, "IQ1_M", 256, 56},
    {DType::BF16, "BF16", 1, 2},
    {DType::MXFP4, "MXFP4", 32, 17},
    {DType::Q4_K_R, "Q4_K_R", 256, 144, false},
    {DType::Q4_K_R8, "Q4_K_R8", 256, 144, false},
    {DType::Q6_K_R8, "Q6_K_R8", 256, 210, false},
    {DType::Q5_K_R8, "Q5_K_R8", 256, 176, false},
    {DType::IQ4_XS_R8, "IQ4_XS_R8", 256, 136, false},
    {DType::Q8_0_R8, "Q8_0_R8", 32, 34, false},
    {DType::Q4_0_R8, "Q4_0_R8", 32, 18, false},
    {DType::IQ4_NL_R8, "IQ4_NL_R8", 32, 18, false},
};

// One past the largest type id of the table: arrays indexed by type id have this size.
consteval uint32_t dtype_id_limit() {
    uint32_t limit = 0;
    for (const DTypeInfo& t : kDTypeTable)
        if (static_cast<uint32_t>(t.type) + 1 > limit) limit = static_cast<uint32_t>(t.type) + 1;
    return limit;
}
inline constexpr uint32_t kDTypeIdLimit = dtype_id_limit();

// Geometry of a type id a file may hold, or nullopt for ids strata does not know (GGML types
// it has no codec for, e.g. TQ1_0, NVFP4) and for its in-memory layouts.
std::optional<DTypeInfo> dtype_info(uint32_t id);
const DTypeInfo& dtype_info(DType t);

std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);  // case-insensitive

// Whether t stores blocks of elements with shared scales (Q4_0, Q8_0, Q4_K, ...), as
// opposed to one value per element (F32, F16, BF16, the integer types).
inline bool is_block_quantized(DType t) { return dtype_info(t).block_elems > 1; }

// Bytes used by n elements of type t; n must be a multiple of the block size.
inline uint64_t dtype_bytes(DType t, uint64_t n) {
    const DTypeInfo& i = dtype_info(t);
    return n / i.block_elems * i.block_bytes;
}

}  // namespace strata
