// tokenizer/pretokenizer.h — the pre-tokenizer of byte-level BPE vocabularies: splitting
// text into words before BPE runs on each word, chosen by `tokenizer.ggml.pre`. Each
// family is an ordered list of PCRE2 regexes (JIT, UTF + UCP); every regex splits each
// piece left by the previous one into its matches and the unmatched gaps between them,
// which is how llama.cpp applies the Hugging Face split rules.
// Must not touch: vocabularies, BPE merges, special tokens.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace strata::tokenizer {

struct PreTokenizerFamily {
    std::vector<std::string_view> regexes;
    bool ignore_merges = false;  // a word that is itself a token is not split (Llama 3)
    bool add_bos = false;        // default for add_bos_token when the file does not say
};

// The family for a `tokenizer.ggml.pre` value; throws TokenizerError naming an unknown one.
const PreTokenizerFamily& pre_tokenizer_family(std::string_view pre);

class PreTokenizer {
public:
    explicit PreTokenizer(std::string_view pre);
    ~PreTokenizer();
    PreTokenizer(const PreTokenizer&) = delete;
    PreTokenizer& operator=(const PreTokenizer&) = delete;

    // Appends the words of `text` (views into it) to `words`; their concatenation is text.
    void split(std::string_view text, std::vector<std::string_view>& words) const;

private:
    struct Regex;
    std::vector<std::unique_ptr<Regex>> regexes_;
};

}  // namespace strata::tokenizer
