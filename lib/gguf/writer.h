// gguf/writer.h — writing GGUF v3 files: metadata, tensor infos and data, streamed so
// that multi-gigabyte models are produced without holding them in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"

namespace strata::gguf {

// Refuses (std::invalid_argument) anything the reader would reject: a bad alignment,
// empty or over-long keys and names, duplicate tensor names, bad shapes, too many entries.
class Writer {
public:
    // alignment: a power of two up to kMaxAlignment; general.alignment records it and is
    // fixed from then on.
    explicit Writer(uint32_t alignment = kDefaultAlignment);

    // Metadata, in insertion order; setting a key again replaces its value in place.
    void set_u32(std::string_view key, uint32_t v);
    void set_i32(std::string_view key, int32_t v);
    void set_u64(std::string_view key, uint64_t v);
    void set_f32(std::string_view key, float v);
    void set_bool(std::string_view key, bool v);
    void set_string(std::string_view key, std::string_view v);
    void set_strings(std::string_view key, const std::vector<std::string>& v);
    void set_f32s(std::string_view key, const std::vector<float>& v);
    void set_i32s(std::string_view key, const std::vector<int32_t>& v);
    void set_bools(std::string_view key, const std::vector<bool>& v);
    // A value copied verbatim from a parsed file.
    void set_value(std::string_view key, const Value& v);
    void remove(std::string_view key);
    bool has(std::string_view key) const;

    // Fills exactly `nbytes` bytes of tensor data by calling `out` one or more times.
    using Emit = std::function<void(const void* data, size_t n)>;
    using Fill = std::function<void(const Emit& out)>;
    void add_tensor(std::string name, DType type, std::vector<int64_t> ne, Fill fill);
    // Convenience: the bytes are copied when the file is written (must stay valid until then).
    void add_tensor(std::string name, DType type, std::vector<int64_t> ne, const void* data);

    // Writes the whole file atomically (temporary file + rename). Throws std::runtime_error.
    void write(const std::string& path) const;
    // The file write() would produce with its tensor data left as a hole (a sparse file of the
    // same size, no data written; fills are not called): enough to open it and plan a
    // conversion of a model too large to write twice. Not atomic. Throws std::runtime_error.
    void write_layout(const std::string& path) const;
    // The encoded file in memory (tests; small models only).
    std::vector<uint8_t> bytes() const;

private:
    struct Kv {
        std::string key;
        ValueType type;
        std::vector<uint8_t> payload;  // encoded value without the type tag
    };
    struct Tensor {
        std::string name;
        DType type;
        std::vector<int64_t> ne;
        uint64_t nbytes;
        Fill fill;
    };
    void set(std::string_view key, ValueType t, std::vector<uint8_t> payload);
    std::vector<uint8_t> head() const;  // header, metadata and tensor infos, padded
    uint64_t padded(uint64_t n) const;  // n rounded up to the alignment
    void emit(const Emit& out) const;

    uint32_t alignment_;
    std::vector<Kv> kv_;
    std::vector<Tensor> tensors_;
    std::set<std::string, std::less<>> tensor_names_;
};

}  // namespace strata::gguf
