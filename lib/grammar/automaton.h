// grammar/automaton.h — running a grammar over bytes as a pushdown automaton, and masking a
// vocabulary's tokens by it.
// Owns: the matcher state (the set of stacks of rule positions, as llama.cpp's llama-grammar
// keeps them, plus the bytes of a code point not yet complete, so a UTF-8 character may be
// split across tokens), the token trie over the vocabulary's byte strings, and the per-step
// mask. Must not touch: parsing (grammar.h), sampling order (sampling/).
//
// State is a plain copyable value: clone it by copying, roll back by keeping the copy from
// before accept() (speculative decoding, n > 1).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace strata::grammar {

// A position in a rule: the next symbol of alts[alt] to match is sym.
struct Pos {
    uint32_t rule, alt, sym;
    bool operator==(const Pos&) const = default;
};
using Stack = std::vector<Pos>;  // back() is the innermost rule; every stack's top is a class

// The vocabulary as a trie of byte strings, built once per model.
class TokenTrie {
public:
    // token_bytes[id] is the text token id stands for; empty for control tokens, which the
    // grammar never allows (EOS is handled apart).
    explicit TokenTrie(const std::vector<std::string>& token_bytes);

    struct Node {
        uint32_t first_child = 0, n_children = 0;  // into nodes_, children sorted by byte
        int32_t token = -1;                          // the token ending here, or -1
        uint8_t byte = 0;
    };
    std::span<const Node> nodes() const { return nodes_; }
    // Tokens sharing a byte string with an earlier one (rare; BPE/SPM duplicates).
    const std::vector<std::pair<int32_t, int32_t>>& aliases() const { return aliases_; }
    size_t n_vocab() const { return n_vocab_; }

private:
    std::vector<Node> nodes_;  // nodes_[0] is the root
    std::vector<std::pair<int32_t, int32_t>> aliases_;  // (token, same bytes as token)
    size_t n_vocab_;
};

class Matcher {
public:
    explicit Matcher(std::shared_ptr<const Grammar> grammar);

    // Advances over bytes; false (and the state unchanged) when they cannot continue.
    bool accept_bytes(std::string_view bytes);
    // Whether the text so far is a complete sentence of the grammar (EOS may follow).
    bool can_end() const;
    // Whether no continuation is possible at all.
    bool dead() const { return stacks_.empty(); }

    // allowed[id] = 1 for each token whose bytes can continue the text (allowed.size() is
    // the vocabulary size); one walk of the trie with the set of stacks.
    void allowed_tokens(const TokenTrie& trie, std::vector<uint8_t>& allowed) const;

private:
    bool step(uint8_t byte);
    void advance_codepoint(uint32_t cp);
    void walk(const TokenTrie& trie, uint32_t node, std::vector<uint8_t>& allowed) const;

    std::shared_ptr<const Grammar> g_;
    std::vector<Stack> stacks_;
    uint32_t partial_ = 0;     // bits of the code point being read
    uint32_t remaining_ = 0;   // continuation bytes still expected
    uint32_t min_cp_ = 0;      // the smallest code point its length may encode (no overlongs)
};

}  // namespace strata::grammar
