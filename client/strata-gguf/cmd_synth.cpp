// client/strata-gguf/cmd_synth.cpp — `strata-gguf synth OUT`: a random-weight model of
// any decoder family strata runs (llama, qwen2, qwen3, gemma2, gemma3, phi3, granite,
// olmo2, the mixtures of experts qwen3moe, olmoe and gpt-oss, the Qwen3.5 hybrids qwen35 and
// qwen35moe, LFM2's short convolutions lfm2 and lfm2moe, Gemma 4) and any weight type, deterministic
// from --seed (for tests and benchmarks, e.g. Llama-3.1-8B or Qwen3-30B-A3B shapes at F16
// or Q4_K_M). A layer's tensors are those the family's builder requires
// (model::layer_tensors, from the hyperparameters the keys written give); the family's own
// keys take the values of its released models, so llama.cpp loads the files too. The
// random router of a MoE file picks experts about uniformly. Matrices are N(0, std), norm
// weights 1 + N(0, std/2.5) stored F32, biases (the experts' too) and attention sinks
// N(0, std) stored F32. The vocabulary is a synthetic
// SentencePiece one, or the tokenizer section of another GGUF (--vocab-from).
// Every type is written directly: a quantized file (Q8_0, Q4_K_M, ...) gives each tensor the
// type llama.cpp's mix gives it (planned as `strata-gguf quantize` plans it, on the layout of
// the F16 file) and quantizes each row as it is generated.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "commands.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "model/quant_mix.h"
#include "model/quantize_model.h"
#include "tensor/quantize.h"

