// gguf/reader.cpp — the validating GGUF parser and the mmap it reads from.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

#include "gguf/gguf.h"

namespace strata::gguf {

GgufError::GgufError(std::string field, uint64_t offset, const std::string& what)
    : std::runtime_error(field + " at byte " + std::to_string(offset) + ": " + what),
      field_(std::move(field)),
      offset_(offset) {}

std::string_view value_type_name(ValueType t) {
    switch (t) {
        case ValueType::U8: return "uint8";
        case ValueType::I8: return "int8";
        case ValueType::U16: return "uint16";
        case ValueType::I16: return "int16";
        case ValueType::U32: return "uint32";
        case ValueType::I32: return "int32";
        case ValueType::F32: return "float32";
        case ValueType::BOOL: return "bool";
        case ValueType::STRING: return "string";
        case ValueType::ARRAY: return "array";
        case ValueType::U64: return "uint64";
        case ValueType::I64: return "int64";
        case ValueType::F64: return "float64";
    }
    return "unknown";
}

size_t scalar_size(ValueType t) {
    switch (t) {
        case ValueType::U8: case ValueType::I8: case ValueType::BOOL: return 1;
        case ValueType::U16: case ValueType::I16: return 2;
        case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
        case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
        case ValueType::STRING: case ValueType::ARRAY: return 0;
    }
    return 0;
}

namespace {

bool is_integer(ValueType t) {
    switch (t) {
        case ValueType::U8: case ValueType::I8: case ValueType::U16: case ValueType::I16:
        case ValueType::U32: case ValueType::I32: case ValueType::U64: case ValueType::I64: return true;
        default: return false;
    }
}

template <class T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Decodes one scalar at p as a signed integer; nullopt for U64 values above INT64_MAX.
std::optional<int64_t> decode_int(ValueType t, const uint8_t* p) {
    switch (t) {
        case ValueType::U8: return load<uint8_t>(p);
        case ValueType::I8: return load<int8_t>(p);
        case ValueType::U16: return load<uint16_t>(p);
        case ValueType::I16: return load<int16_t>(p);
        case ValueType::U32: return load<uint32_t>(p);
        case ValueType::I32: return load<int32_t>(p);
        case ValueType::I64: return load<int64_t>(p);
        case ValueType::U64: {
            uint64_t v = load<uint64_t>(p);
            if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
            return static_cast<int64_t>(v);
        }
        case ValueType::BOOL: return load<uint8_t>(p) != 0;
        default: return std::nullopt;
    }
}

std::optional<double> decode_number(ValueType t, const uint8_t* p) {
    if (t == ValueType::F32) return load<float>(p);
    if (t == ValueType::F64) return load<double>(p);
    if (t == ValueType::U64) return static_cast<double>(load<uint64_t>(p));
    if (is_integer(t)) return static_cast<double>(*decode_int(t, p));
    return std::nullopt;
}

}  // namespace

std::optional<int64_t> Value::as_int() const {
    if (!is_integer(type) && type != ValueType::BOOL) return std::nullopt;
    return decode_int(type, raw.data());
}
std::optional<double> Value::as_float() const { return decode_number(type, raw.data()); }
std::optional<bool> Value::as_bool() const {
    if (type != ValueType::BOOL) return std::nullopt;
    return raw[0] != 0;
}
std::optional<std::string_view> Value::as_string() const {
    if (type != ValueType::STRING) return std::nullopt;
    return str_;
}

std::optional<double> Value::number_at(uint64_t i) const {
    size_t sz = scalar_size(array_type);
    if (type != ValueType::ARRAY || sz == 0 || array_type == ValueType::BOOL || i >= array_count) return std::nullopt;
    return decode_number(array_type, raw.data() + 12 + i * sz);
}
std::optional<int64_t> Value::int_at(uint64_t i) const {
    size_t sz = scalar_size(array_type);
    if (type != ValueType::ARRAY || sz == 0 || i >= array_count) return std::nullopt;
    if (!is_integer(array_type) && array_type != ValueType::BOOL) return std::nullopt;
    return decode_int(array_type, raw.data() + 12 + i * sz);
}

// Mapping ------------------------------------------------------------------------------

Mapping::Mapping(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + path);
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        int e = errno;
        ::close(fd_);
        throw std::system_error(e, std::generic_category(), "cannot stat " + path);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd_);
        throw std::system_error(EINVAL, std::generic_category(), path + " is not a regular file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        ::close(fd_);
        throw std::system_error(e, std::generic_category(), "cannot mmap " + path);
    }
    data_ = static_cast<const uint8_t*>(p);
}

