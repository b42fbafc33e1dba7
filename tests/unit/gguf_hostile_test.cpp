// tests/unit/gguf_hostile_test.cpp — malformed and hostile GGUF files, crafted byte by
// byte: each must give a GgufError naming the field and its byte offset, never a crash,
// a hang or a read outside the file (run under -Db_sanitize=address to see the last).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_util.h"

using namespace strata;
using namespace strata::gguf;

namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kF32 = 0, kQ4_0 = 2, kF64 = 28;  // GGML tensor type ids

// GGUF bytes built by hand, including everything the Writer refuses to write.
struct Bytes {
    std::vector<uint8_t> b;

    template <class T>
    Bytes& put(T v) {
        uint8_t raw[sizeof v];
        std::memcpy(raw, &v, sizeof v);
        b.insert(b.end(), raw, raw + sizeof v);
        return *this;
    }
    Bytes& u8(uint8_t v) { return put(v); }
    Bytes& u32(uint32_t v) { return put(v); }
    Bytes& u64(uint64_t v) { return put(v); }
    Bytes& type(ValueType t) { return u32(static_cast<uint32_t>(t)); }
    Bytes& str(std::string_view s) {
        u64(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Bytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
        return u32(kMagic).u32(version).u64(n_tensors).u64(n_kv);
    }
    Bytes& kv_u32(std::string_view key, uint32_t v) { return str(key).type(ValueType::U32).u32(v); }
    // A tensor info; returns through `offset_at` where its offset field is.
    Bytes& tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type_id, uint64_t offset, size_t* offset_at = nullptr) {
        str(name).u32(static_cast<uint32_t>(ne.size()));
        for (uint64_t d : ne) u64(d);
        u32(type_id);
        if (offset_at) *offset_at = size();
        return u64(offset);
    }
    Bytes& zeros(size_t n) {
        b.resize(b.size() + n, 0);
        return *this;
    }
    Bytes& pad(size_t alignment) { return zeros((alignment - size() % alignment) % alignment); }
    size_t size() const { return b.size(); }
};

constexpr size_t kFirstKv = 24;  // after magic, version, tensor_count, metadata_kv_count

// Parses `bytes` (copied to an exactly sized heap block, so that ASan sees any read past
// the end) and expects a GgufError naming `field` at byte `at`, whose message holds `says`.
void expect_error(const std::vector<uint8_t>& bytes, const std::string& field, uint64_t at, const std::string& says) {
    std::vector<uint8_t> copy(bytes);
    try {
        File::parse(copy);
        BOOST_ERROR("no error; expected one naming " << field);
    } catch (const GgufError& e) {
        BOOST_TEST(e.field() == field, "field is '" << e.field() << "' in: " << e.what());
        BOOST_TEST(e.offset() == at, "offset is " << e.offset() << " in: " << e.what());
        BOOST_TEST(std::string(e.what()).find(says) != std::string::npos, "'" << says << "' not in: " << e.what());
    }
}
void expect_error(const Bytes& f, const std::string& field, uint64_t at, const std::string& says) {
    expect_error(f.b, field, at, says);
}

// One metadata key "k" of type `t` whose encoded value follows; returns where the value starts.
size_t one_kv(Bytes& f, ValueType t) {
    f.header(0, 1).str("k").type(t);
    return f.size();
}

// A file with one tensor "t" (and optionally a general.alignment), padded, with `data` bytes of data.
Bytes one_tensor(std::vector<uint64_t> ne, uint32_t type_id, uint64_t offset, size_t data, size_t* offset_at = nullptr) {
    Bytes f;
    f.header(1, 0).tensor("t", std::move(ne), type_id, offset, offset_at).pad(kDefaultAlignment).zeros(data);
    return f;
}