namespace strata::tool {
namespace {

struct Shape {
    int64_t n_embd, n_layer, n_ff, n_head, n_head_kv, vocab, ctx;
    double rope_base;
    int64_t head_dim = 0;  // 0: n_embd / n_head
    int64_t n_expert = 0, n_expert_used = 0;  // experts (n_ff is then each expert's width)
    int64_t window = 0;                       // the sliding window of Gemma and gpt-oss (--window)
    // Qwen3.5's Gated DeltaNet layers (ssm.*: state size, key heads, value heads) and shared expert.
    int64_t ssm_state = 128, ssm_groups = 16, ssm_heads = 16, n_ff_shexp = 0;
    // Gemma 4: every swa_period-th layer global (head_dim, kv_full kv heads, no attn_v when
    // k_eq_v), the others sliding (head_dim_swa); the last shared_kv layers read earlier layers'
    // keys and values; per-layer inputs n_embd_per_layer wide (the E models); a MoE layer's
    // dense FFN n_ff_dense wide beside its experts (n_ff each); with wide_shared_ffn the
    // KV-sharing layers' FFNs twice as wide (E2B's feed_forward_length per layer).
    struct Gemma4 {
        int64_t head_dim_swa = 0, swa_period = 6, shared_kv = 0, n_embd_per_layer = 0, kv_full = 0, n_ff_dense = 0;
        bool k_eq_v = false, wide_shared_ffn = false;
    } g4 = {};
};

bool hybrid(const std::string& arch) { return arch == "qwen35" || arch == "qwen35moe"; }

// Qwen3.5 shapes: 0.8B and 4B dense, Qwen3.6-35B-A3B (tiny: a small one for tests).
Shape hybrid_preset(const std::string& name, bool moe) {
    if (moe && name == "tiny") return {256, 4, 64, 4, 1, 512, 2048, 10000000.0, 64, 8, 2, 0, 32, 2, 4, 128};
    if (moe && name == "35b-a3b") return {2048, 40, 512, 16, 2, 248320, 262144, 10000000.0, 256, 256, 8, 0, 128, 16, 32, 512};
    if (moe) throw UsageError("unknown preset '" + name + "' for qwen35moe (tiny, 35b-a3b)");
    if (name == "tiny") return {64, 4, 192, 2, 1, 512, 2048, 10000000.0, 64, 0, 0, 0, 32, 2, 4};
    if (name == "0.8b") return {1024, 24, 3584, 8, 2, 248320, 262144, 10000000.0, 256, 0, 0, 0, 128, 16, 16};
    if (name == "4b") return {2560, 32, 9216, 16, 4, 248320, 262144, 10000000.0, 256, 0, 0, 0, 128, 16, 32};
    throw UsageError("unknown preset '" + name + "' for qwen35 (tiny, 0.8b, 4b)");
}

// LFM2 shapes: LFM2-1.2B (tiny: a small one for tests); lfm2moe tiny: 8 experts of 64 rows, 2 used.
Shape lfm2_preset(const std::string& name, bool moe) {
    if (moe && name == "tiny") return {64, 4, 64, 2, 1, 512, 2048, 1000000.0, 0, 8, 2};
    if (moe) throw UsageError("unknown preset '" + name + "' for lfm2moe (tiny)");
    if (name == "tiny") return {64, 4, 192, 2, 1, 512, 2048, 1000000.0};
    if (name == "1.2b") return {2048, 16, 8192, 32, 8, 65536, 128000, 1000000.0};
    throw UsageError("unknown preset '" + name + "' for lfm2 (tiny, 1.2b)");
}

// Whether LFM2 layer l of n attends (the others are short convolutions): LFM2-1.2B's layout for
// 16 layers, every third from the third otherwise.
bool lfm2_attends(int64_t l, int64_t n) {
    if (n == 16) return l == 2 || l == 5 || l == 8 || l == 10 || l == 12 || l == 14;
    return l % 3 == 2;
}

// Gemma 4 shapes (tiny, e-tiny, moe-tiny: small ones for tests). E2B, E4B and 26B-A4B as their
// published configurations are known here (llama.cpp tells them apart by 35, 42 and 30 layers):
// head sizes 256 (sliding, window 512 / 1024) and 512 (global), 262144-token vocabulary,
// per-layer inputs 256 wide; E2B's KV-sharing layers' FFNs twice as wide; the 26B-A4B's 128
// experts of 704 rows (8 used) beside a dense FFN of 2112 and its global layers' k used as v.
Shape gemma4_preset(const std::string& name) {
    using G = Shape::Gemma4;
    if (name == "tiny") return {64, 6, 128, 2, 1, 512, 4096, 1000000.0, 64, 0, 0, 8, 128, 16, 16, 0, G{32, 3, 3, 0, 2, 0, true}};
    if (name == "e-tiny") return {64, 6, 128, 2, 1, 512, 4096, 1000000.0, 64, 0, 0, 8, 128, 16, 16, 0, G{32, 3, 3, 16, 1, 0, false}};
    if (name == "moe-tiny") return {128, 4, 64, 2, 1, 512, 4096, 1000000.0, 64, 8, 2, 8, 128, 16, 16, 0, G{32, 2, 0, 0, 1, 128, true}};
    if (name == "e2b") return {1536, 35, 6144, 8, 1, 262144, 131072, 1000000.0, 512, 0, 0, 512, 128, 16, 16, 0, G{256, 5, 20, 256, 1, 0, false, true}};
    if (name == "e4b") return {2560, 42, 10240, 8, 2, 262144, 131072, 1000000.0, 512, 0, 0, 512, 128, 16, 16, 0, G{256, 6, 18, 256, 2, 0, false}};
    if (name == "26b-a4b")
        return {2816, 30, 704, 16, 8, 262144, 262144, 1000000.0, 512, 128, 8, 1024, 128, 16, 16, 0, G{256, 6, 0, 0, 2, 2112, true}};
    throw UsageError("unknown preset '" + name + "' for gemma4 (tiny, e-tiny, moe-tiny, e2b, e4b, 26b-a4b)");
}

bool gemma4_global(const Shape& s, int64_t l) { return (l + 1) % s.g4.swa_period == 0; }

Shape preset(const std::string& name, bool moe) {
    if (moe && name == "tiny") return {256, 2, 64, 8, 2, 512, 2048, 1000000.0, 64, 8, 2};
    if (moe && name == "30b-a3b") return {2048, 48, 768, 32, 4, 151936, 40960, 1000000.0, 128, 128, 8};
    if (moe && name == "20b") return {2880, 24, 2880, 64, 8, 201088, 131072, 150000.0, 64, 32, 4, 128};  // gpt-oss-20b
    if (moe) throw UsageError("unknown preset '" + name + "' for a mixture of experts (tiny, 30b-a3b, 20b)");
    if (name == "tiny") return {64, 2, 192, 4, 2, 512, 2048, 10000.0};
    if (name == "1b") return {2048, 16, 8192, 32, 8, 32000, 8192, 500000.0};
    if (name == "8b") return {4096, 32, 14336, 32, 8, 128256, 8192, 500000.0};
    throw UsageError("unknown preset '" + name + "' (tiny, 1b, 8b)");
}

// splitmix64: seeds independent, reproducible streams per (seed, tensor, row block).
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// N(mean, std) values from a xorshift-multiply stream and the Box-Muller transform.
class Normal {
public:
    explicit Normal(uint64_t seed) : s_(mix(seed) | 1) {}
    float next(float mean, float std) {
        if (has_spare_) {
            has_spare_ = false;
            return mean + std * spare_;
        }
        const double u1 = (double(bits() >> 11) + 1.0) * 0x1.0p-53, u2 = double(bits() >> 11) * 0x1.0p-53;
        const double r = std::sqrt(-2.0 * std::log(u1)), a = 2.0 * M_PI * u2;
        spare_ = static_cast<float>(r * std::sin(a));
        has_spare_ = true;
        return mean + std * static_cast<float>(r * std::cos(a));
    }

private:
    uint64_t bits() {
        s_ ^= s_ >> 12;
        s_ ^= s_ << 25;
        s_ ^= s_ >> 27;
        return s_ * 0x2545F4914F6CDD1Dull;
    }
    uint64_t s_;
    float spare_ = 0;
    bool has_spare_ = false;
};

// <unk> <s> </s>, 256 byte tokens, then "▁"-prefixed and bare letter n-grams with
// decreasing scores: a valid SentencePiece vocabulary of any size >= 300. The last pieces
// give way to `controls`, control tokens a family's loader looks up by text.
void synthetic_vocab(gguf::Writer& w, int64_t n_vocab, const std::vector<std::string>& controls) {
    if (n_vocab < 300) throw UsageError("--vocab must be at least 300 for the synthetic vocabulary");
    std::vector<std::string> toks = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        toks.push_back(buf);
        types.push_back(6);
    }
    const std::string sp = "\xE2\x96\x81";  // U+2581
    std::vector<std::string> pieces = {sp};
    for (int c = 33; c < 127; ++c) pieces.push_back(std::string(1, char(c)));
    for (int c = 33; c < 127; ++c) pieces.push_back(sp + char(c));
    std::vector<std::string> level = {""};
    while (toks.size() + pieces.size() < size_t(n_vocab) + 1000) {
        std::vector<std::string> next;
        for (const auto& p : level)
            for (char c = 'a'; c <= 'z'; ++c) next.push_back(p + c);
        for (const auto& p : next) {
            if (p.size() < 2) continue;
            pieces.push_back(sp + p);
            pieces.push_back(p);
        }
        level = std::move(next);
    }
    std::vector<float> scores(toks.size(), 0.0f);
    for (size_t i = 0; toks.size() < size_t(n_vocab); ++i) {
        toks.push_back(pieces[i]);
        types.push_back(1);
        scores.push_back(-static_cast<float>(i));
    }
    for (size_t k = 0; k < controls.size(); ++k) {
        toks[toks.size() - 1 - k] = controls[k];
        types[types.size() - 1 - k] = 3;
    }
    w.set_string("tokenizer.ggml.model", "llama");
    w.set_strings("tokenizer.ggml.tokens", toks);
    w.set_f32s("tokenizer.ggml.scores", scores);
    w.set_i32s("tokenizer.ggml.token_type", types);
    w.set_u32("tokenizer.ggml.bos_token_id", 1);
    w.set_u32("tokenizer.ggml.eos_token_id", 2);
    w.set_u32("tokenizer.ggml.unknown_token_id", 0);
    w.set_bool("tokenizer.ggml.add_bos_token", true);
    w.set_bool("tokenizer.ggml.add_eos_token", false);
}

// Copies every tokenizer.* key of another GGUF; returns its vocabulary size.
int64_t copy_vocab(gguf::Writer& w, const std::string& path) {
    auto f = gguf::File::open(path);
    const auto* toks = f->get_array("tokenizer.ggml.tokens");
    if (!toks) throw std::runtime_error(path + " has no tokenizer.ggml.tokens");
    for (const auto& [key, value] : f->metadata())
        if (key.rfind("tokenizer.", 0) == 0) w.set_value(key, value);
    return static_cast<int64_t>(toks->array_count);
}

// Adds a tensor of shape `ne` (rows of ne[0] values) drawn row block by row block (each
// block with its own stream, so threads produce the same bytes in any order), encoded as `type`.
// `adjust(row, values)`, when given, changes a row before it is encoded.
using RowAdjust = std::function<void(int64_t row, float* values)>;
void add_random(gguf::Writer& w, const std::string& name, DType type, std::vector<int64_t> ne, float mean, float std, uint64_t seed,
                int threads, RowAdjust adjust = {}) {
    constexpr int64_t kBlockRows = 64;
    const int64_t k = ne[0];
    int64_t rows = 1;
    for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
    const size_t row_bytes = dtype_bytes(type, k);
    w.add_tensor(name, type, ne, [=](const gguf::Writer::Emit& out) {
        const int64_t chunk_rows = kBlockRows * threads * 4;
        std::vector<uint8_t> buf(row_bytes * chunk_rows);
        for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
            const int64_t n = std::min(chunk_rows, rows - r0);
            auto work = [&, adjust](int t) {
                std::vector<float> vals(k);
                for (int64_t b = t * kBlockRows; b < n; b += threads * kBlockRows) {
                    Normal rng(seed ^ mix(uint64_t(r0 + b) + 1));
                    for (int64_t r = b; r < std::min(n, b + kBlockRows); ++r) {
                        for (auto& v : vals) v = rng.next(mean, std);
                        if (adjust) adjust(r0 + r, vals.data());
                        quantize_row(type, vals.data(), buf.data() + r * row_bytes, k);
                    }
                }
            };
            std::vector<std::thread> pool;
            for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
            work(0);
            for (auto& th : pool) th.join();
            out(buf.data(), row_bytes * n);
        }
    });
}

