// engine/guess.h — speculative decoding's guesses (the `ngram` mode) and how many to make.
// Owns: prompt lookup (the tokens that followed the latest earlier occurrence of a
// sequence's last few tokens, as llama.cpp's prompt-lookup decoding finds them); each
// request's adaptive guess length: longer while guesses are accepted, shorter when they are
// not, and none for a while (longer each time) when even one-token guesses keep failing;
// its acceptance figures; the small n-gram pool that all requests share (what followed
// each 3-token run of finished requests' outputs, bounded, the oldest forgotten first).
// Must not touch: the model, KV caches, sampling, the scheduler. Verification (which guesses
// the target accepts) is the engine's (step.cpp); this only proposes and keeps count.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

namespace strata::engine {

// The tokens after the latest earlier occurrence of the last n tokens of `tokens` (n from
// kNgramMax down to kNgramMin, the longest match first), at most `max` of them; empty when
// nothing matches. Cost: one backwards scan of `tokens` per n, nothing allocated but the result.
inline constexpr int32_t kNgramMax = 4, kNgramMin = 2;
std::vector<int32_t> lookup_ngram(std::span<const int32_t> tokens, int32_t max);

// What followed each kPoolGram-token run in the sequences it learnt, at most kMaxFollow
// tokens each, for at most `max_entries` runs (the oldest learnt run is forgotten first).
class NgramPool {
public:
    static constexpr int32_t kPoolGram = 3, kMaxFollow = 16;
    explicit NgramPool(size_t max_entries = 4096) : max_entries_(max_entries) {}

    // Learns the runs that start in tokens[from, ...) (and what followed them there).
    void learn(std::span<const int32_t> tokens, size_t from);
    // What followed the last kPoolGram tokens of `tokens`, at most `max`; empty if unknown.
    std::vector<int32_t> lookup(std::span<const int32_t> tokens, int32_t max) const;

    size_t entries() const { return map_.size(); }
    uint64_t bytes() const { return uint64_t(map_.size()) * kEntryBytes; }

private:
    using Gram = std::array<int32_t, kPoolGram>;
    struct Entry {
        Gram gram;
        std::vector<int32_t> follow;
    };
    static uint64_t key(const int32_t* gram);
    // A map node, its gram and follow tokens, and its place in order_ (an estimate).
    static constexpr uint64_t kEntryBytes = 64 + sizeof(Entry) + kMaxFollow * sizeof(int32_t) + sizeof(uint64_t);

    size_t max_entries_;
    std::unordered_map<uint64_t, Entry> map_;
    std::deque<uint64_t> order_;  // keys, oldest learnt first
};

// One request's speculation: how many tokens to guess now, where from, and what its guesses
// earned. Sources: n-grams (prompt lookup in the sequence, else the shared pool) and the
// draft model (draft.h), asked when the n-grams have nothing (or alone).
class Speculation {
public:
    explicit Speculation(int32_t draft_max = 0, bool ngram = true, bool draft = false)
        : max_(draft_max), len_(draft_max), ngram_(ngram), draft_(draft) {}

    // What to feed after the sequence's last token `history.back()`, at most `room` tokens:
    // the n-grams' guesses, or, when they have none and the draft is a source, how many the
    // draft should guess.
    struct Guess {
        std::vector<int32_t> tokens;
        int32_t draft = 0;
    };
    Guess guess(std::span<const int32_t> history, int32_t room, const NgramPool& pool);
    // A verify pass over `guessed` guesses kept `accepted` of them.
    void verified(int32_t guessed, int32_t accepted);

    bool enabled() const { return max_ > 0; }
    uint64_t guessed() const { return guessed_; }
    uint64_t accepted() const { return accepted_; }

private:
    int32_t max_;
    int32_t len_;             // guesses to make next (1..max_)
    bool ngram_, draft_;      // the sources
    int32_t pause_ = 0;       // steps left without guessing
    int32_t next_pause_ = kFirstPause;
    uint64_t guessed_ = 0, accepted_ = 0;
    static constexpr int32_t kFirstPause = 8, kLongestPause = 256;
};

}  // namespace strata::engine
