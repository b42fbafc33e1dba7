// client/strata-gguf/import_tokenizer.h — reading a tokenizer from the files it ships in
// (Hugging Face tokenizer.json, vocab.json/encoder.json + merges.txt/vocab.bpe,
// tokenizer_config.json / special_tokens_map.json / added_tokens.json, SentencePiece
// tokenizer.model, tiktoken ranks, llama2.c tokenizer.bin) into the GGUF tokenizer keys
// that lib/tokenizer reads. Used by `strata-gguf tokenizer` and by the tokenizer tests.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::gguf {
class Writer;
}

namespace strata::tool {

struct ImportError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What the GGUF tokenizer section says, before it is written.
struct TokenizerSpec {
    std::string model;  // "llama" (SentencePiece-style) or "gpt2" (byte-level BPE)
    std::string pre;    // pre-tokenizer family, for "gpt2"
    std::vector<std::string> tokens;
    std::vector<float> scores;  // "llama" only
    std::vector<int32_t> types;  // tokenizer::TokenType values
    std::vector<std::string> merges;  // "gpt2" only, "left right" in rank order
    std::map<std::string, int32_t> special_ids;  // "bos", "eos", "unknown", "padding" -> id
    std::optional<bool> add_bos, add_eos, add_space_prefix;
    std::string chat_template;
};

struct ImportOptions {
    std::vector<std::string> sources;  // directories and files
    std::string pre;                   // overrides or supplies the pre-tokenizer family
    int64_t vocab_size = 0;            // pad the vocabulary with [PADn] tokens up to this size
};

// Reads the sources; throws ImportError naming the file and what is wrong with it.
TokenizerSpec import_tokenizer(const ImportOptions& options);

// Sets the tokenizer.* keys of `spec`.
void write_tokenizer(const TokenizerSpec& spec, gguf::Writer& writer);

// The readers, each filling `spec` from one kind of file (exposed for the tests).
void read_hf_tokenizer_json(const std::string& path, TokenizerSpec& spec);
void read_bpe_vocab_and_merges(const std::string& vocab_path, const std::string& merges_path, TokenizerSpec& spec);
void read_sentencepiece_model(const std::string& path, TokenizerSpec& spec);
void read_tiktoken(const std::string& path, TokenizerSpec& spec);
void read_llama2c_tokenizer(const std::string& path, TokenizerSpec& spec);
// Added tokens, special-token names, add_bos/add_eos and the chat template from
// tokenizer_config.json, special_tokens_map.json or added_tokens.json.
void apply_hf_config(const std::string& path, TokenizerSpec& spec);

}  // namespace strata::tool