// Gemma 4's layer plan (Shape::Gemma4) as its converter writes it.
void gemma4_keys(gguf::Writer& w, const std::string& a, const Shape& s) {
    std::vector<bool> sliding;
    std::vector<int32_t> kv_heads;
    for (int64_t l = 0; l < s.n_layer; ++l) {
        sliding.push_back(!gemma4_global(s, l));
        kv_heads.push_back(int32_t(sliding.back() ? s.n_head_kv : s.g4.kv_full));
    }
    w.set_bools(a + "attention.sliding_window_pattern", sliding);
    w.set_i32s(a + "attention.head_count_kv", kv_heads);
    w.set_u32(a + "attention.key_length_swa", static_cast<uint32_t>(s.g4.head_dim_swa));
    w.set_u32(a + "attention.value_length_swa", static_cast<uint32_t>(s.g4.head_dim_swa));
    w.set_u32(a + "rope.dimension_count_swa", static_cast<uint32_t>(s.g4.head_dim_swa));
    w.set_f32(a + "rope.freq_base_swa", 10000.0f);
    w.set_u32(a + "attention.shared_kv_layers", static_cast<uint32_t>(s.g4.shared_kv));
    w.set_u32(a + "embedding_length_per_layer_input", static_cast<uint32_t>(s.g4.n_embd_per_layer));
    w.set_f32(a + "final_logit_softcapping", 30.0f);
    if (s.n_expert) w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(s.g4.n_ff_dense));
    if (s.g4.wide_shared_ffn) {
        std::vector<int32_t> widths;
        for (int64_t l = 0; l < s.n_layer; ++l) widths.push_back(int32_t(s.n_ff * (l < s.n_layer - s.g4.shared_kv ? 1 : 2)));
        w.set_i32s(a + "feed_forward_length", widths);
    }
}

