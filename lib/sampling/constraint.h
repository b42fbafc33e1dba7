// sampling/constraint.h — sampling under a grammar.
// Owns: the order of work that keeps a constraint cheap (llama.cpp's): draw from the
// unconstrained chain first, test only the drawn token against the grammar, and only when it
// is refused compute the full mask (one trie walk) and draw again from the masked logits.
// End-of-generation tokens are allowed only when the grammar is complete.
// Must not touch: the grammar's matching (grammar/), the chain itself (sampler.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "grammar/automaton.h"
#include "sampling/sampler.h"

namespace strata::sampling {

// What a constraint needs to know of the vocabulary, built once per model.
struct ConstraintVocab {
    std::vector<std::string> bytes;  // each token's bytes; empty for control tokens
    std::vector<int32_t> eog;        // end-of-generation tokens
    grammar::TokenTrie trie;

    ConstraintVocab(std::vector<std::string> token_bytes, std::vector<int32_t> eog_ids);
};

// Copyable: a copy is a clone, and assigning an earlier copy back rolls it back.
class Constraint {
public:
    Constraint(std::shared_ptr<const grammar::Grammar> grammar, std::shared_ptr<const ConstraintVocab> vocab);

    // A token the grammar allows, drawn by sampler; throws NoCandidateError when the grammar
    // allows no token at all.
    int32_t sample(Sampler& sampler, std::span<const float> logits);
    // Advances the grammar over a token sample() returned.
    void accept(int32_t token);
    bool allows(int32_t token) const;

private:
    bool is_eog(int32_t token) const;

    std::shared_ptr<const ConstraintVocab> vocab_;
    grammar::Matcher matcher_;
    std::vector<uint8_t> allowed_;  // scratch
    std::vector<float> masked_;     // scratch
};

}  // namespace strata::sampling
