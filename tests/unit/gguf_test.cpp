// tests/unit/gguf_test.cpp — the GGUF reader and writer: round trips and real files.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_util.h"

using namespace strata;
using namespace strata::gguf;

BOOST_AUTO_TEST_SUITE(gguf_roundtrip)

BOOST_AUTO_TEST_CASE(metadata_and_tensors_round_trip) {
    Writer w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 2);
    w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_bool("tokenizer.ggml.add_bos_token", true);
    w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "hello"});
    w.set_f32s("tokenizer.ggml.scores", {0.f, -1.f, -2.f, -3.5f});
    w.set_i32s("tokenizer.ggml.token_type", {2, 3, 3, 1});
    std::vector<float> data(64 * 3);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.5f;
    w.add_tensor("a", DType::F32, {64, 3}, data.data());
    w.add_tensor("b", DType::F32, {64}, data.data());
    auto bytes = w.bytes();
    auto f = File::parse(bytes);

    BOOST_TEST(f->version() == 3u);
    BOOST_TEST(*f->get_string("general.architecture") == "llama");
    BOOST_TEST(*f->get_int("llama.block_count") == 2);
    BOOST_TEST(*f->get_float("llama.attention.layer_norm_rms_epsilon") == 1e-5f);
    BOOST_TEST(*f->get_bool("tokenizer.ggml.add_bos_token"));
    const Value* toks = f->get_array("tokenizer.ggml.tokens");
    BOOST_REQUIRE(toks);
    BOOST_TEST(toks->strings.size() == 4u);
    BOOST_TEST(toks->strings[3] == "hello");
    BOOST_TEST(*f->get_array("tokenizer.ggml.scores")->number_at(3) == -3.5);
    BOOST_TEST(*f->get_array("tokenizer.ggml.token_type")->int_at(0) == 2);
    BOOST_TEST(!f->get_array("tokenizer.ggml.scores")->number_at(4));

    const TensorInfo* a = f->tensor("a");
    BOOST_REQUIRE(a);
    BOOST_TEST(a->ne[0] == 64);
    BOOST_TEST(a->ne[1] == 3);
    BOOST_TEST(a->nbytes == 64u * 3 * 4);
    BOOST_TEST(a->file_offset % f->alignment() == 0u);
    BOOST_TEST(std::memcmp(a->data, data.data(), a->nbytes) == 0);
    BOOST_TEST(f->tensor("b")->offset % 32 == 0u);
    BOOST_TEST(!f->tensor("c"));
}

BOOST_AUTO_TEST_CASE(wrong_metadata_type_is_named) {
    Writer w;
    w.set_string("llama.block_count", "two");
    auto bytes = w.bytes();
    auto f = File::parse(bytes);
    try {
        f->get_int("llama.block_count");
        BOOST_FAIL("expected an error");
    } catch (const GgufError& e) {
        BOOST_TEST(std::string(e.what()).find("llama.block_count") != std::string::npos);
        BOOST_TEST(std::string(e.what()).find("expected an integer, found string") != std::string::npos);
    }
}

// GGUF strings are UTF-8: a key, a string value or a vocabulary token that is not is
// refused, naming the field and the byte offset of the bad byte.
BOOST_AUTO_TEST_CASE(strings_that_are_not_utf8_are_refused) {
    struct Case {
        std::string key, value, token, field;
    };
    const Case cases[] = {
        {"general.nameQ", "x", "b", "] key"},
        {"general.name", "cafQ", "b", "metadata key \"general.name\""},
        {"general.name", "x", "caQ", "metadata key \"tokenizer.ggml.tokens\"[1]"},
    };
    for (const Case& c : cases) {
        Writer w;
        w.set_string(c.key, c.value);
        w.set_strings("tokenizer.ggml.tokens", {"a", c.token});
        auto bytes = w.bytes();
        // The placeholder 'Q' becomes 0xE9 (Latin-1 'é'), which is no UTF-8.
        const auto at = std::search(bytes.begin(), bytes.end(), c.key.begin(), c.key.end()) - bytes.begin();
        const std::string marked = c.key.back() == 'Q' ? c.key : c.value.back() == 'Q' ? c.value : c.token;
        const auto q = std::search(bytes.begin() + (c.key.back() == 'Q' ? 0 : at + 1), bytes.end(), marked.begin(),
                                   marked.end()) - bytes.begin() + static_cast<long>(marked.size()) - 1;
        bytes[static_cast<size_t>(q)] = static_cast<uint8_t>(0xE9);
        try {
            File::parse(bytes);
            BOOST_ERROR("no error for " << c.field);
        } catch (const GgufError& e) {
            const std::string what = e.what();
            BOOST_TEST(what.find(c.field) != std::string::npos, what);
            BOOST_TEST(what.find("at byte " + std::to_string(q) + ": is not valid UTF-8 (byte 0xE9") != std::string::npos,
                       what);
        }
    }
}

