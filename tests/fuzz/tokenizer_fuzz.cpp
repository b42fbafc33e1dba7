// tests/fuzz/tokenizer_fuzz.cpp — libFuzzer target for tokenize / detokenize. The first
// input byte picks what the rest is: text for the GPT-2 (byte-level BPE) or Llama 2
// (SentencePiece) vocabulary, token ids to decode, or the makings of a vocabulary (token
// texts, types, merges, special ids) that may be broken in any way. Crashes, sanitizer
// reports and broken invariants (decode(encode(text)) == text for these lossless
// vocabularies; streaming equals decode) are findings; TokenizerError is not.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "import_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "utf8/utf8.h"

using namespace strata;
using namespace strata::tokenizer;

namespace {

struct Loaded {
    std::vector<uint8_t> bytes;
    std::unique_ptr<Tokenizer> tok;
};

Loaded import(std::vector<std::string> sources, const std::string& pre) {
    tool::ImportOptions options;
    options.sources = std::move(sources);
    options.pre = pre;
    gguf::Writer w;
    tool::write_tokenizer(tool::import_tokenizer(options), w);
    Loaded l{w.bytes(), nullptr};
    l.tok = Tokenizer::from_gguf(*gguf::File::parse(l.bytes));
    return l;
}

const Tokenizer& gpt2() {
    static Loaded l = import({STRATA_TOKENIZER_DATA "/gpt2"}, "gpt-2");
    return *l.tok;
}

const Tokenizer& llama2() {
    static Loaded l = import({STRATA_TOKENIZER_DATA "/llama2/tokenizer.model"}, "");
    return *l.tok;
}

void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "tokenizer invariant broken: %s\n", what);
    std::abort();
}

std::string stream(const Tokenizer& tok, const std::vector<int32_t>& ids, StreamDecoder::Options options) {
    StreamDecoder s(tok, options);
    std::string out;
    for (int32_t id : ids) out += s.push(id);
    return out + s.flush();
}

void round_trip(const Tokenizer& tok, std::string_view text, uint8_t flags) {
    bool parse_special = flags & 1, add_special = flags & 2, render_special = flags & 4;
    auto ids = tok.encode(text, add_special, parse_special);
    for (int32_t id : ids) check(id >= 0 && id < tok.n_vocab(), "encode produced an id outside the vocabulary");
    // SentencePiece writes spaces as U+2581, so text that has U+2581 itself does not come back.
    bool lossless = !parse_special && (tok.model() == "gpt2" || text.find("\xe2\x96\x81") == std::string_view::npos);
    if (lossless) check(tok.decode(ids, false) == text, "decode(encode(text)) != text");
    std::string decoded = tok.decode(ids, render_special);
    check(stream(tok, ids, {render_special, true, false}) == decoded, "streamed text != decode()");
    std::string streamed = stream(tok, ids, {render_special, true, true});
    check(streamed == utf8::replace_invalid(decoded), "streamed text with replacement != replace_invalid(decode())");
    check(utf8::is_valid(streamed), "replacement left invalid UTF-8");
}

std::vector<int32_t> ids_from(std::string_view data) {
    std::vector<int32_t> ids;
    for (size_t i = 0; i + 4 <= data.size(); i += 4) {
        uint32_t v = uint8_t(data[i]) | uint32_t(uint8_t(data[i + 1])) << 8 | uint32_t(uint8_t(data[i + 2])) << 16 |
                     uint32_t(uint8_t(data[i + 3])) << 24;
        ids.push_back(static_cast<int32_t>(v));
    }
    return ids;
}

void decode_ids(const Tokenizer& tok, std::string_view data) {
    std::vector<int32_t> ids = ids_from(data);
    for (int32_t& id : ids) id %= tok.n_vocab() + 2;  // mostly valid ids, some just past the end, some negative
    try {
        std::string decoded = tok.decode(ids, true);
        check(stream(tok, ids, {true, false, false}).size() >= decoded.size(), "stream lost bytes");
    } catch (const TokenizerError&) {
    }
}

// A vocabulary made of the input: tokens separated by '\n'; the last line gives one byte
// per token for its type, then special ids and flags. Merges pair up consecutive tokens.
void fuzz_vocabulary(std::string_view data) {
    if (data.empty()) return;
    bool bpe = data[0] & 1;
    data.remove_prefix(1);
    std::vector<std::string> tokens;
    for (size_t pos = 0, next; pos <= data.size() && tokens.size() < 64; pos = next + 1) {
        next = data.find('\n', pos);
        if (next == std::string_view::npos) next = data.size();
        tokens.emplace_back(data.substr(pos, next - pos));
    }
    std::string control = tokens.back();
    tokens.pop_back();
    if (tokens.empty()) return;
    std::vector<int32_t> types;
    std::vector<float> scores;
    std::vector<std::string> merges;
    for (size_t i = 0; i < tokens.size(); ++i) {
        types.push_back(i < control.size() ? uint8_t(control[i]) % 8 : 1);
        scores.push_back(-static_cast<float>(i));
        if (i + 1 < tokens.size()) merges.push_back(tokens[i] + " " + tokens[i + 1]);
    }
    gguf::Writer w;
    w.set_string("tokenizer.ggml.model", bpe ? "gpt2" : "llama");
    w.set_strings("tokenizer.ggml.tokens", tokens);
    w.set_i32s("tokenizer.ggml.token_type", types);
    if (!bpe) w.set_f32s("tokenizer.ggml.scores", scores);
    if (bpe) w.set_strings("tokenizer.ggml.merges", merges);
    static const char* pres[] = {"gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "falcon", "tekken", "chameleon", "bogus"};
    if (bpe && control.size() > tokens.size()) w.set_string("tokenizer.ggml.pre", pres[uint8_t(control[tokens.size()]) % 8]);
    if (control.size() > tokens.size() + 2) {
        w.set_i32("tokenizer.ggml.bos_token_id", int8_t(control[tokens.size() + 1]));
        w.set_bool("tokenizer.ggml.add_bos_token", control[tokens.size() + 2] & 1);
        w.set_bool("tokenizer.ggml.add_space_prefix", control[tokens.size() + 2] & 2);
    }
    std::vector<uint8_t> bytes = w.bytes();
    try {
        auto tok = Tokenizer::from_gguf(*gguf::File::parse(bytes));
        std::string text;
        for (const auto& t : tokens) text += t + " ";
        for (bool parse_special : {false, true}) {
            auto ids = tok->encode(text, true, parse_special);
            for (int32_t id : ids) check(id >= 0 && id < tok->n_vocab(), "encode produced an id outside the vocabulary");
            check(stream(*tok, ids, {true, true, false}) == tok->decode(ids, true), "streamed text != decode()");
        }
    } catch (const TokenizerError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    uint8_t selector = data[0];
    std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        switch (selector % 5) {
            case 0: round_trip(gpt2(), rest, selector >> 3); break;
            case 1: round_trip(llama2(), rest, selector >> 3); break;
            case 2: decode_ids(selector & 8 ? gpt2() : llama2(), rest); break;
            case 3: fuzz_vocabulary(rest); break;
            default: Tokenizer::from_gguf(*gguf::File::parse({data + 1, size - 1})); break;
        }
    } catch (const TokenizerError&) {
    } catch (const gguf::GgufError&) {
    }
    return 0;
}
