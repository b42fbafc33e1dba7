// gguf/reader.cpp — the validating GGUF parser and the mmap it reads from.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <system_error>
#include <type_traits>

#include "gguf/gguf.h"
#include "utf8/utf8.h"

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

void Mapping::make_private(uint64_t length) {
    if (!data_ || length == 0) return;
    const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    auto round_up = [page](uint64_t n) { return (n + page - 1) / page * page; };
    length = std::min(round_up(length), round_up(size_));
    std::vector<uint8_t> copy(data_, data_ + std::min(length, size_));
    void* at = const_cast<uint8_t*>(data_);
    if (::mmap(at, length, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
        throw std::system_error(errno, std::generic_category(), "cannot copy the metadata of " + path_ + " into memory");
    std::memcpy(at, copy.data(), copy.size());
    ::mprotect(at, length, PROT_READ);
}

Mapping::~Mapping() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
}

// Parser -------------------------------------------------------------------------------

namespace {

// Error field names are built only when an error is thrown: a name is a string, or a
// callable returning one (so that reading a 150k-token vocabulary builds no names).
template <class Name>
std::string name_of(const Name& name) {
    if constexpr (std::is_invocable_v<const Name&>) return name();
    else return std::string(name);
}

std::string element(const std::string& field, uint64_t i) { return field + "[" + std::to_string(i) + "]"; }

// A key or tensor name from the file, quoted for an error message: bytes outside
// printable ASCII are escaped and long names are cut short.
std::string quoted(std::string_view s) {
    constexpr size_t kShown = 64;
    std::string out = "\"";
    for (unsigned char c : s.substr(0, kShown)) {
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            out += static_cast<char>(c);
        } else {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\x%02x", c);
            out += esc;
        }
    }
    out += '"';
    if (s.size() > kShown) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

}  // namespace

class Parser {
public:
    explicit Parser(File& f) : f_(f), p_(f.bytes_.data()), size_(f.bytes_.size()) {}

    void run() {
        header();
        for (uint64_t i = 0; i < n_kv_; ++i) key_value(i);
        alignment();
        f_.tensors_.reserve(n_tensors_);  // bounded by the file size and kMaxTensorCount
        offset_at_.reserve(n_tensors_);
        for (uint64_t i = 0; i < n_tensors_; ++i) tensor_info(i);
        data_section();
    }

private:
    // Smallest encodings, to reject counts that cannot fit in the rest of the file.
    static constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;          // key length, 1-byte key, type, u8
    static constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 4 + 8;  // name length, name, n_dims 0, type, offset
    static constexpr uint64_t kArrayHeaderBytes = 4 + 8;            // element type, count

    File& f_;
    const uint8_t* p_;
    uint64_t size_;
    uint64_t pos_ = 0;
    uint64_t n_kv_ = 0, n_tensors_ = 0;
    uint64_t nested_arrays_ = 0;
    std::vector<uint64_t> offset_at_;  // where each tensor's offset field is in the file
    uint64_t ne0_at_ = 0;              // where the current tensor's ne[0] is, for the block-size error

    [[noreturn]] static void fail(std::string field, uint64_t at, const std::string& what) {
        throw GgufError(std::move(field), at, what);
    }

    template <class Name>
    void need(uint64_t n, const Name& name) const {
        if (n > size_ - pos_)
            fail(name_of(name), pos_, "needs " + std::to_string(n) + " bytes but only " + std::to_string(size_ - pos_) +
                                          " remain in the file (truncated?)");
    }

    template <class T, class Name>
    T read(const Name& name) {
        need(sizeof(T), name);
        T v = load<T>(p_ + pos_);
        pos_ += sizeof(T);
        return v;
    }

    template <class Name>
    std::string_view read_string(const Name& name, uint64_t max_len = std::numeric_limits<uint64_t>::max()) {
        uint64_t at = pos_;
        uint64_t len = read<uint64_t>([&] { return name_of(name) + " length"; });
        if (len > max_len)
            fail(name_of(name), at, "string length " + std::to_string(len) + " exceeds the limit of " + std::to_string(max_len));
        need(len, name);
        std::string_view s(reinterpret_cast<const char*>(p_ + pos_), len);
        if (const auto bad = utf8::first_invalid(s)) {
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(s[*bad])));
            fail(name_of(name), pos_ + *bad, std::string("is not valid UTF-8 (byte ") + byte + " at offset " +
                                                 std::to_string(*bad) + " of the string)");
        }
        pos_ += len;
        return s;
    }

    template <class Name>
    ValueType read_type(const Name& name) {
        uint64_t at = pos_;
        uint32_t t = read<uint32_t>(name);
        if (t > static_cast<uint32_t>(ValueType::F64)) fail(name_of(name), at, "unknown value type " + std::to_string(t));
        return static_cast<ValueType>(t);
    }

    // A count of entries that must not exceed `limit` and must leave `min_bytes` per entry.
    uint64_t read_count(const char* name, uint64_t limit, uint64_t min_bytes) {
        uint64_t at = pos_;
        uint64_t n = read<uint64_t>(name);
        if (n > limit) fail(name, at, std::to_string(n) + " exceeds the limit of " + std::to_string(limit));
        if (n > (size_ - pos_) / min_bytes)
            fail(name, at, std::to_string(n) + " entries cannot fit in the " + std::to_string(size_ - pos_) + " bytes that follow");
        return n;
    }

    void header() {
        if (read<uint32_t>("magic") != kMagic) fail("magic", 0, "not a GGUF file (expected \"GGUF\")");
        uint64_t at = pos_;
        uint32_t version = read<uint32_t>("version");
        if (version == 1) fail("version", at, "GGUF v1 is not supported (only v2 and v3)");
        if (version != 0 && (version & 0xffff) == 0)
            fail("version", at, "version " + std::to_string(version) + " looks byte-swapped: big-endian GGUF files are not supported");
        if (version != 2 && version != 3) fail("version", at, "unsupported GGUF version " + std::to_string(version));
        f_.version_ = version;
        n_tensors_ = read_count("tensor_count", kMaxTensorCount, kMinTensorInfoBytes);
        n_kv_ = read_count("metadata_kv_count", kMaxMetadataCount, kMinKvBytes);
    }

    Value value(ValueType t, const std::string& field) {
        Value v;
        v.type = t;
        uint64_t start = pos_;
        if (t == ValueType::STRING) {
            v.str_ = read_string(field);
        } else if (t == ValueType::ARRAY) {
            array(v, field, 0);
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
        v.array_type = read_type([&] { return field + " element type"; });
        uint64_t at = pos_;
        v.array_count = read<uint64_t>([&] { return field + " length"; });
        size_t sz = scalar_size(v.array_type);
        uint64_t min_elem = sz ? sz : (v.array_type == ValueType::STRING ? 8 : kArrayHeaderBytes);
        if (v.array_count > (size_ - pos_) / min_elem)
            fail(field, at, "array of " + std::to_string(v.array_count) + " " + std::string(value_type_name(v.array_type)) +
                                " cannot fit in the " + std::to_string(size_ - pos_) + " bytes that follow");
        if (sz) scalars(v, field);
        else if (v.array_type == ValueType::STRING) strings(v, field);
        else nested(v, field, at, depth);
    }

    void scalars(const Value& v, const std::string& field) {
        if (v.array_type == ValueType::BOOL)
            for (uint64_t i = 0; i < v.array_count; ++i)
                if (p_[pos_ + i] > 1) fail(element(field, i), pos_ + i, "bool value " + std::to_string(p_[pos_ + i]) + " is not 0 or 1");
        pos_ += v.array_count * scalar_size(v.array_type);
    }

    void strings(Value& v, const std::string& field) {
        v.strings.reserve(v.array_count);  // at most one per 8 bytes left in the file
        for (uint64_t i = 0; i < v.array_count; ++i) v.strings.push_back(read_string([&] { return element(field, i); }));
    }

    // Each element of an array of arrays is itself an array: element type, count, elements.
    void nested(Value& v, const std::string& field, uint64_t count_at, int depth) {
        if (v.array_count > kMaxNestedArrays - nested_arrays_)
            fail(field, count_at, "more than " + std::to_string(kMaxNestedArrays) + " nested arrays in the file");
        nested_arrays_ += v.array_count;
        v.items.reserve(v.array_count);
        for (uint64_t i = 0; i < v.array_count; ++i) {
            Value item;
            item.type = ValueType::ARRAY;
            uint64_t start = pos_;
            array(item, element(field, i), depth + 1);
            item.raw = {p_ + start, pos_ - start};
            v.items.push_back(std::move(item));
        }
    }

    void key_value(uint64_t i) {
        uint64_t at = pos_;
        auto key_field = [&] { return "metadata[" + std::to_string(i) + "] key"; };
        std::string key(read_string(key_field, kMaxKeyLength));
        if (key.empty()) fail(key_field(), at, "empty key");
        std::string field = "metadata key " + quoted(key);
        if (f_.kv_index_.count(key)) fail(field, at, "duplicate key");
        ValueType t = read_type([&] { return field + " type"; });
        Value v = value(t, field);
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
        uint64_t at = pos_;
        auto name_field = [&] { return "tensor[" + std::to_string(i) + "] name"; };
        TensorInfo t;
        t.name = std::string(read_string(name_field, kMaxNameLength));
        if (t.name.empty()) fail(name_field(), at, "empty tensor name");
        std::string field = "tensor " + quoted(t.name);
        if (f_.tensor_index_.count(t.name)) fail(field, at, "duplicate tensor name");
        shape(t, field);
        at = pos_;
        uint32_t type_id = read<uint32_t>([&] { return field + " type"; });
        auto info = dtype_info(type_id);
        if (!info) fail(field + " type", at, "unknown or unsupported tensor type id " + std::to_string(type_id));
        t.type = info->type;
        if (t.ne[0] % info->block_elems != 0)
            fail(field + " ne[0]", ne0_at_, "row length " + std::to_string(t.ne[0]) + " is not a multiple of the " +
                                               std::string(info->name) + " block size " + std::to_string(info->block_elems));
        uint64_t blocks = static_cast<uint64_t>(t.elements()) / info->block_elems;
        if (blocks > std::numeric_limits<uint64_t>::max() / info->block_bytes)
            fail(field + " type", at, "byte size of " + std::to_string(t.elements()) + " " + std::string(info->name) + " elements overflows");
        t.nbytes = blocks * info->block_bytes;
        at = pos_;
        t.offset = read<uint64_t>([&] { return field + " offset"; });
        if (t.offset % f_.alignment_ != 0)
            fail(field + " offset", at, "offset " + std::to_string(t.offset) + " is not a multiple of the alignment " + std::to_string(f_.alignment_));
        offset_at_.push_back(at);
        f_.tensor_index_.emplace(t.name, f_.tensors_.size());
        f_.tensors_.push_back(std::move(t));
    }

    // n_dims and the dimensions: each at least 1, their product within int64.
    void shape(TensorInfo& t, const std::string& field) {
        uint64_t at = pos_;
        uint32_t n_dims = read<uint32_t>([&] { return field + " n_dims"; });
        if (n_dims > kMaxDims) fail(field + " n_dims", at, std::to_string(n_dims) + " dimensions (at most " + std::to_string(kMaxDims) + ")");
        t.n_dims = static_cast<int>(n_dims);
        ne0_at_ = pos_;
        uint64_t elements = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            auto dim_field = [&] { return field + " ne[" + std::to_string(d) + "]"; };
            at = pos_;
            uint64_t ne = read<uint64_t>(dim_field);
            if (ne == 0) fail(dim_field(), at, "dimension is zero");
            if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / elements)
                fail(dim_field(), at, "dimension " + std::to_string(ne) + " makes the element count overflow int64");
            elements *= ne;
            t.ne[d] = static_cast<int64_t>(ne);
        }
    }
    void data_section() {
        uint64_t a = f_.alignment_;
        uint64_t start = (pos_ + a - 1) / a * a;
        if (f_.tensors_.empty()) {
            f_.data_offset_ = std::min(start, size_);
            return;
        }
        if (start > size_)
            fail("data section", pos_, "starts at " + std::to_string(start) + ", past the end of the file (" + std::to_string(size_) + " bytes)");
        f_.data_offset_ = start;
        uint64_t avail = size_ - start;
        for (size_t i = 0; i < f_.tensors_.size(); ++i) {
            TensorInfo& t = f_.tensors_[i];
            if (t.offset > avail || t.nbytes > avail - t.offset)
                fail("tensor " + quoted(t.name) + " offset", offset_at_[i],
                     extent(t) + " ends past the end of the data section (" + std::to_string(avail) + " bytes)");
            t.file_offset = start + t.offset;
            t.data = p_ + t.file_offset;
        }
        no_overlaps();
    }

    void no_overlaps() const {
        std::vector<size_t> order(f_.tensors_.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        const auto& ts = f_.tensors_;
        std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return ts[x].offset < ts[y].offset; });
        for (size_t k = 1; k < order.size(); ++k) {
            const TensorInfo& prev = ts[order[k - 1]];
            const TensorInfo& cur = ts[order[k]];
            if (cur.offset < prev.offset + prev.nbytes)
                fail("tensor " + quoted(cur.name) + " offset", offset_at_[order[k]],
                     extent(cur) + " overlaps tensor " + quoted(prev.name) + " " + extent(prev));
        }
    }

    static std::string extent(const TensorInfo& t) {
        return "(data at offset " + std::to_string(t.offset) + ", " + std::to_string(t.nbytes) + " bytes)";
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
    f->mapping_->make_private(f->data_offset_);
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

[[noreturn]] void value_error(const File& f, std::string_view key, const Value& v, const std::string& what) {
    throw GgufError("metadata key " + quoted(key), static_cast<uint64_t>(v.raw.data() - f.bytes().data()), what);
}

[[noreturn]] void wrong_type(const File& f, std::string_view key, const Value& v, const char* want) {
    value_error(f, key, v, std::string("expected ") + want + ", found " + std::string(value_type_name(v.type)));
}

std::string number_text(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", x);
    return buf;
}

}  // namespace