BOOST_AUTO_TEST_CASE(copying_values_between_files) {
    Writer a;
    a.set_strings("tokenizer.ggml.tokens", {"x", "y"});
    auto ab = a.bytes();
    auto fa = File::parse(ab);
    Writer b;
    b.set_value("tokenizer.ggml.tokens", *fa->find("tokenizer.ggml.tokens"));
    auto bb = b.bytes();
    auto fb = File::parse(bb);
    BOOST_TEST(fb->get_array("tokenizer.ggml.tokens")->strings[1] == "y");
}

BOOST_AUTO_TEST_CASE(alignments_round_trip) {
    std::vector<uint8_t> data(100);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
    for (uint32_t alignment : {1u, 8u, 64u, 4096u}) {
        Writer w(alignment);
        w.add_tensor("a", DType::I8, {3}, data.data());
        w.add_tensor("b", DType::I8, {10, 10}, data.data());
        auto bytes = w.bytes();
        auto f = File::parse(bytes);
        BOOST_TEST(f->alignment() == alignment);
        BOOST_TEST(*f->get_int("general.alignment") == alignment);
        for (const char* name : {"a", "b"}) {
            const TensorInfo* t = f->tensor(name);
            BOOST_TEST(t->file_offset % alignment == 0u);
            BOOST_TEST(std::memcmp(t->data, data.data(), t->nbytes) == 0);
        }
    }
}

BOOST_AUTO_TEST_CASE(scalar_tensors_round_trip) {
    // No dimensions: one element, as GGML reads n_dims 0; a copied tensor keeps its shape.
    float x = 2.5f;
    Writer w;
    w.add_tensor("scale", DType::F32, {}, &x);
    auto bytes = w.bytes();
    auto f = File::parse(bytes);
    const TensorInfo* t = f->tensor("scale");
    BOOST_TEST(t->n_dims == 0);
    BOOST_TEST(t->elements() == 1);
    BOOST_TEST(*reinterpret_cast<const float*>(t->data) == 2.5f);
    Writer copy;
    copy.add_tensor(t->name, t->type, std::vector<int64_t>(t->ne, t->ne + t->n_dims), t->data);
    auto copied = copy.bytes();
    BOOST_TEST(File::parse(copied)->tensor("scale")->n_dims == 0);
}

BOOST_AUTO_TEST_CASE(version_2_files_read_like_version_3) {
    Writer w;
    w.set_u32("k", 5);
    float x = 1.5f;
    w.add_tensor("t", DType::F32, {1}, &x);
    auto bytes = w.bytes();
    bytes[4] = 2;
    auto f = File::parse(bytes);
    BOOST_TEST(f->version() == 2u);
    BOOST_TEST(*f->get_int("k") == 5);
    BOOST_TEST(*reinterpret_cast<const float*>(f->tensor("t")->data) == 1.5f);
}

BOOST_AUTO_TEST_CASE(nested_arrays_read_back) {
    // [[1, 2], [], [3]] as int32: each element of an array of arrays is an array.
    std::vector<uint8_t> b;
    auto put32 = [&](uint32_t v) { b.insert(b.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4); };
    auto put64 = [&](uint64_t v) { b.insert(b.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 8); };
    put32(kMagic), put32(3), put64(0), put64(1), put64(1), b.push_back('n');
    put32(9), put32(9), put64(3);
    put32(5), put64(2), put32(1), put32(2);
    put32(5), put64(0);
    put32(5), put64(1), put32(3);
    auto src = File::parse(b);
    Writer w;
    w.set_value("copy", *src->find("n"));
    auto bytes = w.bytes();
    auto f = File::parse(bytes);
    const Value* v = f->get_array("copy", ValueType::ARRAY);
    BOOST_REQUIRE(v);
    BOOST_REQUIRE(v->items.size() == 3u);
    for (const Value& item : v->items) {
        BOOST_TEST((item.type == ValueType::ARRAY));
        BOOST_TEST((item.array_type == ValueType::I32));
    }
    BOOST_TEST(*v->items[0].int_at(1) == 2);
    BOOST_TEST(v->items[1].array_count == 0u);
    BOOST_TEST(*v->items[2].int_at(0) == 3);
    BOOST_TEST(!v->items[2].int_at(1));
}

BOOST_AUTO_TEST_CASE(written_file_opens_with_streamed_fill) {
    auto path = std::filesystem::temp_directory_path() / ("strata_gguf_test_" + std::to_string(::getpid()) + ".gguf");
    Writer w;
    w.set_string("general.name", "streamed");
    w.add_tensor("t", DType::F32, {256}, [](const Writer::Emit& out) {
        for (int chunk = 0; chunk < 4; ++chunk) {
            float part[64];
            for (int i = 0; i < 64; ++i) part[i] = static_cast<float>(chunk * 64 + i);
            out(part, sizeof part);
        }
    });
    w.write(path.string());
    auto f = File::open(path.string());
    BOOST_TEST(!std::filesystem::exists(path.string() + ".tmp"));
    BOOST_TEST(*f->get_string("general.name") == "streamed");
    const float* t = reinterpret_cast<const float*>(f->tensor("t")->data);
    BOOST_TEST(t[0] == 0.f);
    BOOST_TEST(t[255] == 255.f);
    std::filesystem::remove(path);
}

