// tokenizer/special.h — finding special-token text in input before it is tokenized:
// control and unknown tokens when parse_special is set, USER_DEFINED tokens always. The
// result is the input cut into plain-text fragments and whole tokens, chosen as llama.cpp
// chooses them (longer token texts first, each leftmost-first), with the whitespace next
// to tokens that strip it removed.
// Must not touch: the encoding of the plain-text fragments.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace strata::tokenizer {

struct Fragment {
    std::string_view text;  // plain text (when token < 0)
    int32_t token = -1;
};

class SpecialMatcher {
public:
    explicit SpecialMatcher(const Vocab& vocab);

    // Cuts `text` into fragments, in order; empty text fragments are left out.
    std::vector<Fragment> partition(std::string_view text, bool parse_special) const;

private:
    struct Node {
        std::vector<std::pair<uint8_t, int32_t>> next;  // sorted by byte
        int32_t token = -1;
    };
    struct Occurrence {
        size_t pos;
        int32_t token;
    };
    int32_t child(int32_t node, uint8_t byte) const;
    void add(std::string_view text, int32_t token);
    // The tokens whose text occurs in `text` (those allowed), in rank order.
    std::vector<int32_t> present(std::string_view text, bool parse_special) const;

    const Vocab& vocab_;
    std::vector<Node> nodes_;
    std::vector<int32_t> rank_;  // by token id: the order in which tokens claim text (0 first)
    bool has_user_defined_ = false;
    bool has_any_ = false;
};

}  // namespace strata::tokenizer