// Proportional RoPE (Gemma 4's global layers, rope_freqs): the first quarter of the rotary pairs
// turn at their own frequency, the next quarter slower (factors 1.5 to 4), the rest not at all.
std::vector<float> proportional_rope_factors(int64_t pairs) {
    std::vector<float> f(size_t(pairs), 1e30f);
    const int64_t turning = std::max<int64_t>(1, pairs / 4), slowed = std::min(pairs - turning, std::max<int64_t>(1, pairs / 4));
    for (int64_t i = 0; i < turning; ++i) f[size_t(i)] = 1.0f;
    for (int64_t i = 0; i < slowed; ++i) f[size_t(turning + i)] = 1.5f + 2.5f * float(i) / float(std::max<int64_t>(1, slowed - 1));
    return f;
}

// Adds an F32 vector of the given values.
void add_values(gguf::Writer& w, const std::string& name, std::vector<float> values) {
    const auto n = static_cast<int64_t>(values.size());
    w.add_tensor(name, DType::F32, {n}, [v = std::move(values)](const gguf::Writer::Emit& out) { out(v.data(), v.size() * sizeof(float)); });
}

// --route-groups G: decisive routing for a small MoE test file, whose golden logits must not
// hang on a top-k choice within rounding of a tie. Token t belongs to group t % G and its
// embedding gets `embed` on coordinate t % G; the router rows of group g's experts (g k to
// g k + k - 1, modulo the experts) get `alpha` on coordinate g, so a token of group g gives
// them logits well above the rest (the router's own noise orders them and sets their weights).
struct RouteGroups {
    int64_t groups = 0, used = 0, experts = 0;
    float embed = 1.0f, alpha = 8.0f;
    RowAdjust embedding() const {
        return [g = groups, e = embed](int64_t t, float* v) { v[t % g] += e; };
    }
    RowAdjust router() const {
        return [*this](int64_t expert, float* v) {
            for (int64_t g = 0; g < groups; ++g)
                if ((expert - g * used % experts + experts) % experts < used) v[g] += alpha;
        };
    }
};

