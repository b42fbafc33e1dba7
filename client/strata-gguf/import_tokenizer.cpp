// client/strata-gguf/import_tokenizer.cpp — finding the tokenizer files among the
// sources, reading them in a fixed order, filling in what they leave out, and writing
// the GGUF tokenizer keys (see import_tokenizer.h).
#include "import_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gguf/writer.h"
#include "import_common.h"
#include "tokenizer/pretokenizer.h"

namespace strata::tool {
namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ImportError("cannot open " + path);
    std::ostringstream data;
    data << in.rdbuf();
    if (in.bad()) throw ImportError("cannot read " + path);
    return data.str();
}

void fail(const std::string& path, const std::string& what) { throw ImportError(path + ": " + what); }

void set_token(TokenizerSpec& spec, int64_t id, std::string text, TokenType type, float score) {
    if (id < 0 || id >= INT32_MAX) throw ImportError("token id " + std::to_string(id) + " is out of range");
    if (static_cast<size_t>(id) >= spec.tokens.size()) {
        spec.tokens.resize(id + 1);
        spec.types.resize(id + 1, static_cast<int32_t>(TokenType::Undefined));
        if (spec.model == "llama") spec.scores.resize(id + 1, 0.0f);
    }
    spec.tokens[id] = std::move(text);
    spec.types[id] = static_cast<int32_t>(type);
    if (spec.model == "llama") spec.scores[id] = score;
}

int32_t find_token(const TokenizerSpec& spec, std::string_view text) {
    auto it = std::find(spec.tokens.begin(), spec.tokens.end(), text);
    return it == spec.tokens.end() ? -1 : static_cast<int32_t>(it - spec.tokens.begin());
}

bool looks_special(std::string_view text) {
    auto wrapped = [&](std::string_view open, std::string_view close) {
        return text.size() >= open.size() + close.size() && text.substr(0, open.size()) == open &&
               text.substr(text.size() - close.size()) == close;
    };
    return wrapped("<|", "|>") || wrapped("<\xEF\xBD\x9C", "\xEF\xBD\x9C>");  // <|...|>, <｜...｜>
}

