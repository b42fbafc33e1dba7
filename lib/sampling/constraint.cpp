// sampling/constraint.cpp — draw first, mask only when the grammar refuses the draw.
#include "sampling/constraint.h"

#include <algorithm>
#include <limits>

namespace strata::sampling {

ConstraintVocab::ConstraintVocab(std::vector<std::string> token_bytes, std::vector<int32_t> eog_ids)
    : bytes(std::move(token_bytes)), eog(std::move(eog_ids)), trie(bytes) {}

Constraint::Constraint(std::shared_ptr<const grammar::Grammar> grammar, std::shared_ptr<const ConstraintVocab> vocab)
    : vocab_(std::move(vocab)), matcher_(std::move(grammar)) {}

bool Constraint::is_eog(int32_t token) const {
    return std::find(vocab_->eog.begin(), vocab_->eog.end(), token) != vocab_->eog.end();
}

bool Constraint::allows(int32_t token) const {
    if (is_eog(token)) return matcher_.can_end();
    if (token < 0 || static_cast<size_t>(token) >= vocab_->bytes.size()) return false;
    const std::string& b = vocab_->bytes[static_cast<size_t>(token)];
    grammar::Matcher probe = matcher_;
    return !b.empty() && probe.accept_bytes(b);
}

int32_t Constraint::sample(Sampler& sampler, std::span<const float> logits) {
    const int32_t first = sampler.sample(logits);
    if (allows(first)) return first;
    matcher_.allowed_tokens(vocab_->trie, allowed_);
    const bool can_end = matcher_.can_end();
    masked_.assign(logits.begin(), logits.end());
    for (size_t id = 0; id < masked_.size(); ++id) {
        const bool ok = id < allowed_.size() ? allowed_[id] != 0 : false;
        if (!ok) masked_[id] = -std::numeric_limits<float>::infinity();
    }
    for (int32_t e : vocab_->eog) {
        if (can_end && static_cast<size_t>(e) < masked_.size()) masked_[static_cast<size_t>(e)] = logits[static_cast<size_t>(e)];
    }
    return sampler.sample(masked_);
}

void Constraint::accept(int32_t token) {
    if (is_eog(token)) return;
    matcher_.accept_bytes(vocab_->bytes[static_cast<size_t>(token)]);
}

}  // namespace strata::sampling
