// tokenizer/vocab.h — the vocabulary as read from GGUF metadata: token texts, scores and
// types, the special ids, the BOS/EOS flags and the end-of-generation set, validated, plus
// each token's decoded bytes. Shared by the SentencePiece, byte-level BPE and WordPiece models.
// Must not touch: the encoding algorithms (spm.h, bpe.h) and the pre-tokenizer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace strata::gguf {
class File;
}

namespace strata::tokenizer {

enum class VocabKind { Spm, Bpe, Wpm };

// Lets unordered maps keyed by std::string be searched with a string_view.
struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct Vocab {
    VocabKind kind = VocabKind::Spm;
    std::string model;  // tokenizer.ggml.model
    std::string pre;    // tokenizer.ggml.pre (BPE only)
    std::vector<std::string> text;
    std::vector<float> score;
    std::vector<TokenType> type;
    std::vector<uint8_t> strip;     // kStripLeft / kStripRight: whitespace next to the token is dropped
    std::vector<std::string> piece;  // decoded bytes, as rendered with render_special
    std::vector<std::string_view> merges;  // BPE: "left right", in rank order (views into the file)
    std::unordered_map<std::string_view, int32_t> by_text;  // views into `text`

    int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1;
    int32_t tail = -1;  // what add_eos appends: EOS, or WordPiece's separator ([SEP])
    bool add_bos = false, add_eos = false, add_space_prefix = false;
    std::vector<int32_t> eog;
    FimTokens fim;
    // What llama.cpp's server puts between a query and a document (PairTokens).
    int32_t sep = -1;                                   // tokenizer.ggml.seperator_token_id
    bool pair_add_eos = false, pair_add_sep = false;    // add_eos_token, add_sep_token as llama.cpp reads them

    static constexpr uint8_t kStripLeft = 1, kStripRight = 2;

    Vocab() = default;
    Vocab(Vocab&&) = default;
    Vocab& operator=(Vocab&&) = default;
    Vocab(const Vocab&) = delete;  // by_text points into text
    Vocab& operator=(const Vocab&) = delete;

    int32_t size() const { return static_cast<int32_t>(text.size()); }
    int32_t find(std::string_view s) const {
        auto it = by_text.find(s);
        return it == by_text.end() ? -1 : it->second;
    }
    // Reads and validates the tokenizer.* keys; throws TokenizerError naming the problem.
    // The file must outlive the Vocab only for `merges`, which the BPE model consumes.
    static Vocab from_gguf(const gguf::File& file);
};

// Control, unknown and user-defined tokens: the ones whose text is looked for in input.
inline bool is_special(TokenType t) {
    return t == TokenType::Control || t == TokenType::Unknown || t == TokenType::UserDefined;
}

// The byte a SentencePiece <0xNN> token stands for, or -1 if `text` is not of that form.
int byte_token_value(std::string_view text);
// "0A" for byte 0x0A: how byte tokens and error messages spell a byte.
std::string hex_byte(char byte);

}  // namespace strata::tokenizer
