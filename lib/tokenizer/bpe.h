// tokenizer/bpe.h — byte-level BPE of "gpt2" vocabularies: a word (one piece of the
// pre-tokenizer's split) starts as single bytes, and the adjacent pair with the lowest
// merge rank is merged until no ranked pair is left. Works on raw bytes: token texts and
// merges are translated out of GPT-2's printable byte alphabet once, when loading.
// Must not touch: the pre-tokenizer split and special tokens (tokenizer.cpp applies them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace strata::tokenizer {

class BpeModel {
public:
    // ignore_merges: a word that is a token as a whole is that token (Llama 3).
    BpeModel(const Vocab& vocab, bool ignore_merges);
    void encode_word(std::string_view word, std::vector<int32_t>& out) const;

private:
    struct Merge {
        int32_t rank;
        int32_t result;
    };
    // Symbols are token ids, or ids from n_vocab on for byte strings that merges build
    // but that are no token (so that such merges still apply, as they do in llama.cpp).
    // -1 for text that is not in the byte alphabet.
    int32_t symbol_of(std::string_view text);
    void append_symbol(int32_t symbol, std::vector<int32_t>& out) const;

    const Vocab& vocab_;
    bool ignore_merges_;
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> by_bytes_;  // with ignore_merges
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> extra_symbols_;  // by text
    std::vector<std::string> extra_bytes_;  // bytes of symbol n_vocab + i
    std::unordered_map<uint64_t, Merge> merges_;  // (left symbol, right symbol) -> merge
    int32_t byte_symbol_[256];
};

}  // namespace strata::tokenizer