// The keys a family requires beyond the shape, with values of its released models:
// Gemma's sliding window, Granite's four multipliers, Phi-3's LongRoPE original context.
void family_keys(gguf::Writer& w, const std::string& arch, const Shape& s) {
    const std::string a = arch + ".";
    if (hybrid(arch)) {  // every 4th layer attention over a quarter of the head rotated, IMROPE sections
        const int64_t hd = s.head_dim ? s.head_dim : s.n_embd / s.n_head, half = hd / 8, third = (half + 2) / 3;
        w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(hd / 4));
        w.set_i32s(a + "rope.dimension_sections", {int32_t(third), int32_t(third), int32_t(half - 2 * third), 0});
        w.set_u32(a + "full_attention_interval", 4);
        w.set_u32(a + "ssm.conv_kernel", 4);
        w.set_u32(a + "ssm.state_size", static_cast<uint32_t>(s.ssm_state));
        w.set_u32(a + "ssm.group_count", static_cast<uint32_t>(s.ssm_groups));
        w.set_u32(a + "ssm.time_step_rank", static_cast<uint32_t>(s.ssm_heads));
        w.set_u32(a + "ssm.inner_size", static_cast<uint32_t>(s.ssm_state * s.ssm_heads));
        if (s.n_ff_shexp) w.set_u32(a + "expert_shared_feed_forward_length", static_cast<uint32_t>(s.n_ff_shexp));
    }
    if (arch.starts_with("lfm2")) {  // a kv head count per layer, 0 for the short convolutions of 3 taps
        std::vector<int32_t> kv_heads;
        for (int64_t l = 0; l < s.n_layer; ++l) kv_heads.push_back(lfm2_attends(l, s.n_layer) ? int32_t(s.n_head_kv) : 0);
        w.set_i32s(a + "attention.head_count_kv", kv_heads);
        w.set_u32(a + "shortconv.l_cache", 3);
    }
    if (arch == "lfm2moe") {  // the first layer's FFN dense (LFM2-8B-A1B: two), a sigmoid router
        w.set_u32(a + "leading_dense_block_count", 1);
        w.set_u32(a + "expert_gating_func", 2);
    }
    if (arch == "gemma2" || arch == "gemma3" || arch == "gemma4" || arch == "gpt-oss")
        w.set_u32(a + "attention.sliding_window", static_cast<uint32_t>(s.window));
    if (arch == "gemma4") gemma4_keys(w, a, s);
    if (arch == "gpt-oss") {  // YaRN x32 from 4096, as the released files
        w.set_string(a + "rope.scaling.type", "yarn");
        w.set_f32(a + "rope.scaling.factor", 32.0f);
        w.set_u32(a + "rope.scaling.original_context_length", 4096);
    }
    if (arch == "granite") {
        w.set_f32(a + "embedding_scale", 12.0f);
        w.set_f32(a + "residual_scale", 0.22f);
        w.set_f32(a + "attention.scale", 0.015625f);
        w.set_f32(a + "logit_scale", 8.0f);
    }
    if (arch == "phi3") {
        w.set_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(std::max<int64_t>(16, s.ctx / 4)));
        w.set_f32(a + "rope.scaling.attn_factor", 1.19f);
    }
}

// Control tokens llama.cpp looks up by text when it loads the family (Phi-3's chat tokens).
std::vector<std::string> family_controls(const std::string& arch) {
    if (arch == "phi3") return {"<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>", "<|system|>"};
    return {};
}

