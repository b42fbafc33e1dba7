// tests/unit/gguf_test.cpp — the GGUF reader and writer: round trips and real files.
#include <cstring>

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

BOOST_AUTO_TEST_CASE(stories260k_opens, *test::shared("data/models/stories260K/stories260K.gguf")) {
    auto f = File::open((test::shared_dir() / "data/models/stories260K/stories260K.gguf").string());
    BOOST_TEST(*f->get_string("general.architecture") == "llama");
    BOOST_REQUIRE(f->tensor("token_embd.weight"));
    BOOST_TEST(f->tensor("token_embd.weight")->ne[0] == 64);
    BOOST_TEST(f->tensor("token_embd.weight")->ne[1] == 512);
}

BOOST_AUTO_TEST_SUITE_END()