// A small valid file with every kind of metadata and three tensors, the last of which
// ends before the final padding.
std::vector<uint8_t> small_valid_file(const std::vector<float>& data) {
    Bytes nested;  // [[1, 2], [], [3]] as int32, copied in through set_value
    nested.header(0, 1).str("n").type(ValueType::ARRAY).type(ValueType::ARRAY).u64(3);
    nested.type(ValueType::I32).u64(2).u32(1).u32(2);
    nested.type(ValueType::I32).u64(0);
    nested.type(ValueType::I32).u64(1).u32(3);
    auto nested_file = File::parse(nested.b);

    Writer w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 2);
    w.set_i32("llama.signed", -7);
    w.set_u64("llama.big", 1ull << 40);
    w.set_f32("llama.eps", 1e-5f);
    w.set_bool("llama.flag", true);
    w.set_strings("tokenizer.ggml.tokens", {"<unk>", "", "hello"});
    w.set_f32s("tokenizer.ggml.scores", {0.f, -1.f, -2.f});
    w.set_i32s("tokenizer.ggml.token_type", {2, 3, 1});
    w.set_value("nested", *nested_file->find("n"));
    w.add_tensor("a", DType::F32, {8, 2}, data.data());
    w.add_tensor("b", DType::F32, {3}, data.data() + 16);
    w.add_tensor("c", DType::F32, {5}, data.data() + 19);
    return w.bytes();
}

std::filesystem::path temp_path(const std::string& leaf) {
    return std::filesystem::temp_directory_path() / ("strata_gguf_hostile_" + std::to_string(::getpid()) + "_" + leaf);
}

struct needs_non_root {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result r(::geteuid() != 0);
        if (!r) r.message() << "skipped: running as root, which can read any file";
        return r;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_hostile)

BOOST_AUTO_TEST_CASE(every_truncation_fails_cleanly) {
    std::vector<float> data(24);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) + 0.25f;
    const auto full = small_valid_file(data);
    auto f = File::parse(full);
    const TensorInfo* last = f->tensor("c");
    BOOST_REQUIRE(last);
    const size_t needed = last->file_offset + last->nbytes;
    BOOST_REQUIRE(needed < full.size());  // the file ends with padding the reader must not require

    for (size_t len = 0; len <= full.size(); ++len) {
        std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
        try {
            auto g = File::parse(prefix);
            BOOST_TEST(len >= needed, "a prefix of " << len << " bytes parsed");
            BOOST_TEST(std::memcmp(g->tensor("c")->data, data.data() + 19, 20) == 0);
        } catch (const GgufError& e) {
            BOOST_TEST(len < needed, "a prefix of " << len << " bytes failed: " << e.what());
            BOOST_TEST(e.offset() <= len, "error offset " << e.offset() << " past a prefix of " << len << ": " << e.what());
            BOOST_TEST(!e.field().empty());
        }
    }
}

BOOST_AUTO_TEST_CASE(header_errors_name_the_field) {
    Bytes not_gguf;
    not_gguf.u32(0x46554746).u32(3).u64(0).u64(0);
    expect_error(not_gguf, "magic", 0, "not a GGUF file");
    expect_error(Bytes().header(0, 0, 1), "version", 4, "v1 is not supported");
    expect_error(Bytes().header(0, 0, 4), "version", 4, "unsupported GGUF version 4");
    expect_error(Bytes().header(0, 0, 0x03000000), "version", 4, "big-endian");
    expect_error(Bytes().header(kU64Max, 0), "tensor_count", 8, "exceeds the limit of 65536");
    expect_error(Bytes().header(1000, 0).zeros(100), "tensor_count", 8, "cannot fit");
    expect_error(Bytes().header(0, kU64Max), "metadata_kv_count", 16, "exceeds the limit of 65536");
    expect_error(Bytes().header(0, 100).zeros(100), "metadata_kv_count", 16, "cannot fit");
    expect_error(std::vector<uint8_t>{'G', 'G'}, "magic", 0, "needs 4 bytes but only 2 remain");
}

BOOST_AUTO_TEST_CASE(hostile_string_lengths) {
    expect_error(Bytes().header(0, 1).u64(kU64Max).zeros(16), "metadata[0] key", kFirstKv, "exceeds the limit of 65535");
    expect_error(Bytes().header(0, 1).u64(kMaxKeyLength + 1).zeros(16), "metadata[0] key", kFirstKv, "exceeds the limit");
    expect_error(Bytes().header(0, 1).u64(100).zeros(10), "metadata[0] key", kFirstKv + 8, "needs 100 bytes but only 10 remain");

    Bytes value;
    size_t at = one_kv(value, ValueType::STRING);
    value.u64(kU64Max).zeros(4);
    expect_error(value, "metadata key \"k\"", at + 8, "needs 18446744073709551615 bytes but only 4 remain");

    Bytes name;
    name.header(1, 0).u64(kU64Max).zeros(40);
    expect_error(name, "tensor[0] name", kFirstKv, "exceeds the limit of 256");
    Bytes long_name;
    long_name.header(1, 0).tensor(std::string(kMaxNameLength + 1, 'x'), {1}, kF32, 0);
    expect_error(long_name, "tensor[0] name", kFirstKv, "exceeds the limit of 256");
}