// Whether the file ties the output head to the embeddings: Gemma files always do (llama.cpp
// 2 and 3 refuse an output.weight), OLMo 2 and gpt-oss files never (llama.cpp requires one).
bool ties_embeddings(const std::string& arch, bool asked) {
    if (arch.starts_with("gemma")) return true;
    return asked && arch != "olmo2" && arch != "gpt-oss";
}

// Whether synth writes an optional layer tensor: Gemma 4's attn_v (on sliding layers, and on
// global ones unless their k is their v), layer_output_scale, and experts' gate and up apart
// (not fused).
bool writes_optional(const std::string& arch, const Shape& s, int64_t l, const std::string& name) {
    if (arch != "gemma4") return false;
    if (name.ends_with(".attn_v.weight")) return !gemma4_global(s, l) || !s.g4.k_eq_v;
    return name.ends_with(".layer_output_scale.weight") || name.ends_with("ffn_gate_exps.weight") || name.ends_with("ffn_up_exps.weight");
}

// A temporary file beside OUT, removed when this goes out of scope (thrown through or not).
struct TemporaryFile {
    std::string path;
    ~TemporaryFile() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
    }
};

// The hyperparameters strata reads from the keys written so far (a metadata-only file).
model::HParams read_back(const gguf::Writer& w, const std::string& out) {
    const TemporaryFile tmp{out + ".meta.tmp"};
    w.write(tmp.path);
    return model::HParams::from_gguf(*gguf::File::open(tmp.path));
}

// The type llama.cpp's mix for `ft` gives each tensor of the F16 file that `declare` makes
// from the metadata in `w`: planned on that file's layout (a sparse file next to OUT, no
// data written), so that a model too large to write twice is quantized as it is generated.
template <class Declare>
std::map<std::string, DType> quantized_types(const gguf::Writer& w, const Declare& declare, const model::FileType& ft,
                                             const std::string& out) {
    gguf::Writer f16 = w;
    f16.set_u32("general.file_type", 1u);
    declare(f16, [](const std::string&, DType t) { return t; });
    const TemporaryFile tmp{out + ".layout.tmp"};
    f16.write_layout(tmp.path);
    const auto layout = gguf::File::open(tmp.path);
    std::map<std::string, DType> types;
    for (const model::TensorPlan& t : model::plan_quantization(*layout, ft)) types[t.src->name] = t.type;
    return types;
}

}  // namespace

