// gguf/writer.cpp — encoding GGUF v3.
#include "gguf/writer.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

namespace strata::gguf {
namespace {

void put_bytes(std::vector<uint8_t>& b, const void* p, size_t n) {
    size_t at = b.size();
    b.resize(at + n);
    if (n) std::memcpy(b.data() + at, p, n);
}

template <class T>
void put(std::vector<uint8_t>& b, T v) {
    put_bytes(b, &v, sizeof v);
}

void put_string(std::vector<uint8_t>& b, std::string_view s) {
    put<uint64_t>(b, s.size());
    put_bytes(b, s.data(), s.size());
}

// Checks a tensor's shape as the reader will (0..4 dimensions, none meaning a scalar; each
// >= 1, element count within int64, whole blocks per row) and returns its size in bytes.
uint64_t tensor_bytes(const std::string& name, DType type, const std::vector<int64_t>& ne) {
    if (ne.size() > kMaxDims) throw std::invalid_argument("tensor " + name + ": at most 4 dimensions");
    uint64_t n = 1;
    for (int64_t d : ne) {
        if (d < 1 || static_cast<uint64_t>(d) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n)
            throw std::invalid_argument("tensor " + name + ": dimensions must be at least 1 and their product must fit in int64");
        n *= static_cast<uint64_t>(d);
    }
    const DTypeInfo& info = dtype_info(type);
    if ((ne.empty() ? 1 : ne[0]) % info.block_elems) throw std::invalid_argument("tensor " + name + ": row length is not a multiple of the block size");
    if (n / info.block_elems > std::numeric_limits<uint64_t>::max() / info.block_bytes)
        throw std::invalid_argument("tensor " + name + ": byte size overflows");
    return dtype_bytes(type, n);
}

template <class T>
std::vector<uint8_t> scalar(T v) {
    std::vector<uint8_t> b;
    put(b, v);
    return b;
}

template <class T>
std::vector<uint8_t> numeric_array(ValueType et, const std::vector<T>& v) {
    std::vector<uint8_t> b;
    put<uint32_t>(b, static_cast<uint32_t>(et));
    put<uint64_t>(b, v.size());
    for (T x : v) put(b, x);
    return b;
}

}  // namespace

Writer::Writer(uint32_t alignment) : alignment_(alignment) {
    if (alignment == 0 || !std::has_single_bit(alignment) || alignment > kMaxAlignment)
        throw std::invalid_argument("alignment " + std::to_string(alignment) + " is not a power of two between 1 and " +
                                    std::to_string(kMaxAlignment));
    if (alignment != kDefaultAlignment) set_u32("general.alignment", alignment);
}

void Writer::set(std::string_view key, ValueType t, std::vector<uint8_t> payload) {
    if (key.empty() || key.size() > kMaxKeyLength)
        throw std::invalid_argument("metadata keys are 1 to " + std::to_string(kMaxKeyLength) + " bytes long");
    if (key == "general.alignment" && !(t == ValueType::U32 && payload == scalar(alignment_)))
        throw std::invalid_argument("general.alignment is fixed by the Writer's constructor");
    for (auto& kv : kv_)
        if (kv.key == key) {
            kv.type = t;
            kv.payload = std::move(payload);
            return;
        }
    if (kv_.size() == kMaxMetadataCount) throw std::invalid_argument("more than " + std::to_string(kMaxMetadataCount) + " metadata keys");
    kv_.push_back({std::string(key), t, std::move(payload)});
}

void Writer::set_u32(std::string_view k, uint32_t v) { set(k, ValueType::U32, scalar(v)); }
void Writer::set_i32(std::string_view k, int32_t v) { set(k, ValueType::I32, scalar(v)); }
void Writer::set_u64(std::string_view k, uint64_t v) { set(k, ValueType::U64, scalar(v)); }
void Writer::set_f32(std::string_view k, float v) { set(k, ValueType::F32, scalar(v)); }
void Writer::set_bool(std::string_view k, bool v) { set(k, ValueType::BOOL, scalar<uint8_t>(v ? 1 : 0)); }

void Writer::set_string(std::string_view k, std::string_view v) {
    std::vector<uint8_t> b;
    put_string(b, v);
    set(k, ValueType::STRING, std::move(b));
}

void Writer::set_strings(std::string_view k, const std::vector<std::string>& v) {
    std::vector<uint8_t> b;
    put<uint32_t>(b, static_cast<uint32_t>(ValueType::STRING));
    put<uint64_t>(b, v.size());
    for (const auto& s : v) put_string(b, s);
    set(k, ValueType::ARRAY, std::move(b));
}

void Writer::set_f32s(std::string_view k, const std::vector<float>& v) { set(k, ValueType::ARRAY, numeric_array(ValueType::F32, v)); }
void Writer::set_i32s(std::string_view k, const std::vector<int32_t>& v) { set(k, ValueType::ARRAY, numeric_array(ValueType::I32, v)); }

void Writer::set_bools(std::string_view k, const std::vector<bool>& v) {
    set(k, ValueType::ARRAY, numeric_array(ValueType::BOOL, std::vector<uint8_t>(v.begin(), v.end())));
}

void Writer::set_value(std::string_view k, const Value& v) { set(k, v.type, std::vector<uint8_t>(v.raw.begin(), v.raw.end())); }

void Writer::remove(std::string_view k) {
    if (k == "general.alignment" && alignment_ != kDefaultAlignment)
        throw std::invalid_argument("general.alignment is fixed by the Writer's constructor");
    std::erase_if(kv_, [&](const Kv& kv) { return kv.key == k; });
}

bool Writer::has(std::string_view k) const {
    for (const auto& kv : kv_)
        if (kv.key == k) return true;
    return false;
}

void Writer::add_tensor(std::string name, DType type, std::vector<int64_t> ne, Fill fill) {
    if (name.empty() || name.size() > kMaxNameLength)
        throw std::invalid_argument("tensor names are 1 to " + std::to_string(kMaxNameLength) + " bytes long");
    if (tensor_names_.count(name)) throw std::invalid_argument("tensor " + name + " added twice");
    if (tensors_.size() == kMaxTensorCount) throw std::invalid_argument("more than " + std::to_string(kMaxTensorCount) + " tensors");
    uint64_t nbytes = tensor_bytes(name, type, ne);
    tensor_names_.insert(name);
    tensors_.push_back({std::move(name), type, std::move(ne), nbytes, std::move(fill)});
}

void Writer::add_tensor(std::string name, DType type, std::vector<int64_t> ne, const void* data) {
    auto* p = static_cast<const uint8_t*>(data);
    uint64_t nbytes = tensor_bytes(name, type, ne);
    add_tensor(std::move(name), type, std::move(ne), [p, nbytes](const Emit& out) { out(p, nbytes); });
}

std::vector<uint8_t> Writer::head() const {
    std::vector<uint8_t> head;
    put<uint32_t>(head, kMagic);
    put<uint32_t>(head, 3);
    put<uint64_t>(head, tensors_.size());
    put<uint64_t>(head, kv_.size());
    for (const auto& kv : kv_) {
        put_string(head, kv.key);
        put<uint32_t>(head, static_cast<uint32_t>(kv.type));
        put_bytes(head, kv.payload.data(), kv.payload.size());
    }
    uint64_t offset = 0;
    for (const auto& t : tensors_) {
        put_string(head, t.name);
        put<uint32_t>(head, static_cast<uint32_t>(t.ne.size()));
        for (int64_t d : t.ne) put<uint64_t>(head, static_cast<uint64_t>(d));
        put<uint32_t>(head, static_cast<uint32_t>(t.type));
        put<uint64_t>(head, offset);
        offset = padded(offset + t.nbytes);
    }
    head.resize(padded(head.size()), 0);
    return head;
}

uint64_t Writer::padded(uint64_t n) const { return (n + alignment_ - 1) / alignment_ * alignment_; }

void Writer::emit(const Emit& out) const {
    const std::vector<uint8_t> head = this->head();
    out(head.data(), head.size());
    static const std::vector<uint8_t> zeros(kMaxAlignment, 0);
    for (const auto& t : tensors_) {
        uint64_t written = 0;
        t.fill([&](const void* d, size_t n) {
            written += n;
            if (written > t.nbytes) throw std::logic_error("tensor " + t.name + ": fill wrote too many bytes");
            out(d, n);
        });
        if (written != t.nbytes) throw std::logic_error("tensor " + t.name + ": fill wrote " + std::to_string(written) + " of " + std::to_string(t.nbytes) + " bytes");
        out(zeros.data(), padded(t.nbytes) - t.nbytes);
    }
}

void Writer::write_layout(const std::string& path) const {
    const std::vector<uint8_t> head = this->head();
    uint64_t size = head.size();
    for (const auto& t : tensors_) size += padded(t.nbytes);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::system_error(errno, std::generic_category(), "cannot create " + path);
    const bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size() && std::fflush(f) == 0 &&
                    ::ftruncate(::fileno(f), static_cast<off_t>(size)) == 0;
    const int error = errno;
    if (std::fclose(f) != 0 || !ok) {
        std::remove(path.c_str());
        throw std::system_error(ok ? errno : error, std::generic_category(), "cannot write " + path);
    }
}

void Writer::write(const std::string& path) const {
    std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::system_error(errno, std::generic_category(), "cannot create " + tmp);
    try {
        emit([&](const void* d, size_t n) {
            if (n && std::fwrite(d, 1, n, f) != n) throw std::system_error(errno, std::generic_category(), "cannot write " + tmp);
        });
        if (std::fclose(f) != 0) {
            f = nullptr;
            throw std::system_error(errno, std::generic_category(), "cannot write " + tmp);
        }
        f = nullptr;
        if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::system_error(errno, std::generic_category(), "cannot rename " + tmp);
    } catch (...) {
        if (f) std::fclose(f);
        std::remove(tmp.c_str());
        throw;
    }
}

std::vector<uint8_t> Writer::bytes() const {
    std::vector<uint8_t> b;
    emit([&](const void* d, size_t n) { b.insert(b.end(), static_cast<const uint8_t*>(d), static_cast<const uint8_t*>(d) + n); });
    return b;
}

}  // namespace strata::gguf