BOOST_AUTO_TEST_CASE(array_counts_that_cannot_fit) {
    // 2^61 uint64 elements: count * 8 wraps to 0 in 64 bits.
    Bytes wrap;
    size_t at = one_kv(wrap, ValueType::ARRAY);
    wrap.type(ValueType::U64).u64(1ull << 61).zeros(64);
    expect_error(wrap, "metadata key \"k\"", at + 4, "array of 2305843009213693952 uint64 cannot fit");

    Bytes strings;
    at = one_kv(strings, ValueType::ARRAY);
    strings.type(ValueType::STRING).u64(1ull << 63).zeros(64);
    expect_error(strings, "metadata key \"k\"", at + 4, "cannot fit");

    Bytes arrays;
    at = one_kv(arrays, ValueType::ARRAY);
    arrays.type(ValueType::ARRAY).u64(kU64Max).zeros(64);
    expect_error(arrays, "metadata key \"k\"", at + 4, "cannot fit");

    // The count fits, the third string's length does not.
    Bytes short_strings;
    at = one_kv(short_strings, ValueType::ARRAY);
    short_strings.type(ValueType::STRING).u64(3).str("a").str("b").u64(1000).zeros(8);
    expect_error(short_strings, "metadata key \"k\"[2]", at + 12 + 9 + 9 + 8, "needs 1000 bytes but only 8 remain");
}

BOOST_AUTO_TEST_CASE(nested_arrays_are_bounded) {
    auto nest = [](int depth) {
        Bytes f;
        f.header(0, 1).str("k").type(ValueType::ARRAY);
        for (int i = 1; i < depth; ++i) f.type(ValueType::ARRAY).u64(1);
        f.type(ValueType::U8).u64(1).u8(7);
        return f;
    };
    BOOST_TEST(File::parse(nest(kMaxArrayNesting).b)->find("k")->items.size() == 1u);
    Bytes deep = nest(kMaxArrayNesting + 1);
    // The innermost array starts after the key, its type, and (depth - 1) element-type/count pairs.
    size_t innermost = kFirstKv + 9 + 4 + 12 * static_cast<size_t>(kMaxArrayNesting);
    expect_error(deep, "metadata key \"k\"[0][0][0][0]", innermost, "nested deeper than 4");

    Bytes many;  // one more empty array than the whole file may hold
    size_t at = one_kv(many, ValueType::ARRAY);
    many.type(ValueType::ARRAY).u64(kMaxNestedArrays + 1);
    for (uint64_t i = 0; i <= kMaxNestedArrays; ++i) many.type(ValueType::U8).u64(0);
    expect_error(many, "metadata key \"k\"", at + 4, "more than 65536 nested arrays");
}

BOOST_AUTO_TEST_CASE(unknown_value_types) {
    for (uint32_t t : {13u, 0xffffffffu}) {
        Bytes f;
        f.header(0, 1).str("k").u32(t).zeros(16);
        expect_error(f, "metadata key \"k\" type", kFirstKv + 9, "unknown value type " + std::to_string(t));
        Bytes a;
        size_t at = one_kv(a, ValueType::ARRAY);
        a.u32(t).u64(1).zeros(16);
        expect_error(a, "metadata key \"k\" element type", at, "unknown value type");
    }
}

BOOST_AUTO_TEST_CASE(bool_values_other_than_0_or_1) {
    Bytes scalar;
    size_t at = one_kv(scalar, ValueType::BOOL);
    scalar.u8(2);
    expect_error(scalar, "metadata key \"k\"", at, "bool value 2 is not 0 or 1");

    Bytes array;
    at = one_kv(array, ValueType::ARRAY);
    array.type(ValueType::BOOL).u64(3).u8(1).u8(0).u8(255);
    expect_error(array, "metadata key \"k\"[2]", at + 12 + 2, "bool value 255 is not 0 or 1");
}

