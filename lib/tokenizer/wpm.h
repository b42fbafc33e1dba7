// tokenizer/wpm.h — WordPiece, the "bert" vocabularies of BERT-family encoders, as
// llama.cpp runs it: the text is split into words at whitespace and around every
// punctuation mark, ASCII symbol and CJK ideograph, control characters are dropped, letters
// are lowercased and stripped of accents; each word, prefixed with U+2581 (how the
// converter marks a word's first piece), is covered by the longest vocabulary pieces from
// the left, and a word any part of which no piece covers becomes the unknown token.
// Lowercasing and accent stripping cover ASCII, Latin-1 and Latin Extended-A (U+00C0 to
// U+017F, the accents of U+0300 to U+036F dropped); other scripts keep their letters as
// they are (llama.cpp's full Unicode tables also fold Greek, Cyrillic, ...).
// Must not touch: special tokens, BOS/SEP (tokenizer.cpp adds them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace strata::tokenizer {

class WpmModel {
public:
    explicit WpmModel(const Vocab& vocab);
    void encode(std::string_view text, std::vector<int32_t>& out) const;

    // The words of `text` as WordPiece sees them (lowercased, accents stripped).
    static std::vector<std::string> words(std::string_view text);

private:
    const Vocab& vocab_;
    size_t longest_ = 1;  // bytes of the longest piece
};

}  // namespace strata::tokenizer
