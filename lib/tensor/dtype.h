// tensor/dtype.h — element types and their storage geometry (block size, bytes per block).
// Owns: the DType enum (numbered exactly as GGML's ggml_type so GGUF type ids map 1:1),
// names, block geometry and row-size arithmetic. Must not touch: files, kernels, models.
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
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    BF16 = 30,
};

struct DTypeInfo {
    DType type;
    std::string_view name;   // GGML spelling: "F32", "Q4_K", ...
    uint32_t block_elems;    // elements per block (1 for plain types)
    uint32_t block_bytes;    // bytes per block
};

// Geometry of a known type id, or nullopt for ids strata does not know (including
// GGML types that exist but are not supported, e.g. the IQ families).
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