BOOST_AUTO_TEST_CASE(empty_and_duplicate_names) {
    Bytes empty_key;
    empty_key.header(0, 1).str("").type(ValueType::U8).u8(0).zeros(8);
    expect_error(empty_key, "metadata[0] key", kFirstKv, "empty key");

    Bytes dup_key;
    dup_key.header(0, 2).kv_u32("k", 1);
    size_t second = dup_key.size();
    dup_key.kv_u32("k", 2);
    expect_error(dup_key, "metadata key \"k\"", second, "duplicate key");

    Bytes empty_name;
    empty_name.header(1, 0).tensor("", {1}, kF32, 0).pad(32).zeros(4);
    expect_error(empty_name, "tensor[0] name", kFirstKv, "empty tensor name");

    Bytes dup_name;
    dup_name.header(2, 0).tensor("t", {1}, kF32, 0);
    second = dup_name.size();
    dup_name.tensor("t", {1}, kF32, 32).pad(32).zeros(64);
    expect_error(dup_name, "tensor \"t\"", second, "duplicate tensor name");
}

BOOST_AUTO_TEST_CASE(unknown_tensor_types) {
    // 4 was Q4_2 (removed from GGML), 34 is TQ1_0 (not supported), 100 is strata's own
    // in-memory Q4_K_R (never a file's), then garbage.
    for (uint32_t id : {4u, 34u, 31u, 100u, 0xffffffffu}) {
        Bytes f;
        f.header(1, 0).tensor("t", {32}, id, 0).pad(32).zeros(256);
        expect_error(f, "tensor \"t\" type", kFirstKv + 9 + 4 + 8, "unknown or unsupported tensor type id " + std::to_string(id));
    }
}

BOOST_AUTO_TEST_CASE(dimension_counts) {
    Bytes scalar = one_tensor({}, kF32, 0, 4);  // n_dims 0 is a scalar, as GGML reads it
    auto f = File::parse(scalar.b);
    BOOST_TEST(f->tensor("t")->n_dims == 0);
    BOOST_TEST(f->tensor("t")->elements() == 1);
    BOOST_TEST(f->tensor("t")->nbytes == 4u);

    expect_error(one_tensor({1, 1, 1, 1, 1}, kF32, 0, 4), "tensor \"t\" n_dims", kFirstKv + 9, "5 dimensions (at most 4)");
    Bytes huge;
    huge.header(1, 0).str("t").u32(0xffffffff).zeros(64);
    expect_error(huge, "tensor \"t\" n_dims", kFirstKv + 9, "4294967295 dimensions");
}

BOOST_AUTO_TEST_CASE(zero_and_overflowing_dimensions) {
    const size_t ne0 = kFirstKv + 9 + 4;
    expect_error(one_tensor({4, 0}, kF32, 0, 16), "tensor \"t\" ne[1]", ne0 + 8, "dimension is zero");
    expect_error(one_tensor({1ull << 63}, kF32, 0, 16), "tensor \"t\" ne[0]", ne0, "overflow int64");
    expect_error(one_tensor({1ull << 32, 1ull << 31}, kF32, 0, 16), "tensor \"t\" ne[1]", ne0 + 8, "overflow int64");
    expect_error(one_tensor({1ull << 20, 1ull << 20, 1ull << 20, 1ull << 4}, kF32, 0, 16), "tensor \"t\" ne[3]", ne0 + 24,
                 "overflow int64");
    // 2^62 float64 elements fit in int64, but not their 2^65 bytes in uint64.
    expect_error(one_tensor({1ull << 62}, kF64, 0, 16), "tensor \"t\" type", ne0 + 8, "overflows");
    // 2^40 float32 elements: a valid size, far past the end of the file.
    size_t offset_at = 0;
    Bytes big = one_tensor({1ull << 40}, kF32, 0, 16, &offset_at);
    expect_error(big, "tensor \"t\" offset", offset_at, "4398046511104 bytes) ends past the end of the data section (16 bytes)");
}

BOOST_AUTO_TEST_CASE(row_length_not_a_multiple_of_the_block) {
    const size_t ne0 = kFirstKv + 9 + 4;
    expect_error(one_tensor({33, 2}, kQ4_0, 0, 64), "tensor \"t\" ne[0]", ne0, "row length 33 is not a multiple of the Q4_0 block size 32");
    expect_error(one_tensor({}, kQ4_0, 0, 64), "tensor \"t\" ne[0]", ne0, "row length 1");
}