Mapping::~Mapping() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
}

// Parser -------------------------------------------------------------------------------

class Parser {
public:
    Parser(File& f) : f_(f), p_(f.bytes_.data()), size_(f.bytes_.size()) {}

    void run() {
        header();
        for (uint64_t i = 0; i < n_kv_; ++i) key_value(i);
        alignment();
        for (uint64_t i = 0; i < n_tensors_; ++i) tensor_info(i);
        data_section();
    }

private:
    File& f_;
    const uint8_t* p_;
    uint64_t size_;
    uint64_t pos_ = 0;
    uint64_t n_kv_ = 0, n_tensors_ = 0;

    [[noreturn]] void fail(const std::string& field, uint64_t at, const std::string& what) const {
        throw GgufError(field, at, what);
    }

    void need(uint64_t n, const std::string& field) const {
        if (n > size_ - pos_)
            fail(field, pos_, "needs " + std::to_string(n) + " bytes but only " + std::to_string(size_ - pos_) +
                                  " remain in the file (truncated?)");
    }

    template <class T>
    T read(const std::string& field) {
        need(sizeof(T), field);
        T v = load<T>(p_ + pos_);
        pos_ += sizeof(T);
        return v;
    }

    std::string_view read_string(const std::string& field, uint64_t max_len) {
        uint64_t at = pos_;
        uint64_t len = read<uint64_t>(field + " (length)");
        if (len > max_len) fail(field, at, "string length " + std::to_string(len) + " exceeds the limit of " + std::to_string(max_len));
        need(len, field);
        std::string_view s(reinterpret_cast<const char*>(p_ + pos_), len);
        pos_ += len;
        return s;
    }

    ValueType read_type(const std::string& field) {
        uint64_t at = pos_;
        uint32_t t = read<uint32_t>(field);
        if (t > static_cast<uint32_t>(ValueType::F64)) fail(field, at, "unknown value type " + std::to_string(t));
        return static_cast<ValueType>(t);
    }

    void header() {
        uint32_t magic = read<uint32_t>("magic");
        if (magic != kMagic) fail("magic", 0, "not a GGUF file (expected \"GGUF\")");
        uint64_t at = pos_;
        f_.version_ = read<uint32_t>("version");
        if (f_.version_ == 1) fail("version", at, "GGUF v1 is not supported (only v2 and v3)");
        if (f_.version_ != 2 && f_.version_ != 3) fail("version", at, "unsupported GGUF version " + std::to_string(f_.version_));
        at = pos_;
        n_tensors_ = read<uint64_t>("tensor_count");
        // Smallest tensor info: 8 (name len) + 1 + 4 (n_dims) + 8 (one dim) + 4 (type) + 8 (offset).
        if (n_tensors_ > (size_ - pos_) / 33) fail("tensor_count", at, std::to_string(n_tensors_) + " tensors cannot fit in the file");
        at = pos_;
        n_kv_ = read<uint64_t>("metadata_kv_count");
        // Smallest key/value: 8 (key len) + 1 + 4 (type) + 1 (u8 value).
        if (n_kv_ > (size_ - pos_) / 14) fail("metadata_kv_count", at, std::to_string(n_kv_) + " key/values cannot fit in the file");
    }

    Value value(ValueType t, const std::string& field, int depth) {
        Value v;
        v.type = t;
        uint64_t start = pos_;
        if (t == ValueType::STRING) {
            v.str_ = read_string(field, size_);
        } else if (t == ValueType::ARRAY) {
            array(v, field, depth);
        } else {
            need(scalar_size(t), field);
            if (t == ValueType::BOOL && p_[pos_] > 1) fail(field, pos_, "bool value " + std::to_string(p_[pos_]) + " is not 0 or 1");
            pos_ += scalar_size(t);
        }
        v.raw = {p_ + start, pos_ - start};
        return v;
    }

