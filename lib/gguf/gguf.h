// gguf/gguf.h — reading GGUF v2/v3 model files over a read-only mmap.
// Owns: the file format (header, metadata key/values, tensor infos, alignment, data
// section) and its strict validation: every count, length, offset and size is checked
// against the file before use, every string (keys, values, vocabulary tokens, tensor
// names) must be UTF-8, and a bad file fails with a GgufError naming the field and its
// byte offset. Must not touch: tensor math, model semantics (hyperparameters
// are interpreted by model/, vocabularies by tokenizer/).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/dtype.h"

namespace strata::gguf {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint32_t kDefaultAlignment = 32;
constexpr uint32_t kMaxAlignment = 1u << 20;
constexpr int kMaxDims = 4;
constexpr size_t kMaxNameLength = 256;       // tensor names
constexpr size_t kMaxKeyLength = 65535;      // metadata keys
constexpr int kMaxArrayNesting = 4;
// Bounds on what one file may declare, far above any real model, so that a small
// hostile file cannot make the parser build millions of entries.
constexpr uint64_t kMaxMetadataCount = 1u << 16;  // key/value pairs
constexpr uint64_t kMaxTensorCount = 1u << 16;
constexpr uint64_t kMaxNestedArrays = 1u << 16;   // arrays inside arrays, whole file

class GgufError : public std::runtime_error {
public:
    GgufError(std::string field, uint64_t offset, const std::string& what);
    const std::string& field() const { return field_; }
    uint64_t offset() const { return offset_; }

private:
    std::string field_;
    uint64_t offset_;
};

enum class ValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};
std::string_view value_type_name(ValueType t);
// Size in bytes of one scalar of type t (0 for STRING and ARRAY).
size_t scalar_size(ValueType t);

// One metadata value. Strings and arrays are views into the mapped file: a Value
// lives as long as the File it came from.
struct Value {
    ValueType type = ValueType::U8;
    std::span<const uint8_t> raw;  // the encoded value bytes, as in the file (for copying)

    // Scalars (type != STRING/ARRAY).
    std::optional<int64_t> as_int() const;      // any integer type that fits int64, or BOOL
    std::optional<double> as_float() const;     // F32/F64 or any integer type
    std::optional<bool> as_bool() const;        // BOOL only
    std::optional<std::string_view> as_string() const;  // STRING only

    // Arrays (type == ARRAY).
    ValueType array_type = ValueType::U8;
    uint64_t array_count = 0;
    std::vector<std::string_view> strings;  // when array_type == STRING
    std::vector<Value> items;               // when array_type == ARRAY
    // Element i of a numeric array, converted; nullopt if not numeric or out of range.
    std::optional<double> number_at(uint64_t i) const;
    std::optional<int64_t> int_at(uint64_t i) const;

private:
    friend class Parser;
    std::string_view str_;
};

struct TensorInfo {
    std::string name;
    DType type = DType::F32;
    int n_dims = 0;  // 0..4; 0 is a scalar (one element), as GGML allows
    int64_t ne[kMaxDims] = {1, 1, 1, 1};  // ne[0] is the fastest-varying (row length); all >= 1
    uint64_t offset = 0;      // relative to the data section
    uint64_t file_offset = 0; // absolute position in the file
    uint64_t nbytes = 0;
    const uint8_t* data = nullptr;  // into the mapping

    int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
};

// A read-only memory map of a whole file.
class Mapping {
public:
    explicit Mapping(const std::string& path);
    ~Mapping();
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    int fd() const { return fd_; }
    const std::string& path() const { return path_; }
    // Replaces the first `length` bytes of the mapping by a private copy at the same
    // address, so that views into them (metadata) stay valid if the file is truncated.
    void make_private(uint64_t length);

private:
    std::string path_;
    int fd_ = -1;
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
};

class File {
public:
    // Maps and validates the file, then keeps its metadata (everything before the data
    // section) in private memory; throws GgufError (format problems) or
    // std::system_error (the file cannot be opened or mapped).
    static std::shared_ptr<const File> open(const std::string& path);
    // Validates an in-memory image (used by tests and the fuzzer). The bytes must outlive the File.
    static std::shared_ptr<const File> parse(std::span<const uint8_t> bytes, std::string name = "<memory>");

    const std::string& path() const { return name_; }
    uint32_t version() const { return version_; }
    uint32_t alignment() const { return alignment_; }
    uint64_t data_offset() const { return data_offset_; }
    uint64_t file_size() const { return bytes_.size(); }
    std::span<const uint8_t> bytes() const { return bytes_; }
    int fd() const;  // -1 for in-memory images

    // Metadata in file order, and by key.
    const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
    const Value* find(std::string_view key) const;
    // Typed lookups: nullopt when absent; GgufError when present with the wrong type.
    std::optional<int64_t> get_int(std::string_view key) const;
    std::optional<double> get_float(std::string_view key) const;
    std::optional<bool> get_bool(std::string_view key) const;
    std::optional<std::string_view> get_string(std::string_view key) const;
    const Value* get_array(std::string_view key) const;
    // Bounded lookups for values that size things (layer counts, head counts, epsilons):
    // nullopt when absent; GgufError naming the key, its offset and the allowed range
    // when present with the wrong type or outside [min, max] (NaN is always outside).
    std::optional<int64_t> get_int(std::string_view key, int64_t min, int64_t max) const;
    std::optional<double> get_float(std::string_view key, double min, double max) const;
    // An array whose elements must have type `element`; nullptr when absent.
    const Value* get_array(std::string_view key, ValueType element) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* tensor(std::string_view name) const;

private:
    friend class Parser;
    File() = default;
    std::unique_ptr<Mapping> mapping_;
    std::string name_;
    std::span<const uint8_t> bytes_;
    uint32_t version_ = 0;
    uint32_t alignment_ = kDefaultAlignment;
    uint64_t data_offset_ = 0;
    std::vector<std::pair<std::string, Value>> kv_;
    std::map<std::string, size_t, std::less<>> kv_index_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace strata::gguf