BOOST_AUTO_TEST_CASE(bad_tensor_offsets) {
    size_t at = 0;
    Bytes unaligned = one_tensor({4}, kF32, 1, 64, &at);
    expect_error(unaligned, "tensor \"t\" offset", at, "offset 1 is not a multiple of the alignment 32");

    Bytes past = one_tensor({4}, kF32, kU64Max - 31, 64, &at);
    expect_error(past, "tensor \"t\" offset", at, "ends past the end of the data section (64 bytes)");

    Bytes partly = one_tensor({4}, kF32, 32, 40, &at);  // bytes [32, 48) of a 40-byte section
    expect_error(partly, "tensor \"t\" offset", at, "(data at offset 32, 16 bytes) ends past the end");

    Bytes overlap;
    size_t second = 0;
    overlap.header(2, 0).tensor("a", {16}, kF32, 0).tensor("b", {8}, kF32, 32, &second).pad(32).zeros(64);
    expect_error(overlap, "tensor \"b\" offset", second, "overlaps tensor \"a\" (data at offset 0, 64 bytes)");

    Bytes no_data;  // the header ends where the data section would have to begin
    no_data.header(1, 0).tensor("t", {1}, kF32, 0);
    expect_error(no_data, "data section", no_data.size(), "past the end of the file");
}

BOOST_AUTO_TEST_CASE(general_alignment_checks) {
    auto with_alignment = [](auto put_value) {
        Bytes f;
        f.header(0, 1).str("general.alignment");
        put_value(f);
        return f;
    };
    const size_t value_at = kFirstKv + 8 + 17 + 4;
    expect_error(with_alignment([](Bytes& f) { f.type(ValueType::U64).u64(32); }), "general.alignment", value_at, "must be uint32, found uint64");
    expect_error(with_alignment([](Bytes& f) { f.type(ValueType::STRING).str("32"); }), "general.alignment", value_at, "found string");
    for (uint32_t a : {0u, 3u, 48u, kMaxAlignment * 2})
        expect_error(with_alignment([&](Bytes& f) { f.type(ValueType::U32).u32(a); }), "general.alignment", value_at,
                     "value " + std::to_string(a) + " is not a power of two between 1 and 1048576");

    // A valid alignment is honoured: offsets must be multiples of it, data starts on it.
    Bytes a64;
    size_t offset_at = 0;
    a64.header(1, 1).kv_u32("general.alignment", 64).tensor("t", {4}, kF32, 32, &offset_at).pad(64).zeros(64);
    expect_error(a64, "tensor \"t\" offset", offset_at, "not a multiple of the alignment 64");
    Bytes a1;
    a1.header(1, 1).kv_u32("general.alignment", 1).tensor("t", {1}, kF32, 3).zeros(7);
    auto f = File::parse(a1.b);
    BOOST_TEST(f->alignment() == 1u);
    BOOST_TEST(f->tensor("t")->file_offset == a1.size() - 4);
}

BOOST_AUTO_TEST_CASE(names_in_errors_are_escaped) {
    Bytes f;
    std::string key = "evil\x1b[31m\n" + std::string(100, 'k');
    f.header(0, 2).kv_u32(key, 1).kv_u32(key, 2);
    try {
        File::parse(f.b);
        BOOST_ERROR("expected a duplicate key error");
    } catch (const GgufError& e) {
        std::string what = e.what();
        BOOST_TEST(what.find('\x1b') == std::string::npos);
        BOOST_TEST(what.find('\n') == std::string::npos);
        BOOST_TEST(what.find("evil\\x1b[31m\\x0a") != std::string::npos, what);
        BOOST_TEST(what.find("... (110 bytes)") != std::string::npos, what);
    }
}

BOOST_AUTO_TEST_CASE(files_that_are_not_gguf_files) {
    auto dir = temp_path("dir");
    std::filesystem::create_directory(dir);
    BOOST_CHECK_EXCEPTION(File::open(dir.string()), std::system_error,
                          [&](const std::system_error& e) { return std::string(e.what()).find("not a regular file") != std::string::npos; });
    std::filesystem::remove(dir);

    auto empty = temp_path("empty.gguf");
    std::ofstream(empty).close();
    BOOST_CHECK_EXCEPTION(File::open(empty.string()), GgufError,
                          [](const GgufError& e) { return e.field() == "magic" && e.offset() == 0; });

    BOOST_CHECK_EXCEPTION(File::open((empty / "below_a_file").string()), std::system_error,
                          [](const std::system_error& e) { return e.code().value() == ENOTDIR; });
    std::filesystem::remove(empty);
    BOOST_CHECK_EXCEPTION(File::open(empty.string()), std::system_error,
                          [](const std::system_error& e) { return e.code().value() == ENOENT; });
}