    void array(Value& v, const std::string& field, int depth) {
        if (depth >= kMaxArrayNesting) fail(field, pos_, "arrays nested deeper than " + std::to_string(kMaxArrayNesting));
        v.array_type = read_type(field + " (array element type)");
        uint64_t at = pos_;
        v.array_count = read<uint64_t>(field + " (array length)");
        size_t sz = scalar_size(v.array_type);
        uint64_t min_elem = sz ? sz : (v.array_type == ValueType::STRING ? 8 : 12);
        if (v.array_count > (size_ - pos_) / min_elem)
            fail(field, at, "array of " + std::to_string(v.array_count) + " " + std::string(value_type_name(v.array_type)) +
                                " cannot fit in the file");
        if (sz) {
            if (v.array_type == ValueType::BOOL)
                for (uint64_t i = 0; i < v.array_count; ++i)
                    if (p_[pos_ + i] > 1) fail(field + "[" + std::to_string(i) + "]", pos_ + i, "bool value is not 0 or 1");
            pos_ += v.array_count * sz;
        } else if (v.array_type == ValueType::STRING) {
            v.strings.reserve(v.array_count);
            for (uint64_t i = 0; i < v.array_count; ++i) v.strings.push_back(read_string(field + "[" + std::to_string(i) + "]", size_));
        } else {
            v.items.reserve(std::min<uint64_t>(v.array_count, 1024));
            for (uint64_t i = 0; i < v.array_count; ++i) {
                std::string item = field + "[" + std::to_string(i) + "]";
                ValueType et = read_type(item + " (array element type)");
                pos_ -= 4;  // nested arrays carry their own element type: re-read it inside array()
                Value nested;
                nested.type = et;
                uint64_t start = pos_;
                array(nested, item, depth + 1);
                nested.raw = {p_ + start, pos_ - start};
                v.items.push_back(std::move(nested));
            }
        }
    }

    void key_value(uint64_t i) {
        std::string field = "metadata[" + std::to_string(i) + "]";
        uint64_t at = pos_;
        std::string key(read_string(field + " key", kMaxKeyLength));
        if (key.empty()) fail(field + " key", at, "empty key");
        field = "metadata key \"" + key + "\"";
        if (f_.kv_index_.count(key)) fail(field, at, "duplicate key");
        ValueType t = read_type(field + " (type)");
        Value v = value(t, field, 0);
        f_.kv_index_.emplace(key, f_.kv_.size());
        f_.kv_.emplace_back(std::move(key), std::move(v));
    }

    void alignment() {
        const Value* v = f_.find("general.alignment");
        if (!v) return;
        uint64_t at = static_cast<uint64_t>(v->raw.data() - p_);
        if (v->type != ValueType::U32) fail("general.alignment", at, "must be uint32, found " + std::string(value_type_name(v->type)));
        uint32_t a = load<uint32_t>(v->raw.data());
        if (a == 0 || !std::has_single_bit(a) || a > kMaxAlignment)
            fail("general.alignment", at, "value " + std::to_string(a) + " is not a power of two between 1 and " + std::to_string(kMaxAlignment));
        f_.alignment_ = a;
    }

