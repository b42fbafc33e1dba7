// sampling/sampler.h — choosing the next token from a vector of logits.
// Owns: the sampler chain and its per-sequence state (penalty window, random generator).
// The chain runs in llama.cpp's default order (common_params_sampling::samplers, without
// DRY, top-n-sigma and XTC, which strata does not have):
//
//   logit bias -> penalties (repetition, frequency, presence over the last penalty_last_n
//   accepted tokens) -> top-k -> typical -> top-p -> min-p -> temperature -> random draw
//
// so the filters see the distribution before temperature, and temperature only reshapes
// what they kept. Temperature 0 is greedy: the highest logit after bias and penalties, ties
// to the lowest id (with typical_p < 1, the highest among the typical set, as in llama.cpp).
// Every filter keeps at least max(min_keep, 1) tokens.
//
// Cost per token for a vocabulary of V: one pass copying the logits, bias and penalty
// updates proportional to their sizes; top-k, top-p and typical each make two passes over
// the live candidates (a histogram of their sort key with the probability mass per bin, then
// gathering the bins that are kept) and sort only the one bin where the cut falls; min-p is
// one compaction pass. Nothing is allocated after construction. Given the same seed, logits
// and accepted tokens, the draws are the same on every platform: the random numbers come from
// rng.h, and the candidates' order is fixed by this code (bins in array order, the cut bin
// sorted by key then token id), never by how a standard library sorts or partitions.
// Must not touch: logits computation (model/), text (stop.h).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "sampling/params.h"
#include "sampling/rng.h"

namespace strata::sampling {

struct Candidate {
    int32_t id;
    float logit;  // after bias and penalties, before temperature
    float p;      // after sample(): the probability the draw gave this token
};

// Every token was excluded (all logits -inf or NaN after the bias and penalties).
class NoCandidateError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Sampler {
public:
    // Throws SamplingError for parameters out of range (see params.h).
    Sampler(const SamplingParams& params, int32_t n_vocab);

    // The next token. logits.size() must be n_vocab; NaN logits count as -inf, +inf as the
    // largest float. Throws std::invalid_argument for a wrong size, NoCandidateError when no
    // token is left.
    int32_t sample(std::span<const float> logits);

    // Records a token of the sequence (prompt or generated) in the penalty window.
    // Throws std::invalid_argument for an id outside the vocabulary.
    void accept(int32_t token);

    // Back to the state after construction: empty window, generator reseeded.
    void reset();

    // The tokens the last sample() chose from, with their final probabilities, in no
    // particular order; for greedy, the chosen token alone with p = 1.
    std::span<const Candidate> candidates() const { return {cand_.data(), n_}; }

    const SamplingParams& params() const { return params_; }
    int32_t n_vocab() const { return n_vocab_; }

private:
    void load(std::span<const float> logits);
    void apply_penalties();
    void top_k();
    void typical();
    void top_p();
    void min_p();
    int32_t pick_greedy();
    int32_t draw();
    size_t min_keep() const;
    std::span<Candidate> live() { return {cand_.data(), n_}; }
    template <class Key, class Stop>
    void keep_first(Key key, Stop stop);
    void keep_most_likely(size_t k);

    SamplingParams params_;
    int32_t n_vocab_;
    Rng rng_;
    std::vector<Candidate> cand_;     // n_vocab entries; [0, n_) are the live candidates
    std::vector<Candidate> scratch_;  // n_vocab entries, where keep_first gathers the kept ones
    size_t n_ = 0;
    std::vector<int32_t> window_;  // ring buffer of the last penalty_last_n accepted tokens
    size_t window_head_ = 0;
    size_t window_size_ = 0;
    std::vector<int32_t> counts_;  // occurrences of each token in the window
};

}  // namespace strata::sampling