BOOST_AUTO_TEST_CASE(unreadable_file, *boost::unit_test::precondition(needs_non_root{})) {
    auto path = temp_path("unreadable.gguf");
    std::ofstream(path) << "GGUF";
    std::filesystem::permissions(path, std::filesystem::perms::none);
    BOOST_CHECK_EXCEPTION(File::open(path.string()), std::system_error,
                          [](const std::system_error& e) { return e.code().value() == EACCES; });
    std::filesystem::remove(path);
}

BOOST_AUTO_TEST_SUITE_END()

// Hostile values in well-formed files: the bounded lookups the model loader uses.
BOOST_AUTO_TEST_SUITE(gguf_bounded_lookups)

BOOST_AUTO_TEST_CASE(integers_outside_their_range) {
    Writer w;
    w.set_u64("llama.block_count", 1ull << 40);
    w.set_u32("llama.attention.head_count", 0);
    w.set_u64("too.big", kU64Max);
    w.set_u32("fine", 32);
    auto bytes = w.bytes();
    auto f = File::parse(bytes);
    BOOST_TEST(*f->get_int("fine", 1, 64) == 32);
    BOOST_TEST(!f->get_int("absent", 1, 64));
    BOOST_CHECK_EXCEPTION(f->get_int("llama.block_count", 1, 4096), GgufError, [&](const GgufError& e) {
        return e.field() == "metadata key \"llama.block_count\"" &&
               e.offset() == static_cast<uint64_t>(f->find("llama.block_count")->raw.data() - bytes.data()) &&
               std::string(e.what()).find("value 1099511627776 is outside [1, 4096]") != std::string::npos;
    });
    BOOST_CHECK_EXCEPTION(f->get_int("llama.attention.head_count", 1, 1024), GgufError,
                          [](const GgufError& e) { return std::string(e.what()).find("value 0 is outside [1, 1024]") != std::string::npos; });
    BOOST_CHECK_EXCEPTION(f->get_int("too.big"), GgufError,
                          [](const GgufError& e) { return std::string(e.what()).find("does not fit in int64") != std::string::npos; });
}

BOOST_AUTO_TEST_CASE(floats_outside_their_range_and_nan) {
    Writer w;
    w.set_f32("eps", 1e-5f);
    w.set_f32("nan", std::nanf(""));
    w.set_f32("inf", std::numeric_limits<float>::infinity());
    w.set_string("text", "1e-5");
    auto bytes = w.bytes();
    auto f = File::parse(bytes);
    BOOST_TEST(*f->get_float("eps", 0.0, 1.0) == 1e-5f);
    auto outside = [](const GgufError& e) { return std::string(e.what()).find("is outside [0, 1]") != std::string::npos; };
    BOOST_CHECK_EXCEPTION(f->get_float("nan", 0.0, 1.0), GgufError, outside);
    BOOST_CHECK_EXCEPTION(f->get_float("inf", 0.0, 1.0), GgufError, outside);
    BOOST_CHECK_EXCEPTION(f->get_float("text", 0.0, 1.0), GgufError,
                          [](const GgufError& e) { return std::string(e.what()).find("expected a number, found string") != std::string::npos; });
}

BOOST_AUTO_TEST_CASE(arrays_of_the_wrong_element_type) {
    Writer w;
    w.set_i32s("tokenizer.ggml.tokens", {1, 2});
    auto bytes = w.bytes();
    auto f = File::parse(bytes);
    BOOST_TEST(f->get_array("tokenizer.ggml.tokens", ValueType::I32)->array_count == 2u);
    BOOST_CHECK_EXCEPTION(f->get_array("tokenizer.ggml.tokens", ValueType::STRING), GgufError, [](const GgufError& e) {
        return std::string(e.what()).find("expected an array of string, found an array of int32") != std::string::npos;
    });
    BOOST_TEST(!f->get_array("absent", ValueType::STRING));
}

BOOST_AUTO_TEST_SUITE_END()
