// client/strata-gguf/cmd_convert.cpp — `strata-gguf convert IN.bin OUT.gguf --tokenizer TOK.bin`:
// a llama2.c float32 checkpoint (the legacy "version 0" layout, or "version 1" with its
// 256-byte "ak42" header) and its tokenizer.bin to a llama GGUF, tensor for tensor as
// llama.cpp's own llama2c converter lays it out (llama2.c already uses the adjacent-pair
// RoPE layout, so no permutation is needed; the classifier is written as output.weight,
// a copy of the embeddings when they are shared).
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "args.h"
#include "commands.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "import_tokenizer.h"

namespace strata::tool {
namespace {

constexpr uint32_t kMagicV1 = 0x616B3432;  // "ak42"
constexpr uint64_t kHeaderV1 = 256;

struct Config {
    int32_t dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len;
    bool shared;
    int version;
    uint64_t weights_at;  // byte offset of the first weight
};

Config read_config(const gguf::Mapping& m) {
    auto i32 = [&](uint64_t at) {
        if (at + 4 > m.size()) throw std::runtime_error(m.path() + ": truncated llama2.c header");
        int32_t v;
        std::memcpy(&v, m.data() + at, 4);
        return v;
    };
    Config c{};
    uint64_t at = 0;
    if (static_cast<uint32_t>(i32(0)) == kMagicV1) {
        c.version = i32(4);
        if (c.version != 1)
            throw std::runtime_error(m.path() + ": llama2.c format version " + std::to_string(c.version) +
                                     " is not supported (only float32 checkpoints: version 0 and 1)");
        at = 8;
    }
    c.dim = i32(at), c.hidden = i32(at + 4), c.n_layers = i32(at + 8), c.n_heads = i32(at + 12);
    c.n_kv_heads = i32(at + 16), c.vocab = i32(at + 20), c.seq_len = i32(at + 24);
    if (c.version == 1) {
        if (m.size() < kHeaderV1) throw std::runtime_error(m.path() + ": truncated llama2.c header");
        c.shared = m.data()[at + 28] != 0;
        c.weights_at = kHeaderV1;
    } else {
        c.shared = c.vocab > 0;  // the legacy format marks an unshared classifier by a negative vocab size
        c.vocab = c.vocab < 0 ? -c.vocab : c.vocab;
        c.weights_at = 28;
    }
    auto bad = [&](const char* what, int32_t v, int32_t lo, int32_t hi) {
        if (v < lo || v > hi)
            throw std::runtime_error(m.path() + ": " + what + " = " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                                     std::to_string(hi) + "] (not a llama2.c checkpoint?)");
    };
    bad("dim", c.dim, 1, 1 << 16);
    bad("hidden_dim", c.hidden, 1, 1 << 18);
    bad("n_layers", c.n_layers, 1, 512);
    bad("n_heads", c.n_heads, 1, c.dim);
    bad("n_kv_heads", c.n_kv_heads, 1, c.n_heads);
    bad("vocab_size", c.vocab, 1, 1 << 22);
    bad("seq_len", c.seq_len, 1, 1 << 24);
    if (c.dim % c.n_heads || c.n_heads % c.n_kv_heads || (c.dim / c.n_heads) % 2)
        throw std::runtime_error(m.path() + ": dim, n_heads and n_kv_heads do not divide evenly");
    return c;
}

// Walks the weights in file order, handing out float32 pointers and checking they exist.
class Cursor {
public:
    Cursor(const gguf::Mapping& m, uint64_t at) : m_(m), at_(at) {}
    const float* take(uint64_t n, const char* what) {
        if (n > (m_.size() - at_) / 4) throw std::runtime_error(m_.path() + ": truncated: " + what + " runs past the end of the file");
        const auto* p = reinterpret_cast<const float*>(m_.data() + at_);
        at_ += n * 4;
        return p;
    }
    uint64_t at() const { return at_; }

private:
    const gguf::Mapping& m_;
    uint64_t at_;
};

struct Weights {
    const float *embd = nullptr, *norm = nullptr, *cls = nullptr;
    std::vector<const float*> attn_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3;
};

Weights locate(const gguf::Mapping& m, const Config& c) {
    const uint64_t L = c.n_layers, E = c.dim, hs = c.dim / c.n_heads, KV = hs * c.n_kv_heads, F = c.hidden;
    Cursor cur(m, c.weights_at);
    Weights w;
    auto per_layer = [&](std::vector<const float*>& v, uint64_t n, const char* what) {
        for (uint64_t l = 0; l < L; ++l) v.push_back(cur.take(n, what));
    };
    if (c.version == 1) {
        per_layer(w.attn_norm, E, "rms_att");
        per_layer(w.ffn_norm, E, "rms_ffn");
        w.norm = cur.take(E, "rms_final");
        w.embd = cur.take(uint64_t(c.vocab) * E, "token_embedding");
    } else {
        w.embd = cur.take(uint64_t(c.vocab) * E, "token_embedding");
        per_layer(w.attn_norm, E, "rms_att");
    }
    per_layer(w.wq, E * E, "wq");
    per_layer(w.wk, E * KV, "wk");
    per_layer(w.wv, E * KV, "wv");
    per_layer(w.wo, E * E, "wo");
    if (c.version == 0) per_layer(w.ffn_norm, E, "rms_ffn");
    per_layer(w.w1, E * F, "w1");
    per_layer(w.w2, F * E, "w2");
    per_layer(w.w3, E * F, "w3");
    if (c.version == 0) {
        w.norm = cur.take(E, "rms_final");
        cur.take(uint64_t(c.seq_len) * hs, "freq_cis");  // the RoPE tables: recomputed by the engine
    }
    w.cls = c.shared ? w.embd : cur.take(uint64_t(c.vocab) * E, "wcls");
    if (cur.at() != m.size())
        throw std::runtime_error(m.path() + ": " + std::to_string(m.size() - cur.at()) + " bytes left after the last weight (wrong format?)");
    return w;
}

}  // namespace

int cmd_convert(const Argv& argv) {
    Args args(argv, {"tokenizer", "name", "ctx"}, {});
    const std::string in = args.pos(0, "IN.bin"), out = args.pos(1, "OUT.gguf");
    const auto tok_path = args.get("tokenizer");
    if (!tok_path) throw UsageError("missing --tokenizer TOKENIZER.bin");
    gguf::Mapping m(in);
    const Config c = read_config(m);
    const Weights w = locate(m, c);
    TokenizerSpec spec;
    read_llama2c_tokenizer(*tok_path, spec);
    if (static_cast<int32_t>(spec.tokens.size()) != c.vocab)
        throw std::runtime_error(*tok_path + " has " + std::to_string(spec.tokens.size()) + " tokens but the checkpoint " + std::to_string(c.vocab));

    gguf::Writer g;
    g.set_string("general.architecture", "llama");
    g.set_string("general.name", args.get_or("name", "llama"));
    write_tokenizer(spec, g);
    g.set_u32("llama.context_length", static_cast<uint32_t>(args.get_int("ctx", c.seq_len, 1, 1 << 24)));
    g.set_u32("llama.embedding_length", c.dim);
    g.set_u32("llama.feed_forward_length", c.hidden);
    g.set_u32("llama.attention.head_count", c.n_heads);
    g.set_u32("llama.attention.head_count_kv", c.n_kv_heads);
    g.set_u32("llama.block_count", c.n_layers);
    g.set_u32("llama.rope.dimension_count", c.dim / c.n_heads);
    g.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);