int cmd_synth(const Argv& argv) {
    Args args(argv,
              {"preset", "arch", "n-embd", "n-layer", "n-ff", "n-head", "n-head-kv", "head-dim", "n-expert", "n-expert-used", "vocab", "ctx",
               "rope-base", "window", "type", "seed", "std", "vocab-from", "threads", "ssm-state", "ssm-groups", "ssm-heads", "n-ff-shexp",
               "route-groups"},
              {"tie-embeddings"});
    const std::string out = args.pos(0, "OUT");
    const std::string arch = args.get_or("arch", "llama");
    if (!model::find_builder(arch) || arch == "bert")
        throw UsageError("--arch must be a decoder family strata runs (" + model::arch_names() + " but bert)");
    const std::string preset_name = args.get_or("preset", "tiny");
    Shape s = hybrid(arch)               ? hybrid_preset(preset_name, arch == "qwen35moe")
              : arch.starts_with("lfm2") ? lfm2_preset(preset_name, arch == "lfm2moe")
              : arch == "gemma4"         ? gemma4_preset(preset_name)
                                         : preset(preset_name, arch == "qwen3moe" || arch == "olmoe" || arch == "gpt-oss");
    if (arch == "olmoe") {  // OLMoE: heads span n_embd (Qwen3's are 128 wide), no grouped keys
        s.head_dim = 0;
        s.n_head_kv = s.n_head;
    }
    s.n_embd = args.get_int("n-embd", s.n_embd, 32, 1 << 16);
    s.n_layer = args.get_int("n-layer", s.n_layer, 1, 512);
    s.n_ff = args.get_int("n-ff", s.n_ff, 32, 1 << 18);
    s.n_head = args.get_int("n-head", s.n_head, 1, 1024);
    s.n_head_kv = args.get_int("n-head-kv", std::min(s.n_head, s.n_head_kv), 1, s.n_head);
    s.head_dim = args.get_int("head-dim", s.head_dim, 0, 1024);
    s.n_expert = args.get_int("n-expert", s.n_expert, 0, 4096);
    s.n_expert_used = args.get_int("n-expert-used", std::min(s.n_expert, std::max<int64_t>(1, s.n_expert_used)), 1, std::max<int64_t>(1, s.n_expert));
    s.vocab = args.get_int("vocab", s.vocab, 300, 1 << 22);
    s.ctx = args.get_int("ctx", s.ctx, 16, 1 << 24);
    s.window = args.get_int("window", s.window ? s.window : std::min<int64_t>(4096, s.ctx), 1, s.ctx);
    s.rope_base = args.get_double("rope-base", s.rope_base);
    s.ssm_state = args.get_int("ssm-state", s.ssm_state, 1, 1024);
    s.ssm_groups = args.get_int("ssm-groups", s.ssm_groups, 1, 1024);
    s.ssm_heads = args.get_int("ssm-heads", s.ssm_heads, s.ssm_groups, 1024);
    s.n_ff_shexp = args.get_int("n-ff-shexp", s.n_ff_shexp, 0, 1 << 18);
    if (!s.head_dim && (s.n_embd % s.n_head || (s.n_embd / s.n_head) % 2))
        throw UsageError("n-embd must be a multiple of n-head (even head size), or give --head-dim");
    if (s.n_head % s.n_head_kv || (s.head_dim % 2)) throw UsageError("n-head must be a multiple of n-head-kv, head-dim even");
    const std::string type_name = args.get_or("type", "F16");
    const auto target = model::file_type_from_name(type_name);
    if (!target) throw UsageError("unknown --type '" + type_name + "' (F32, F16, BF16, Q8_0, Q4_0, Q4_K_M, Q5_K_M, Q6_K, ...)");
    const bool plain = target->base == DType::F32 || target->base == DType::F16 || target->base == DType::BF16;
    const DType matrix_type = plain ? target->base : DType::F16;
    const uint64_t seed = static_cast<uint64_t>(args.get_int("seed", 1, 0, INT64_MAX));
    const float std = static_cast<float>(args.get_double("std", 0.02));
    const int threads = static_cast<int>(args.get_int("threads", std::max(1u, std::thread::hardware_concurrency()), 1, 256));
    const RouteGroups route{.groups = args.get_int("route-groups", 0, 0, std::min<int64_t>(s.n_embd, 64)), .used = s.n_expert_used, .experts = s.n_expert};
    if (route.groups && !s.n_expert) throw UsageError("--route-groups needs experts");

    gguf::Writer w;
    w.set_string("general.architecture", arch);
    w.set_string("general.name", "strata-synth-" + arch);
    if (auto v = args.get("vocab-from")) s.vocab = copy_vocab(w, *v);
    else synthetic_vocab(w, s.vocab, family_controls(arch));
    const std::string a = arch + ".";
    w.set_u32(a + "context_length", static_cast<uint32_t>(s.ctx));
    w.set_u32(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
    w.set_u32(a + "block_count", static_cast<uint32_t>(s.n_layer));
    w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
    w.set_u32(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
    w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
    w.set_f32(a + "rope.freq_base", static_cast<float>(s.rope_base));
    const int64_t hd = s.head_dim ? s.head_dim : s.n_embd / s.n_head;
    if (!hybrid(arch)) w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(hd));
    if (s.head_dim) {
        w.set_u32(a + "attention.key_length", static_cast<uint32_t>(hd));
        w.set_u32(a + "attention.value_length", static_cast<uint32_t>(hd));
    }
    if (s.n_expert) {
        w.set_u32(a + "expert_count", static_cast<uint32_t>(s.n_expert));
        w.set_u32(a + "expert_used_count", static_cast<uint32_t>(s.n_expert_used));
        w.set_u32(a + "expert_feed_forward_length", static_cast<uint32_t>(s.n_ff));
    }
    w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_u32(a + "vocab_size", static_cast<uint32_t>(s.vocab));
    family_keys(w, arch, s);
    const model::HParams hp = read_back(w, out);

    // Declares every tensor; `type_of(name, t)` says what a tensor the F16 file would hold as
    // t is written as.
    auto declare = [&](gguf::Writer& file, const std::function<DType(const std::string&, DType)>& type_of) {
        uint64_t tensor_seed = mix(seed);
        auto matrix = [&](const std::string& name, std::vector<int64_t> ne, DType type, float sd, RowAdjust adjust = {}) {
            add_random(file, name, type_of(name, type), std::move(ne), 0.0f, sd, tensor_seed = mix(tensor_seed), threads, std::move(adjust));
        };
        auto vector = [&](const std::string& name, int64_t n, float mean, float sd) {
            add_random(file, name, DType::F32, {n}, mean, sd, tensor_seed = mix(tensor_seed), 1);
        };
        matrix("token_embd.weight", {s.n_embd, s.vocab}, matrix_type, std, route.groups ? route.embedding() : RowAdjust{});
        vector(hp.output_norm, s.n_embd, 1.0f, std / 2.5f);
        if (!ties_embeddings(arch, args.flag("tie-embeddings"))) matrix("output.weight", {s.n_embd, s.vocab}, matrix_type, std);
        if (arch == "gemma4") add_values(file, "rope_freqs.weight", proportional_rope_factors(hd / 2));
        if (const int64_t ple = s.g4.n_embd_per_layer * s.n_layer) {  // Gemma 4's per-layer inputs
            matrix("per_layer_token_embd.weight", {ple, s.vocab}, matrix_type, std);
            matrix("per_layer_model_proj.weight", {s.n_embd, ple}, matrix_type, std);
            vector("per_layer_proj_norm.weight", s.g4.n_embd_per_layer, 1.0f, std / 2.5f);
        }
        if (hp.longrope) {  // short factors near 1, long ones rising to 4 (as Phi-3.5's do)
            vector("rope_factors_short.weight", hp.n_rot / 2, 1.0f, 0.01f);
            vector("rope_factors_long.weight", hp.n_rot / 2, 2.5f, 0.5f);
        }
        for (int l = 0; l < s.n_layer; ++l) {
            for (const model::LayerTensor& t : model::layer_tensors(hp, l)) {
                if (!t.required && !writes_optional(arch, s, l, t.name)) continue;
                const bool norm = t.name.find("norm") != std::string::npos, decay = t.name.ends_with(".ssm_a");
                const bool f32 = t.name.ends_with(".bias") || t.name.find("ffn_gate_inp") != std::string::npos ||
                                 t.name.find("ssm_conv1d") != std::string::npos || t.name.ends_with("shortconv.conv.weight");
                // A DeltaNet's A is negative (a decay), about -0.5 here; a sigmoid router's selection
                // bias spread N(0, 2) so that the experts chosen are clear of ties.
                const bool selection = t.name.ends_with("exp_probs_b.bias");
                // Scales (Gemma 4's router input scale and layer output scale) about 1; with
                // --route-groups the routers N(0, 0.5) plus their groups' direction.
                const bool scale = t.name.ends_with(".scale") || t.name.ends_with("layer_output_scale.weight");
                const bool grouped_router = route.groups && t.name.ends_with("ffn_gate_inp.weight");
                // Gemma 4 does not scale its scores: q/k norm weights about 0.5 keep a random
                // model's attention from being one-hot (where F16 rounding of keys flips it).
                const bool unscaled_qk = arch == "gemma4" && (t.name.ends_with("attn_q_norm.weight") || t.name.ends_with("attn_k_norm.weight"));
                if (selection) vector(t.name, t.ne[0], 0.0f, 2.0f);
                else if (unscaled_qk) vector(t.name, t.ne[0], 0.5f, std / 2.5f);
                else if (scale) vector(t.name, t.ne[0], 1.0f, 0.2f);
                else if (t.ne.size() == 1) vector(t.name, t.ne[0], norm ? 1.0f : decay ? -0.5f : 0.0f, norm ? std / 2.5f : decay ? 0.1f : std);
                else if (grouped_router) matrix(t.name, t.ne, DType::F32, 0.5f, route.router());
                else matrix(t.name, t.ne, f32 ? DType::F32 : matrix_type, std);  // biases, routers and convolution kernels stay F32
            }
        }
    };
    if (plain) {
        w.set_u32("general.file_type", target->id);
        declare(w, [](const std::string&, DType t) { return t; });
    } else {
        const std::map<std::string, DType> types = quantized_types(w, declare, *target, out);
        w.set_u32("general.file_type", target->id);
        w.set_u32("general.quantization_version", model::kQuantizationVersion);
        declare(w, [&](const std::string& name, DType) { return types.at(name); });
    }
    w.write(out);
    std::fprintf(stderr, "wrote %s (%s)\n", out.c_str(), std::string(target->name).c_str());
    return 0;
}

}  // namespace strata::tool