// The layout of a file too large to write twice: the same header and tensor infos, the data a
// hole of the same size (no fill called, no data block allocated).
BOOST_AUTO_TEST_CASE(layout_is_the_file_without_its_data) {
    auto path = std::filesystem::temp_directory_path() / ("strata_gguf_layout_" + std::to_string(::getpid()) + ".gguf");
    Writer w;
    w.set_string("general.name", "layout");
    w.add_tensor("small", DType::F32, {3}, [](const Writer::Emit&) { BOOST_FAIL("fill called"); });
    w.add_tensor("big", DType::F16, {4096, 4096}, [](const Writer::Emit&) { BOOST_FAIL("fill called"); });
    w.write_layout(path.string());
    auto f = File::open(path.string());
    BOOST_TEST(*f->get_string("general.name") == "layout");
    BOOST_TEST(f->tensor("big")->nbytes == 4096u * 4096u * 2u);
    BOOST_TEST(std::filesystem::file_size(path) == f->tensor("big")->file_offset + f->tensor("big")->nbytes);
    struct stat st {};
    BOOST_TEST(::stat(path.c_str(), &st) == 0);
    BOOST_TEST(st.st_blocks * 512 < 1024 * 1024);  // a hole, not 32 MiB of zeros
    std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(fill_must_write_exactly_the_tensor_size) {
    Writer short_fill;
    short_fill.add_tensor("t", DType::F32, {4}, [](const Writer::Emit& out) { out("abcd", 4); });
    BOOST_CHECK_THROW(short_fill.bytes(), std::logic_error);
    Writer long_fill;
    long_fill.add_tensor("t", DType::F32, {1}, [](const Writer::Emit& out) { out("abcdefgh", 8); });
    BOOST_CHECK_THROW(long_fill.bytes(), std::logic_error);
}

// The Writer refuses what the reader would reject, instead of writing an unreadable file.
BOOST_AUTO_TEST_CASE(writer_refuses_unreadable_files) {
    for (uint32_t bad : {0u, 3u, 48u, kMaxAlignment * 2}) BOOST_CHECK_THROW(Writer{bad}, std::invalid_argument);

    Writer w;
    BOOST_CHECK_THROW(w.set_u32("", 1), std::invalid_argument);
    BOOST_CHECK_THROW(w.set_u32(std::string(kMaxKeyLength + 1, 'k'), 1), std::invalid_argument);
    BOOST_CHECK_THROW(w.set_u32("general.alignment", 64), std::invalid_argument);
    BOOST_CHECK_THROW(w.set_u64("general.alignment", 32), std::invalid_argument);
    Writer w64(64);
    BOOST_CHECK_THROW(w64.remove("general.alignment"), std::invalid_argument);
    w64.set_u32("general.alignment", 64);  // restating the constructor's value is fine

    float x[64] = {};
    BOOST_CHECK_THROW(w.add_tensor("", DType::F32, {1}, x), std::invalid_argument);
    BOOST_CHECK_THROW(w.add_tensor(std::string(kMaxNameLength + 1, 't'), DType::F32, {1}, x), std::invalid_argument);
    BOOST_CHECK_THROW(w.add_tensor("t", DType::Q8_0, {}, x), std::invalid_argument);
    BOOST_CHECK_THROW(w.add_tensor("t", DType::F32, {1, 1, 1, 1, 1}, x), std::invalid_argument);
    BOOST_CHECK_THROW(w.add_tensor("t", DType::F32, {4, 0}, x), std::invalid_argument);
    BOOST_CHECK_THROW(w.add_tensor("t", DType::F32, {-4}, x), std::invalid_argument);
    BOOST_CHECK_THROW(w.add_tensor("t", DType::F32, {int64_t{1} << 32, int64_t{1} << 31}, x), std::invalid_argument);
    BOOST_CHECK_THROW(w.add_tensor("t", DType::F64, {int64_t{1} << 62}, x), std::invalid_argument);
    BOOST_CHECK_THROW(w.add_tensor("t", DType::Q4_0, {33}, x), std::invalid_argument);
    w.add_tensor("t", DType::F32, {64}, x);
    BOOST_CHECK_THROW(w.add_tensor("t", DType::F32, {64}, x), std::invalid_argument);
    auto bytes = w.bytes();
    BOOST_TEST(File::parse(bytes)->tensors().size() == 1u);
}

BOOST_AUTO_TEST_CASE(stories260k_opens, *test::shared("data/models/stories260K/stories260K.gguf")) {
    auto f = File::open((test::shared_dir() / "data/models/stories260K/stories260K.gguf").string());
    BOOST_TEST(*f->get_string("general.architecture") == "llama");
    BOOST_REQUIRE(f->tensor("token_embd.weight"));
    BOOST_TEST(f->tensor("token_embd.weight")->ne[0] == 64);
    BOOST_TEST(f->tensor("token_embd.weight")->ne[1] == 512);
}

BOOST_AUTO_TEST_SUITE_END()