    void tensor_info(uint64_t i) {
        std::string field = "tensor[" + std::to_string(i) + "]";
        uint64_t at = pos_;
        TensorInfo t;
        t.name = std::string(read_string(field + " name", kMaxNameLength));
        if (t.name.empty()) fail(field + " name", at, "empty tensor name");
        field = "tensor \"" + t.name + "\"";
        if (f_.tensor_index_.count(t.name)) fail(field, at, "duplicate tensor name");
        at = pos_;
        uint32_t n_dims = read<uint32_t>(field + " n_dims");
        if (n_dims == 0 || n_dims > kMaxDims) fail(field + " n_dims", at, std::to_string(n_dims) + " dimensions (must be 1.." + std::to_string(kMaxDims) + ")");
        t.n_dims = static_cast<int>(n_dims);
        uint64_t elements = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            std::string df = field + " ne[" + std::to_string(d) + "]";
            at = pos_;
            uint64_t ne = read<uint64_t>(df);
            if (ne == 0) fail(df, at, "dimension is zero");
            if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / elements)
                fail(df, at, "element count overflows (dimension " + std::to_string(ne) + ")");
            elements *= ne;
            t.ne[d] = static_cast<int64_t>(ne);
        }
        at = pos_;
        uint32_t type_id = read<uint32_t>(field + " type");
        auto info = dtype_info(type_id);
        if (!info) fail(field + " type", at, "unknown or unsupported tensor type id " + std::to_string(type_id));
        t.type = info->type;
        if (t.ne[0] % info->block_elems != 0)
            fail(field + " ne[0]", at, "row length " + std::to_string(t.ne[0]) + " is not a multiple of the " +
                                           std::string(info->name) + " block size " + std::to_string(info->block_elems));
        uint64_t blocks = elements / info->block_elems;
        if (blocks > std::numeric_limits<uint64_t>::max() / info->block_bytes)
            fail(field, at, "byte size overflows");
        t.nbytes = blocks * info->block_bytes;
        at = pos_;
        t.offset = read<uint64_t>(field + " offset");
        if (t.offset % f_.alignment_ != 0)
            fail(field + " offset", at, "offset " + std::to_string(t.offset) + " is not a multiple of the alignment " + std::to_string(f_.alignment_));
        f_.tensor_index_.emplace(t.name, f_.tensors_.size());
        f_.tensors_.push_back(std::move(t));
    }

    void data_section() {
        uint64_t a = f_.alignment_;
        uint64_t start = (pos_ + a - 1) / a * a;
        if (f_.tensors_.empty()) {
            f_.data_offset_ = std::min(start, size_);
            return;
        }
        if (start > size_) fail("data section", pos_, "starts at " + std::to_string(start) + ", past the end of the file");
        f_.data_offset_ = start;
        uint64_t avail = size_ - start;
        std::vector<const TensorInfo*> by_offset;
        for (auto& t : f_.tensors_) {
            if (t.offset > avail || t.nbytes > avail - t.offset)
                fail("tensor \"" + t.name + "\" offset", start + std::min(t.offset, avail),
                     "data [" + std::to_string(t.offset) + ", +" + std::to_string(t.nbytes) + ") lies past the end of the file (data section has " +
                         std::to_string(avail) + " bytes)");
            t.file_offset = start + t.offset;
            t.data = p_ + t.file_offset;
            by_offset.push_back(&t);
        }
        std::sort(by_offset.begin(), by_offset.end(), [](auto* x, auto* y) { return x->offset < y->offset; });
        for (size_t i = 1; i < by_offset.size(); ++i) {
            const TensorInfo* prev = by_offset[i - 1];
            const TensorInfo* cur = by_offset[i];
            if (cur->offset < prev->offset + prev->nbytes)
                fail("tensor \"" + cur->name + "\" offset", cur->file_offset, "overlaps tensor \"" + prev->name + "\"");
        }
    }
};

// File ---------------------------------------------------------------------------------

std::shared_ptr<const File> File::open(const std::string& path) {
    auto map = std::make_unique<Mapping>(path);
    auto f = std::shared_ptr<File>(new File());
    f->bytes_ = {map->data(), map->size()};
    f->name_ = path;
    f->mapping_ = std::move(map);
    Parser(*f).run();
    return f;
}

std::shared_ptr<const File> File::parse(std::span<const uint8_t> bytes, std::string name) {
    auto f = std::shared_ptr<File>(new File());
    f->bytes_ = bytes;
    f->name_ = std::move(name);
    Parser(*f).run();
    return f;
}

int File::fd() const { return mapping_ ? mapping_->fd() : -1; }

const Value* File::find(std::string_view key) const {
    auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

namespace {
[[noreturn]] void wrong_type(const File& f, std::string_view key, const Value& v, const char* want) {
    throw GgufError("metadata key \"" + std::string(key) + "\"", static_cast<uint64_t>(v.raw.data() - f.bytes().data()),
                    std::string("expected ") + want + ", found " + std::string(value_type_name(v.type)));
}
}  // namespace

std::optional<int64_t> File::get_int(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    auto r = v->as_int();
    if (!r || v->type == ValueType::BOOL) wrong_type(*this, key, *v, "an integer");
    return r;
}

std::optional<double> File::get_float(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    auto r = v->as_float();
    if (!r) wrong_type(*this, key, *v, "a number");
    return r;
}

std::optional<bool> File::get_bool(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    auto r = v->as_bool();
    if (!r) wrong_type(*this, key, *v, "a bool");
    return r;
}

std::optional<std::string_view> File::get_string(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    auto r = v->as_string();
    if (!r) wrong_type(*this, key, *v, "a string");
    return r;
}

const Value* File::get_array(std::string_view key) const {
    const Value* v = find(key);
    if (v && v->type != ValueType::ARRAY) wrong_type(*this, key, *v, "an array");
    return v;
}

const TensorInfo* File::tensor(std::string_view name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace strata::gguf
