// tests/unit/quantize_test.cpp — whole-model quantization (model/quant_mix, model/quantize_model):
// the files strata writes are the files llama.cpp's quantizer writes, tensor by tensor
// and byte for byte; bad inputs are refused with errors that name the tensor.
// Fixtures: tests/data/quant/mix*.gguf (make_fixtures.py) and, when present, the golden
// models in ../shared/golden/models.
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "model/quant_mix.h"
#include "model/quantize_model.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"
#include "test_util.h"

using namespace strata;
namespace fs = std::filesystem;

namespace {

// A fresh path in the temporary directory, removed with the object.
class TempFile {
public:
    explicit TempFile(const std::string& stem) {
        static std::atomic<int> counter{0};
        path_ = fs::temp_directory_path() /
                ("strata-quant-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + stem);
    }
    ~TempFile() { fs::remove(path_); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    std::string str() const { return path_.string(); }

private:
    fs::path path_;
};

model::FileType file_type(const std::string& name) {
    auto ft = model::file_type_from_name(name);
    BOOST_REQUIRE_MESSAGE(ft, "unknown file type " << name);
    return *ft;
}

std::vector<char> slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Compares two GGUF files tensor by tensor (names, order, types, shapes, bytes), then as
// whole files (metadata and layout included).
void check_same_model(const std::string& ours, const std::string& theirs) {
    auto a = gguf::File::open(ours);
    auto b = gguf::File::open(theirs);
    BOOST_REQUIRE_EQUAL(a->tensors().size(), b->tensors().size());
    for (size_t i = 0; i < a->tensors().size(); ++i) {
        const auto& x = a->tensors()[i];
        const auto& y = b->tensors()[i];
        BOOST_TEST_CONTEXT("tensor " << i << " " << y.name) {
            BOOST_TEST(x.name == y.name);
            BOOST_TEST(dtype_name(x.type) == dtype_name(y.type));
            BOOST_TEST(x.n_dims == y.n_dims);
            BOOST_TEST(std::memcmp(x.ne, y.ne, sizeof x.ne) == 0);
            BOOST_REQUIRE(x.nbytes == y.nbytes);
            BOOST_TEST(std::memcmp(x.data, y.data, x.nbytes) == 0, "tensor bytes differ");
        }
    }
    BOOST_TEST((slurp(ours) == slurp(theirs)), ours << " and " << theirs << " differ outside the tensors");
}

void check_against_llama_cpp(const fs::path& src, const std::string& type, const fs::path& expected, int threads) {
    BOOST_TEST_CONTEXT(src.filename().string() << " as " << type) {
        TempFile out(type + ".gguf");
        model::QuantizeOptions opt;
        opt.threads = threads;
        model::quantize_model(src.string(), out.str(), file_type(type), opt);
        check_same_model(out.str(), expected.string());
    }
}

fs::path quant_data(const std::string& name) { return test::data_dir() / "quant" / name; }

// A small llama model: token_embd and one block weight of the given type, holding 0.01
// except for element 300 (row 1), and a norm.
std::vector<uint8_t> small_model(DType weight_type, float special_value, bool with_arch = true) {
    gguf::Writer w;
    if (with_arch) w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 2);
    w.set_u32("llama.attention.head_count", 4);
    std::vector<float> values(256 * 4, 0.01f);
    values[300] = special_value;
    std::vector<uint8_t> packed(dtype_bytes(weight_type, values.size()));
    quantize_row(weight_type, values.data(), packed.data(), static_cast<int64_t>(values.size()));
    w.add_tensor("token_embd.weight", weight_type, {256, 4}, packed.data());
    w.add_tensor("output_norm.weight", DType::F32, {256}, values.data());
    w.add_tensor("blk.0.attn_q.weight", weight_type, {256, 4}, packed.data());
    return w.bytes();
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(file_types)

BOOST_AUTO_TEST_CASE(names_ids_and_aliases) {
    BOOST_TEST(file_type("q4_k_m").id == 15u);
    BOOST_TEST(dtype_name(file_type("Q4_K_M").base) == "Q4_K");
    BOOST_TEST(file_type("q8_0").id == 7u);
    BOOST_TEST(file_type("bf16").id == 32u);
    BOOST_TEST(file_type("q4_k").name == "Q4_K_M");  // llama-quantize's aliases
    BOOST_TEST(file_type("Q5_K").name == "Q5_K_M");
    BOOST_TEST(file_type("q3_k").name == "Q3_K_M");
    BOOST_TEST(!model::file_type_from_name("q4_k_x"));
    BOOST_TEST(!model::file_type_from_name("IQ2_XXS"));
    BOOST_TEST(model::file_types().size() == 20u);
    BOOST_TEST(file_type("mxfp4_moe").id == 38u);
    BOOST_TEST(dtype_name(file_type("MXFP4_MOE").base) == "MXFP4");
    BOOST_TEST(file_type("iq4_xs").id == 30u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(same_as_llama_cpp)

// Every architecture's F16 file quantized to Q4_K_M gives llama.cpp's file byte for byte
// (its fused qkv, q/k norms, post norms, 3-D expert tensors and F32 routers classified as
// llama-quantize does).
BOOST_AUTO_TEST_CASE(architectures_quantize_like_llama_quantize) {
    for (const char* m : {"qwen3", "gemma2", "gemma3", "phi3", "llama-yarn", "granite", "olmo2", "qwen3moe", "olmoe", "mixtral"}) {
        const auto dir = test::data_dir() / "archs" / "models";
        TempFile out(std::string(m) + "-q4_k_m.gguf");
        model::QuantizeOptions opt;
        opt.threads = 2;
        model::quantize_model((dir / (std::string(m) + "-f16.gguf")).string(), out.str(), file_type("q4_k_m"), opt);
        BOOST_TEST((slurp(out.str()) == slurp((dir / (std::string(m) + "-q4_k_m.gguf")).string())), m << ": differs from llama.cpp's Q4_K_M");
    }
}

// mix.gguf: 8 blocks, GQA 4, rows of 160 and 100 in two ffn_down tensors (fallbacks).
BOOST_AUTO_TEST_CASE(mixes_on_fixture_model) {
    for (const char* type : {"q4_k_m", "q5_k_m", "q3_k_m", "q4_k_s", "q2_k", "q8_0", "q4_0", "iq4_nl", "iq4_xs"})
        check_against_llama_cpp(quant_data("mix.gguf"), type, quant_data(std::string("mix.") + type + ".gguf"), 2);
}

// Experts MXFP4, every other matrix (router excepted: it stays F32) Q8_0.
BOOST_AUTO_TEST_CASE(mxfp4_moe_mix) {
    check_against_llama_cpp(quant_data("mix-moe.gguf"), "mxfp4_moe", quant_data("mix-moe.mxfp4_moe.gguf"), 2);
}

// No output.weight: token_embd takes the output tensor's type.
BOOST_AUTO_TEST_CASE(tied_embeddings_fixture) {
    check_against_llama_cpp(quant_data("mix-tied.gguf"), "q4_k_m", quant_data("mix-tied.q4_k_m.gguf"), 1);
}

// Tensors big enough to be split across threads (the fixture models are not).
BOOST_AUTO_TEST_CASE(thread_count_does_not_change_bytes) {
    gguf::Writer w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 1);
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<uint16_t> weights(512 * 700);
    for (auto& h : weights) h = fp32_to_fp16(normal(rng));
    for (const char* name : {"token_embd.weight", "blk.0.attn_v.weight", "blk.0.ffn_down.weight"})
        w.add_tensor(name, DType::F16, {512, 700}, weights.data());
    TempFile src("big.gguf"), one("t1.gguf"), three("t3.gguf");
    write_bytes(src.str(), w.bytes());
    for (auto [threads, out] : {std::pair{1, &one}, std::pair{3, &three}}) {
        model::QuantizeOptions opt;
        opt.threads = threads;
        model::quantize_model(src.str(), out->str(), file_type("q5_k_m"), opt);
    }
    BOOST_TEST((slurp(one.str()) == slurp(three.str())));
}

BOOST_AUTO_TEST_CASE(golden_models, *test::shared("golden/models/llama-f16.gguf")) {
    const fs::path dir = test::shared_dir() / "golden" / "models";
    for (const char* type : {"q4_k_m", "q8_0", "q4_0", "q6_k"})
        check_against_llama_cpp(dir / "llama-f16.gguf", type, dir / (std::string("llama-") + type + ".gguf"), 2);
}

BOOST_AUTO_TEST_CASE(plan_reports_fallbacks) {
    auto f = gguf::File::open(quant_data("mix.gguf").string());
    const auto plan = model::plan_quantization(*f, file_type("q4_k_m"));
    BOOST_REQUIRE_EQUAL(plan.size(), f->tensors().size());
    BOOST_TEST(plan.front().src->name == "output.weight");  // llama.cpp's order: outside blocks first
    int fallbacks = 0;
    for (const auto& p : plan) {
        if (p.src->name == "blk.1.ffn_down.weight") BOOST_TEST(dtype_name(p.type) == "Q5_0");
        if (p.src->name == "blk.2.ffn_down.weight") BOOST_TEST(dtype_name(p.type) == "F16");
        if (p.src->name == "blk.0.attn_norm.weight") BOOST_TEST(dtype_name(p.type) == "F32");
        fallbacks += !p.fallback.empty();
    }
    BOOST_TEST(fallbacks == 2);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(refusals)

BOOST_AUTO_TEST_CASE(requantizing_needs_permission) {
    TempFile src("q8.gguf"), out("out.gguf");
    write_bytes(src.str(), small_model(DType::Q8_0, 0.5f));
    try {
        model::quantize_model(src.str(), out.str(), file_type("q4_k_m"));
        BOOST_FAIL("requantized without permission");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()).find("token_embd.weight is already Q8_0") != std::string::npos, e.what());
    }
    BOOST_TEST(!fs::exists(out.str()));
    model::QuantizeOptions opt;
    opt.allow_requantize = true;
    const auto r = model::quantize_model(src.str(), out.str(), file_type("q4_k_m"), opt);
    BOOST_TEST(r.converted == 2u);
    auto f = gguf::File::open(out.str());
    BOOST_TEST(dtype_name(f->tensor("blk.0.attn_q.weight")->type) == "Q4_K");
    BOOST_TEST(*f->get_int("general.file_type") == 15);
    BOOST_TEST(*f->get_int("general.quantization_version") == 2);
}

BOOST_AUTO_TEST_CASE(non_finite_values_are_refused) {
    for (float bad : {NAN, INFINITY}) {
        TempFile src("nan.gguf"), out("out.gguf");
        write_bytes(src.str(), small_model(DType::F32, bad));
        try {
            model::quantize_model(src.str(), out.str(), file_type("q8_0"));
            BOOST_FAIL("quantized a tensor holding " << bad);
        } catch (const std::runtime_error& e) {
            BOOST_TEST(std::string(e.what()).find("token_embd.weight: row 1 holds NaN or Inf") != std::string::npos,
                       e.what());
        }
        BOOST_TEST(!fs::exists(out.str()));
    }
}

BOOST_AUTO_TEST_CASE(missing_architecture_is_named) {
    TempFile src("noarch.gguf"), out("out.gguf");
    write_bytes(src.str(), small_model(DType::F32, 0.5f, false));
    try {
        model::quantize_model(src.str(), out.str(), file_type("q4_0"));
        BOOST_FAIL("quantized without an architecture");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()).find("general.architecture") != std::string::npos, e.what());
    }
}

BOOST_AUTO_TEST_CASE(missing_input_file) {
    TempFile out("out.gguf");
    BOOST_CHECK_THROW(model::quantize_model("/nonexistent/model.gguf", out.str(), file_type("q4_0")), std::exception);
}

BOOST_AUTO_TEST_SUITE_END()
