// engine/draft.h — speculative decoding's draft model (model.draft): a second, small GGUF
// loaded beside the target, whose vocabulary must be the target's (checked at load), and
// its guesses. Each speculating sequence keeps a draft KV cache of its own (blocks counted
// in the engine's ledger, so memory.kv_budget covers them); before guessing, that cache
// catches up with the sequence's tokens (cut back to what they still share: rejected
// guesses go), then the draft decodes greedily — every asking sequence in one pass a step —
// up to each one's length, a sequence stopping early when the draft's probability of its own
// next token falls below engine.draft_p_min. Greedy guesses make the proposal one-hot, so
// the engine's verification (step.cpp) keeps the target's distribution exactly, as for
// n-gram guesses.
// Must not touch: verification and sampling (step.cpp, generation), the target model,
// scheduling, sessions.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace strata::engine {

// How far the two vocabularies' sizes may differ (padding rows of real model pairs); the ids
// both have must name the same tokens.
inline constexpr int32_t kDraftVocabSlack = 128;

// What the draft holds for one sequence: its KV cache and the tokens it holds them for.
struct DraftSequence {
    kv::KvCache cache;
    std::vector<int32_t> tokens;
};

class Draft {
public:
    // Loads the draft at `path` resident. Throws std::runtime_error naming what is wrong: an
    // unreadable file, a vocabulary that is not the target's (its size, or the first id whose
    // token differs), a recurrent model (whose state cannot be cut back to the accepted
    // guesses), a KV type it cannot store.
    // A guess is kept only while the draft gives it at least `p_min`.
    Draft(const std::string& path, const tokenizer::Tokenizer& target, int threads, int32_t batch_tokens, kv::KvType kv_type,
          float p_min);

    DraftSequence new_sequence(int32_t context, std::shared_ptr<kv::Ledger> ledger) const;
    // The KV bytes a sequence of `positions` tokens takes in the draft's cache while a pass
    // of `pass` of them runs (kv::KvCache::bytes_for).
    uint64_t kv_bytes_for(int32_t positions, int32_t pass) const;

    // One sequence's request for guesses: the tokens so far (the last is the one the target
    // feeds next), at most `max` guesses wanted; `guesses` receives them.
    struct Ask {
        DraftSequence* seq;
        std::span<const int32_t> history;
        int32_t max;
        std::vector<int32_t> guesses;
    };
    // Guesses for every ask, in draft passes shared by all of them. Throws what a forward
    // pass throws (each cache then holds what it held before that pass).
    void guess(std::vector<Ask>& asks);

    const std::string& path() const { return path_; }
    uint64_t weight_bytes() const { return weight_bytes_; }
    uint64_t passes() const { return passes_; }
    double seconds() const { return seconds_; }

private:
    void catch_up(Ask& ask, std::vector<int32_t>& feed) const;
    float take_guess(const float* row, int32_t& token) const;

    std::string path_;
    std::unique_ptr<model::Model> model_;
    kv::KvType kv_type_;
    float p_min_;
    int32_t guessable_ = 0;  // ids both vocabularies name alike: [0, guessable_)
    uint64_t weight_bytes_ = 0;
    uint64_t passes_ = 0;
    double seconds_ = 0;
    std::vector<float> logits_;
};

}  // namespace strata::engine
