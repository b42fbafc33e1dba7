// tensor/dtype.cpp — lookups in the table of element types strata understands (dtype.h).
#include "tensor/dtype.h"

#include <cctype>
#include <stdexcept>

namespace strata {
namespace {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t id) {
    for (const auto& t : kDTypeTable)
        if (static_cast<uint32_t>(t.type) == id && t.in_files) return t;
    return std::nullopt;
}

const DTypeInfo& dtype_info(DType t) {
    for (const auto& i : kDTypeTable)
        if (i.type == t) return i;
    throw std::logic_error("dtype_info: unknown DType");
}

std::string_view dtype_name(DType t) { return dtype_info(t).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
    for (const auto& t : kDTypeTable)
        if (iequals(t.name, name)) return t.type;
    return std::nullopt;
}

}  // namespace strata