namespace {

enum class Source { TokenizerJson, Config, AddedTokens, BpeVocab, BpeMerges, SentencePiece, Tiktoken, Llama2c, Other };

bool starts_like_protobuf(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return in.get() == 0x0A;  // field 1 (the pieces), length-delimited
}

Source classify(const fs::path& path) {
    std::string name = path.filename().string();
    auto ends_with = [&](std::string_view s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
    if (name == "tokenizer.json") return Source::TokenizerJson;
    if (name == "special_tokens_map.json" || (name.find("tokenizer_config") != std::string::npos && ends_with(".json")))
        return Source::Config;
    if (name == "added_tokens.json") return Source::AddedTokens;
    if (name == "vocab.json" || name == "encoder.json") return Source::BpeVocab;
    if (name == "merges.txt" || name == "vocab.bpe") return Source::BpeMerges;
    if (ends_with(".tiktoken")) return Source::Tiktoken;
    if (name.find(".model") != std::string::npos)
        return starts_like_protobuf(path.string()) ? Source::SentencePiece : Source::Tiktoken;
    if (ends_with(".bin")) return Source::Llama2c;
    return Source::Other;
}

struct Found {
    std::map<Source, std::vector<std::string>> files;
    const std::string* only(Source s) const {
        auto it = files.find(s);
        if (it == files.end()) return nullptr;
        if (it->second.size() > 1) throw ImportError("two files of the same kind: " + it->second[0] + " and " + it->second[1]);
        return &it->second[0];
    }
};

Found find_sources(const std::vector<std::string>& sources) {
    Found found;
    for (const auto& source : sources) {
        fs::path path(source);
        if (fs::is_directory(path)) {
            std::vector<fs::path> entries(fs::directory_iterator(path), fs::directory_iterator{});
            std::sort(entries.begin(), entries.end());
            for (const auto& entry : entries)
                if (fs::is_regular_file(entry) && classify(entry) != Source::Other)
                    found.files[classify(entry)].push_back(entry.string());
        } else if (fs::is_regular_file(path)) {
            Source kind = classify(path);
            if (kind == Source::Other) throw ImportError(source + ": not a tokenizer file this command knows");
            found.files[kind].push_back(source);
        } else {
            throw ImportError(source + ": no such file or directory");
        }
    }
    return found;
}

void read_main_source(const Found& found, TokenizerSpec& spec) {
    const std::string* vocab = found.only(Source::BpeVocab);
    const std::string* merges = found.only(Source::BpeMerges);
    const std::string* spm = found.only(Source::SentencePiece);
    const std::string* hf = found.only(Source::TokenizerJson);
    const std::string* tiktoken = found.only(Source::Tiktoken);
    const std::string* llama2c = found.only(Source::Llama2c);
    if (spm) {
        read_sentencepiece_model(*spm, spec);
    } else if (hf) {
        read_hf_tokenizer_json(*hf, spec);
    } else if (vocab || merges) {
        if (!vocab || !merges) throw ImportError("a BPE vocabulary needs both vocab.json/encoder.json and merges.txt/vocab.bpe");
        read_bpe_vocab_and_merges(*vocab, *merges, spec);
    } else if (tiktoken) {
        read_tiktoken(*tiktoken, spec);
    } else if (llama2c) {
        read_llama2c_tokenizer(*llama2c, spec);
    } else {
        throw ImportError("no tokenizer among the sources (looked for tokenizer.json, tokenizer.model, vocab.json + "
                          "merges.txt, *.tiktoken, tokenizer.bin)");
    }
}

// GPT-2's convention, when no file names special tokens: <|endoftext|> is BOS and EOS.
void default_special_tokens(TokenizerSpec& spec) {
    if (spec.model != "gpt2" || spec.special_ids.count("bos") || spec.special_ids.count("eos")) return;
    if (int32_t id = find_token(spec, "<|endoftext|>"); id >= 0) spec.special_ids["bos"] = spec.special_ids["eos"] = id;
}

void pad_vocabulary(TokenizerSpec& spec, int64_t vocab_size) {
    auto n = static_cast<int64_t>(spec.tokens.size());
    if (vocab_size && vocab_size < n)
        throw ImportError("the tokenizer has " + std::to_string(n) + " tokens, more than the vocabulary size " +
                          std::to_string(vocab_size));
    for (int64_t id = n; id < vocab_size; ++id) set_token(spec, id, "[PAD" + std::to_string(id) + "]", TokenType::Unused, -1000.0f);
}

void check_complete(const TokenizerSpec& spec) {
    for (size_t id = 0; id < spec.tokens.size(); ++id)
        if (spec.types[id] == static_cast<int32_t>(TokenType::Undefined) && spec.tokens[id].empty())
            throw ImportError("no token has id " + std::to_string(id));
    if (spec.model == "gpt2") {
        if (spec.pre.empty())
            throw ImportError("these files do not say how text is split before BPE; pass --pre (gpt-2, llama-bpe, qwen2, "
                              "starcoder, falcon, deepseek-llm, ...)");
        try {
            tokenizer::pre_tokenizer_family(spec.pre);
        } catch (const tokenizer::TokenizerError& e) {
            throw ImportError(std::string("--pre: ") + e.what());
        }
    }
}

}  // namespace

TokenizerSpec import_tokenizer(const ImportOptions& options) {
    Found found = find_sources(options.sources);
    TokenizerSpec spec;
    read_main_source(found, spec);
    if (auto p = found.only(Source::AddedTokens)) apply_hf_config(*p, spec);
    if (auto it = found.files.find(Source::Config); it != found.files.end()) {
        // special_tokens_map.json first, so that tokenizer_config.json has the last word
        std::vector<std::string> configs = it->second;
        std::stable_partition(configs.begin(), configs.end(),
                              [](const std::string& p) { return fs::path(p).filename() == "special_tokens_map.json"; });
        for (const auto& p : configs) apply_hf_config(p, spec);
    }
    if (!options.pre.empty()) spec.pre = options.pre;
    default_special_tokens(spec);
    if (!spec.special_ids.count("bos") && !spec.add_bos.value_or(false)) spec.add_bos = false;  // not the family's default
    pad_vocabulary(spec, options.vocab_size);
    check_complete(spec);
    return spec;
}

void write_tokenizer(const TokenizerSpec& spec, gguf::Writer& w) {
    w.set_string("tokenizer.ggml.model", spec.model);
    if (spec.model == "gpt2") w.set_string("tokenizer.ggml.pre", spec.pre);
    w.set_strings("tokenizer.ggml.tokens", spec.tokens);
    if (spec.model == "llama") w.set_f32s("tokenizer.ggml.scores", spec.scores);
    w.set_i32s("tokenizer.ggml.token_type", spec.types);
    if (spec.model == "gpt2") w.set_strings("tokenizer.ggml.merges", spec.merges);
    for (const auto& [name, id] : spec.special_ids) w.set_u32("tokenizer.ggml." + name + "_token_id", static_cast<uint32_t>(id));
    if (spec.add_bos) w.set_bool("tokenizer.ggml.add_bos_token", *spec.add_bos);
    if (spec.add_eos) w.set_bool("tokenizer.ggml.add_eos_token", *spec.add_eos);
    if (spec.add_space_prefix) w.set_bool("tokenizer.ggml.add_space_prefix", *spec.add_space_prefix);
    if (!spec.chat_template.empty()) w.set_string("tokenizer.chat_template", spec.chat_template);
}

}  // namespace strata::tool
