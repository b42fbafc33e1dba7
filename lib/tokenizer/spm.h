// tokenizer/spm.h — the SentencePiece-style BPE of "llama" vocabularies: the text (spaces
// already written as U+2581) starts as single characters, and the adjacent pair whose
// concatenation is the highest-scoring piece is merged until no pair forms a piece;
// characters left without a piece are written as <0xNN> byte tokens (or <unk>).
// Must not touch: special tokens, the dummy-prefix rule (tokenizer.cpp applies them).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace strata::tokenizer {

class SpmModel {
public:
    explicit SpmModel(const Vocab& vocab);
    void encode(std::string_view text, std::vector<int32_t>& out) const;

private:
    // A symbol is a piece id, or (kCharKey | code point) / (kByteKey | byte) for a single
    // character or invalid byte that is no piece of its own.
    static constexpr uint32_t kCharKey = 0x80000000u, kByteKey = 0xC0000000u;
    uint32_t symbol_key(std::string_view s) const;
    uint32_t char_key(std::string_view text, size_t pos, size_t* len) const;
    void append_bytes(std::string_view bytes, std::vector<int32_t>& out) const;
    void encode_chunk(std::string_view text, std::vector<int32_t>& out) const;

    const Vocab& vocab_;
    std::unordered_map<std::string_view, int32_t> pieces_;  // the pieces merges may produce
    std::unordered_map<uint64_t, int32_t> pair_to_piece_;   // (left key, right key) -> piece
    int32_t byte_token_[256];
    // No piece has U+2581 right after another character, so no merge crosses the start of
    // a word and words can be merged one at a time (same result, far smaller queues).
    bool words_are_independent_ = true;
};

}  // namespace strata::tokenizer