    const int64_t E = c.dim, KV = int64_t(c.dim / c.n_heads) * c.n_kv_heads, F = c.hidden;
    g.add_tensor("token_embd.weight", DType::F32, {E, c.vocab}, w.embd);
    g.add_tensor("output_norm.weight", DType::F32, {E}, w.norm);
    g.add_tensor("output.weight", DType::F32, {E, c.vocab}, w.cls);
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        g.add_tensor(p + "attn_q.weight", DType::F32, {E, E}, w.wq[l]);
        g.add_tensor(p + "attn_k.weight", DType::F32, {E, KV}, w.wk[l]);
        g.add_tensor(p + "attn_v.weight", DType::F32, {E, KV}, w.wv[l]);
        g.add_tensor(p + "attn_output.weight", DType::F32, {E, E}, w.wo[l]);
        g.add_tensor(p + "attn_norm.weight", DType::F32, {E}, w.attn_norm[l]);
        g.add_tensor(p + "ffn_gate.weight", DType::F32, {E, F}, w.w1[l]);
        g.add_tensor(p + "ffn_down.weight", DType::F32, {F, E}, w.w2[l]);
        g.add_tensor(p + "ffn_up.weight", DType::F32, {E, F}, w.w3[l]);
        g.add_tensor(p + "ffn_norm.weight", DType::F32, {E}, w.ffn_norm[l]);
    }
    g.write(out);
    std::fprintf(stderr, "wrote %s: llama2.c version %d, dim %d, %d layers, %d/%d heads, vocab %d%s\n", out.c_str(), c.version, c.dim,
                 c.n_layers, c.n_heads, c.n_kv_heads, c.vocab, c.shared ? ", shared classifier" : "");
    return 0;
}

}  // namespace strata::tool