std::optional<int64_t> File::get_int(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (!is_integer(v->type)) wrong_type(*this, key, *v, "an integer");
    auto r = v->as_int();
    if (!r) value_error(*this, key, *v, "value " + std::to_string(load<uint64_t>(v->raw.data())) + " does not fit in int64");
    return r;
}

std::optional<int64_t> File::get_int(std::string_view key, int64_t min, int64_t max) const {
    auto r = get_int(key);
    if (r && (*r < min || *r > max))
        value_error(*this, key, *find(key),
                    "value " + std::to_string(*r) + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return r;
}

std::optional<double> File::get_float(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    auto r = v->as_float();
    if (!r) wrong_type(*this, key, *v, "a number");
    return r;
}

std::optional<double> File::get_float(std::string_view key, double min, double max) const {
    auto r = get_float(key);
    if (r && !(*r >= min && *r <= max))
        value_error(*this, key, *find(key), "value " + number_text(*r) + " is outside [" + number_text(min) + ", " + number_text(max) + "]");
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

const Value* File::get_array(std::string_view key, ValueType element) const {
    const Value* v = get_array(key);
    if (v && v->array_type != element)
        value_error(*this, key, *v, "expected an array of " + std::string(value_type_name(element)) + ", found an array of " +
                                        std::string(value_type_name(v->array_type)));
    return v;
}

const TensorInfo* File::tensor(std::string_view name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace strata::gguf
