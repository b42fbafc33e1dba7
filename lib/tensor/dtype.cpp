// tensor/dtype.cpp — the table of element types strata understands.
#include "tensor/dtype.h"

#include <array>
#include <cctype>
#include <stdexcept>

namespace strata {
namespace {

constexpr std::array kTypes = {
    DTypeInfo{DType::F32, "F32", 1, 4},
    DTypeInfo{DType::F16, "F16", 1, 2},
    DTypeInfo{DType::Q4_0, "Q4_0", 32, 18},
    DTypeInfo{DType::Q4_1, "Q4_1", 32, 20},
    DTypeInfo{DType::Q5_0, "Q5_0", 32, 22},
    DTypeInfo{DType::Q5_1, "Q5_1", 32, 24},
    DTypeInfo{DType::Q8_0, "Q8_0", 32, 34},
    DTypeInfo{DType::Q8_1, "Q8_1", 32, 36},
    DTypeInfo{DType::Q2_K, "Q2_K", 256, 84},
    DTypeInfo{DType::Q3_K, "Q3_K", 256, 110},
    DTypeInfo{DType::Q4_K, "Q4_K", 256, 144},
    DTypeInfo{DType::Q5_K, "Q5_K", 256, 176},
    DTypeInfo{DType::Q6_K, "Q6_K", 256, 210},
    DTypeInfo{DType::Q8_K, "Q8_K", 256, 292},
    DTypeInfo{DType::I8, "I8", 1, 1},
    DTypeInfo{DType::I16, "I16", 1, 2},
    DTypeInfo{DType::I32, "I32", 1, 4},
    DTypeInfo{DType::I64, "I64", 1, 8},
    DTypeInfo{DType::F64, "F64", 1, 8},
    DTypeInfo{DType::BF16, "BF16", 1, 2},
};

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t id) {
    for (const auto& t : kTypes)
        if (static_cast<uint32_t>(t.type) == id) return t;
    return std::nullopt;
}

const DTypeInfo& dtype_info(DType t) {
    for (const auto& i : kTypes)
        if (i.type == t) return i;
    throw std::logic_error("dtype_info: unknown DType");
}

std::string_view dtype_name(DType t) { return dtype_info(t).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
    for (const auto& t : kTypes)
        if (iequals(t.name, name)) return t.type;
    return std::nullopt;
}

}  // namespace strata
