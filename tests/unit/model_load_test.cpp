// tests/unit/model_load_test.cpp — the model loader on files that are valid GGUF but not
// valid models: missing or absurd hyperparameters, unknown architectures, missing
// tensors (a family's own keys and tensors too), wrong shapes and types. Each gives an error naming what is wrong.
// And a file of a weight type served through tensor/dot_ref.h (MXFP4 experts) loads and
// runs, its logits close to llama.cpp's.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>

#include "golden.h"
#include "gguf/writer.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "tensor/fp16.h"
#include "weights/planner.h"
#include "weights/streamed.h"
#include "test_isa.h"
#include "test_util.h"

using namespace strata;

namespace {

// A tiny valid llama model (n_embd 32, 1 layer, 4 heads / 2 kv heads, n_ff 64, vocab 300),
// after `edit` changed its metadata or `skip`/`retype` its tensors.
struct TinyModel {
    std::function<void(gguf::Writer&)> edit = [](gguf::Writer&) {};
    std::string skip;                      // tensor to leave out
    std::string reshape;                   // tensor to give a wrong shape
    std::string retype;                    // tensor to store as Q8_K (not a weight type)
    std::vector<uint8_t> bytes;

    std::shared_ptr<const gguf::File> file() {
        gguf::Writer w;
        w.set_string("general.architecture", "llama");
        w.set_u32("llama.embedding_length", 32);
        w.set_u32("llama.block_count", 1);
        w.set_u32("llama.feed_forward_length", 64);
        w.set_u32("llama.attention.head_count", 4);
        w.set_u32("llama.attention.head_count_kv", 2);
        w.set_u32("llama.context_length", 128);
        edit(w);
        static const std::vector<uint8_t> zeros(1 << 20, 0);
        auto add = [&](const std::string& name, std::vector<int64_t> ne) {
            if (name == skip) return;
            if (name == reshape) ne[0] *= 2;
            const DType t = name == retype ? DType::Q8_K : DType::F32;
            if (t == DType::Q8_K) ne[0] = 256;
            w.add_tensor(name, t, ne, zeros.data());
        };
        add("token_embd.weight", {32, 300});
        add("output_norm.weight", {32});
        const std::string p = "blk.0.";
        add(p + "attn_norm.weight", {32});
        add(p + "attn_q.weight", {32, 32});
        add(p + "attn_k.weight", {32, 16});
        add(p + "attn_v.weight", {32, 16});
        add(p + "attn_output.weight", {32, 32});
        add(p + "ffn_norm.weight", {32});
        add(p + "ffn_gate.weight", {32, 64});
        add(p + "ffn_up.weight", {32, 64});
        add(p + "ffn_down.weight", {64, 32});
        bytes = w.bytes();
        return gguf::File::parse(bytes);
    }
};

// The error loading `m` gives ("" when it loads).
std::string load_error(TinyModel m) {
    try {
        model::Model::load(m.file(), {.n_threads = 1});
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The error loading tests/data/archs/models/<name> rewritten without metadata key
// `drop_key` or tensor `drop_tensor`, then `edit` applied ("" when it loads).
std::string arch_load_error(const std::string& name, const std::string& drop_key, const std::string& drop_tensor,
                            const std::function<void(gguf::Writer&)>& edit = {}) {
    auto src = gguf::File::open((test::data_dir() / "archs/models" / name).string());
    gguf::Writer w(src->alignment());
    for (const auto& [key, value] : src->metadata())
        if (key != drop_key && key != "general.alignment") w.set_value(key, value);
    for (const auto& t : src->tensors())
        if (t.name != drop_tensor) w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), src->bytes().data() + t.file_offset);
    if (edit) edit(w);
    const auto bytes = w.bytes();
    try {
        model::Model::load(gguf::File::parse(bytes), {.n_threads = 1});
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(model_load)

BOOST_AUTO_TEST_CASE(the_tiny_model_loads_and_runs) {
    TinyModel m;
    auto model = model::Model::load(m.file(), {.n_threads = 1});
    BOOST_TEST(model->hparams().n_vocab == 300);
    auto cache = model->new_cache(8);
    std::vector<float> logits;
    const std::vector<int32_t> toks = {1, 2};
    const model::SequenceBatch s{&cache, toks, model::Logits::Last};
    model->forward({&s, 1}, logits);
    BOOST_TEST(logits.size() == 300u);
}

BOOST_AUTO_TEST_CASE(metadata_problems_are_named) {
    auto with = [](std::function<void(gguf::Writer&)> edit) {
        TinyModel m;
        m.edit = std::move(edit);
        return load_error(m);
    };
    BOOST_TEST(contains(with([](auto& w) { w.remove("general.architecture"); }), "general.architecture"));
    BOOST_TEST(contains(with([](auto& w) { w.set_string("general.architecture", "mamba"); }), "\"mamba\" is not supported"));
    BOOST_TEST(contains(with([](auto& w) { w.set_u64("llama.block_count", 1ull << 40); }), "llama.block_count"));
    BOOST_TEST(contains(with([](auto& w) { w.set_u32("llama.attention.head_count", 0); }), "llama.attention.head_count"));
    BOOST_TEST(contains(with([](auto& w) { w.set_u32("llama.attention.head_count_kv", 3); }), "not a multiple"));
    BOOST_TEST(contains(with([](auto& w) { w.remove("llama.embedding_length"); }), "missing llama.embedding_length"));
    BOOST_TEST(contains(with([](auto& w) { w.set_string("llama.block_count", "one"); }), "llama.block_count"));
    BOOST_TEST(contains(with([](auto& w) { w.set_f32("llama.rope.freq_base", -1.0f); }), "llama.rope.freq_base"));
    BOOST_TEST(contains(with([](auto& w) { w.set_u32("llama.rope.dimension_count", 7); }), "rope.dimension_count"));
}

BOOST_AUTO_TEST_CASE(tensor_problems_are_named) {
    TinyModel missing;
    missing.skip = "blk.0.ffn_up.weight";
    BOOST_TEST(contains(load_error(missing), "lacks tensor blk.0.ffn_up.weight"));
    TinyModel no_norm;
    no_norm.skip = "output_norm.weight";
    BOOST_TEST(contains(load_error(no_norm), "output_norm.weight"));
    TinyModel shape;
    shape.reshape = "blk.0.attn_k.weight";
    BOOST_TEST(contains(load_error(shape), "blk.0.attn_k.weight has shape [64, 16], expected [32, 16]"));
    TinyModel type;
    type.retype = "blk.0.attn_q.weight";
    BOOST_TEST(contains(load_error(type), "blk.0.attn_q.weight"));
    TinyModel embd;
    embd.reshape = "token_embd.weight";
    BOOST_TEST(contains(load_error(embd), "token_embd.weight"));
}

BOOST_AUTO_TEST_CASE(family_keys_and_tensors_are_required_by_name) {
    BOOST_TEST(arch_load_error("gemma2-f16.gguf", "", "") == "");
    BOOST_TEST(contains(arch_load_error("gemma2-f16.gguf", "gemma2.attention.sliding_window", ""), "missing gemma2.attention.sliding_window"));
    BOOST_TEST(contains(arch_load_error("gemma2-f16.gguf", "", "blk.1.post_ffw_norm.weight"), "lacks tensor blk.1.post_ffw_norm.weight"));
    BOOST_TEST(contains(arch_load_error("qwen3-f16.gguf", "", "blk.0.attn_k_norm.weight"), "lacks tensor blk.0.attn_k_norm.weight"));
    BOOST_TEST(contains(arch_load_error("phi3-f16.gguf", "", "blk.0.attn_qkv.weight"), "lacks tensor blk.0.attn_qkv.weight"));
    BOOST_TEST(contains(arch_load_error("granite-f16.gguf", "granite.logit_scale", ""), "missing granite.logit_scale"));
    BOOST_TEST(contains(arch_load_error("olmo2-f16.gguf", "", "blk.0.attn_q_norm.weight"), "lacks tensor blk.0.attn_q_norm.weight"));
    const auto experts = [](gguf::Writer& w) {
        w.set_u32("qwen3.expert_count", 8);
        w.set_u32("qwen3.expert_used_count", 2);
    };
    BOOST_TEST(contains(arch_load_error("qwen3-f16.gguf", "", "", experts), "qwen3.expert_count is set, but strata runs qwen3 without experts"));
    BOOST_TEST(arch_load_error("gemma4-e-f16.gguf", "", "") == "");
    BOOST_TEST(contains(arch_load_error("gemma4-e-f16.gguf", "gemma4.attention.sliding_window", ""), "missing gemma4.attention.sliding_window"));
    BOOST_TEST(contains(arch_load_error("gemma4-e-f16.gguf", "", "per_layer_token_embd.weight"), "per_layer_token_embd.weight"));
    BOOST_TEST(contains(arch_load_error("gemma4-e-f16.gguf", "", "blk.1.attn_k.weight"), "lacks tensor blk.1.attn_k.weight"));
    const auto short_pattern = [](gguf::Writer& w) { w.set_i32s("gemma4.attention.sliding_window_pattern", {1, 1, 0}); };
    BOOST_TEST(contains(arch_load_error("gemma4-e-f16.gguf", "", "", short_pattern), "expected one per layer (6)"));
    const auto all_shared = [](gguf::Writer& w) { w.set_u32("gemma4.attention.shared_kv_layers", 5); };
    BOOST_TEST(contains(arch_load_error("gemma4-e-f16.gguf", "", "", all_shared), "no earlier layer of its kind"));
}

// Gemma 4 files may hold each expert's gate and up as one ffn_gate_up_exps ([gate; up] per
// expert) and scale each expert's output by ffn_down_exps.scale: gemma4moe rewritten that way
// (scales of powers of two, against a file whose down_exps rows carry the same factors, so
// both round alike) gives the same logits bit for bit, mapped and streamed through the expert cache.
BOOST_AUTO_TEST_CASE(fused_gate_up_experts_and_expert_scales_run_as_their_parts) {
    auto src = gguf::File::open((test::data_dir() / "archs/models/gemma4moe-f16.gguf").string());
    const auto& hp_keys = *src;
    const auto n_expert = static_cast<int64_t>(*hp_keys.get_int("gemma4.expert_count"));
    const auto scale_of = [](int64_t e) { return std::ldexp(1.0f, int(e % 4) - 1); };  // 0.5, 1, 2, 4
    // fused: gate/up fused, scales in ffn_down_exps.scale; folded: the scales in down_exps.
    const auto rewrite = [&](bool fused) {
        gguf::Writer w(src->alignment());
        for (const auto& [key, value] : src->metadata())
            if (key != "general.alignment") w.set_value(key, value);
        std::deque<std::vector<uint8_t>> keep;  // the tensors written anew (a deque: references to them stay valid)
        for (const auto& t : src->tensors()) {
            std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
            const uint8_t* data = src->bytes().data() + t.file_offset;
            const std::string layer = t.name.substr(0, t.name.find('.', 4) + 1);
            if (fused && t.name.ends_with("ffn_gate_exps.weight")) continue;
            if (fused && t.name.ends_with("ffn_up_exps.weight")) {
                const auto* gate = src->tensor(layer + "ffn_gate_exps.weight");
                const size_t slice = t.nbytes / size_t(n_expert);
                auto& out = keep.emplace_back();
                for (int64_t e = 0; e < n_expert; ++e) {
                    out.insert(out.end(), src->bytes().data() + gate->file_offset + e * slice, src->bytes().data() + gate->file_offset + (e + 1) * slice);
                    out.insert(out.end(), data + e * slice, data + (e + 1) * slice);
                }
                w.add_tensor(layer + "ffn_gate_up_exps.weight", t.type, {ne[0], 2 * ne[1], ne[2]}, out.data());
                continue;
            }
            if (t.name.ends_with("ffn_down_exps.weight")) {
                BOOST_REQUIRE(t.type == DType::F16);
                auto& out = keep.emplace_back(data, data + t.nbytes);
                auto* v = reinterpret_cast<uint16_t*>(out.data());
                const size_t per_expert = size_t(t.nbytes / 2 / n_expert);
                if (fused) {
                    std::vector<float> scales;
                    for (int64_t e = 0; e < n_expert; ++e) scales.push_back(scale_of(e));
                    auto& sb = keep.emplace_back(reinterpret_cast<const uint8_t*>(scales.data()), reinterpret_cast<const uint8_t*>(scales.data() + n_expert));
                    w.add_tensor(layer + "ffn_down_exps.scale", DType::F32, {n_expert}, sb.data());
                } else {
                    for (size_t i = 0; i < out.size() / 2; ++i) v[i] = fp32_to_fp16(fp16_to_fp32(v[i]) * scale_of(int64_t(i / per_expert)));
                }
                w.add_tensor(t.name, t.type, ne, out.data());
                continue;
            }
            w.add_tensor(t.name, t.type, ne, data);
        }
        return w.bytes();
    };
    const std::vector<int32_t> toks = {1, 17, 200, 33, 91, 145, 7, 250, 12, 99, 3, 64};
    std::vector<std::vector<float>> got;
    for (bool fused : {true, false}) {
        const auto bytes = rewrite(fused);
        auto m = model::Model::load(gguf::File::parse(bytes), {.n_threads = 2});
        got.push_back(test::logits_in_chunks(*m, toks, 5));
    }
    BOOST_TEST(got[0] == got[1]);
    // The fused file streamed, its experts read on demand into the smallest expert cache: the same.
    const auto path = std::filesystem::temp_directory_path() / ("strata-fused-" + std::to_string(::getpid()) + ".gguf");
    {
        const auto bytes = rewrite(true);
        std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    }
    model::Options streamed{.n_threads = 2};
    streamed.weights = [](std::shared_ptr<const gguf::File> f, weights::Layout l) {
        const weights::Plan p = weights::make_plan(l, {.budget = 0, .mode = weights::Mode::Streamed});
        return weights::load_weights(std::move(f), std::move(l), p, {});
    };
    auto on_demand = model::Model::load(gguf::File::open(path.string()), streamed);
    BOOST_TEST(test::logits_in_chunks(*on_demand, toks, 5) == got[0]);
    BOOST_TEST(on_demand->weight_stats().expert_misses > 0u);
    on_demand.reset();
    std::filesystem::remove(path);
    auto plain = model::Model::load(src, {.n_threads = 2});
    BOOST_TEST(test::logits_in_chunks(*plain, toks, 5) != got[0]);  // the scales do change the output
    BOOST_TEST(contains(arch_load_error("gemma4moe-f16.gguf", "", "blk.0.ffn_up_exps.weight"), "lacks tensor blk.0.ffn_up_exps.weight (or blk.0.ffn_gate_up_exps.weight)"));
}

BOOST_AUTO_TEST_CASE(unknown_rope_scaling_is_named) {
    TinyModel m;
    m.edit = [](gguf::Writer& w) { w.set_string("llama.rope.scaling.type", "dynamic"); };
    BOOST_TEST(contains(load_error(m), "llama.rope.scaling.type \"dynamic\" is not supported"));
}

// tests/data/quant/qwen3moe.mxfp4_moe.gguf (README there): a tiny qwen3moe model whose experts
// llama.cpp quantized to MXFP4 (the rest Q8_0), and llama.cpp's logits of 7 tokens in one batch.
// Measured (scalar, AVX2, AVX-512 alike): the first position within 7.5e-8 (max_rel) of llama.cpp's (the
// expert products are GGML's generic dot); over all positions max_rel 1.01e-2, rms_rel 1.01e-2,
// the same as the all-Q8_0 quantization of the same model shows against llama.cpp (9.7e-3 /
// 9.1e-3: later positions, not MXFP4). MXFP4's own error is 8.9e-2 / 6.8e-2 (this file against
// its F16 source, in llama.cpp), so the bounds (2e-2 overall, 1e-4 on the first position) leave
// a wrong MXFP4 product no room.
BOOST_AUTO_TEST_CASE(an_mxfp4_moe_file_runs_as_llama_cpp_does) {
    const auto dir = test::data_dir() / "quant";
    const std::string golden_bytes = test::read_file(dir / "qwen3moe.mxfp4_moe.seven.logits.f32");
    std::vector<float> golden(golden_bytes.size() / sizeof(float));
    std::memcpy(golden.data(), golden_bytes.data(), golden.size() * sizeof(float));
    const std::vector<int32_t> toks = {1, 17, 200, 33, 91, 145, 7};
    const size_t n_vocab = golden.size() / toks.size();
    // max|a - g| / max|g| and rms(a - g) / rms(g) over golden entries [lo, hi).
    const auto rel = [&](const std::vector<float>& a, size_t lo, size_t hi) {
        double max_diff = 0, max_g = 0, sq_diff = 0, sq_g = 0;
        for (size_t i = lo; i < hi; ++i) {
            const double d = static_cast<double>(a[i]) - golden[i], g = golden[i];
            max_diff = std::max(max_diff, std::fabs(d));
            max_g = std::max(max_g, std::fabs(g));
            sq_diff += d * d;
            sq_g += g * g;
        }
        return std::pair{max_diff / max_g, std::sqrt(sq_diff / sq_g)};
    };
    for (kernels::Isa isa : test::supported_isas()) {
        const test::UseIsa use(isa);
        auto model = model::Model::load(gguf::File::open((dir / "qwen3moe.mxfp4_moe.gguf").string()), {.n_threads = 2});
        auto cache = model->new_cache(16);
        std::vector<float> logits;
        const model::SequenceBatch s{&cache, toks, model::Logits::All};
        model->forward({&s, 1}, logits);
        BOOST_TEST_REQUIRE(logits.size() == golden.size());
        const auto [first_max, first_rms] = rel(logits, 0, n_vocab);
        const auto [max_rel, rms_rel] = rel(logits, 0, golden.size());
        BOOST_TEST_MESSAGE(kernels::isa_name(isa) << " mxfp4_moe: first position max_rel " << first_max << "; all: max_rel "
                                                  << max_rel << ", rms_rel " << rms_rel);
        BOOST_TEST(first_max <= 1e-4, kernels::isa_name(isa) << " first position max_rel " << first_max);
        BOOST_TEST(max_rel <= 2e-2, kernels::isa_name(isa) << " max_rel " << max_rel);
        BOOST_TEST(rms_rel <= 2e-2, kernels::isa_name(isa) << " rms_rel " << rms_rel);
    }
}

BOOST_AUTO_TEST_SUITE_END()
