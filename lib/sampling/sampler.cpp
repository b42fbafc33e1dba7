// sampling/sampler.cpp — the sampler chain (order and semantics in sampler.h).
// Owns: the candidate array, selecting its first elements by a key (keep_first), each stage
// of the chain, the draw.
// Must not touch: parameter ranges (params.cpp), random number generation (rng.h).
#include "sampling/sampler.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

namespace strata::sampling {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// keep_first's histogram: keys in [0, kKeyRange) in bins of 1/kBinsPerUnit, larger keys (and
// +inf) in the last bin. For the logit order the key is max - logit, so the last bin holds
// the tokens with p < e^-32 * p_max.
constexpr double kKeyRange = 32;
constexpr double kBinsPerUnit = 32;
constexpr size_t kBins = static_cast<size_t>(kKeyRange * kBinsPerUnit) + 1;

size_t bin_of(double key) {
    if (!(key < kKeyRange)) return kBins - 1;
    return key <= 0 ? 0 : static_cast<size_t>(key * kBinsPerUnit);
}

// NaN excludes the token; +inf (and overflow from a penalty) becomes the largest float.
float clean_logit(float x) {
    if (std::isnan(x)) return kNegInf;
    return std::min(x, FLT_MAX);
}

// The total order of candidates: higher logit first, then lower token id.
bool by_logit(const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// keep_first's key for the logit order: how far below the largest logit.
auto below(float max) {
    return [max](const Candidate& x) { return static_cast<double>(max) - x.logit; };
}

float max_logit_of(std::span<const Candidate> c) {
    float m = kNegInf;
    for (const Candidate& x : c) m = std::max(m, x.logit);
    return m;
}

// Sets each p to exp(logit - max) and returns their sum: the softmax before normalising.
double softmax_weights(std::span<Candidate> c, float max) {
    double sum = 0;
    for (Candidate& x : c) {
        x.p = std::exp(x.logit - max);
        sum += x.p;
    }
    return sum;
}

}  // namespace

Sampler::Sampler(const SamplingParams& params, int32_t n_vocab)
    : params_(params), n_vocab_(n_vocab), rng_(params.seed) {
    validate(params_, n_vocab_);
    cand_.resize(static_cast<size_t>(n_vocab_));
    scratch_.resize(static_cast<size_t>(n_vocab_));
    if (params_.penalty_last_n > 0) {
        window_.resize(static_cast<size_t>(params_.penalty_last_n));
        counts_.assign(static_cast<size_t>(n_vocab_), 0);
    }
}

int32_t Sampler::sample(std::span<const float> logits) {
    load(logits);
    if (max_logit_of(live()) == kNegInf)
        throw NoCandidateError("sampling: every token is excluded (all logits are -inf or NaN "
                               "after logit bias and penalties)");
    const bool greedy = params_.temperature == 0;
    // Only typical sampling can drop the highest logit, so greedy can skip the filters.
    if (greedy && params_.typical_p >= 1) return pick_greedy();
    top_k();
    typical();
    top_p();
    min_p();
    return greedy ? pick_greedy() : draw();
}

void Sampler::accept(int32_t token) {
    if (token < 0 || token >= n_vocab_)
        throw std::invalid_argument("sampler: accepted token id " + std::to_string(token) +
                                    " is outside the vocabulary [0, " + std::to_string(n_vocab_) + ")");
    if (window_.empty()) return;
    if (window_size_ == window_.size())
        --counts_[static_cast<size_t>(window_[window_head_])];  // the oldest token leaves
    else
        ++window_size_;
    window_[window_head_] = token;
    ++counts_[static_cast<size_t>(token)];
    window_head_ = (window_head_ + 1) % window_.size();
}

void Sampler::reset() {
    rng_.reseed(params_.seed);
    for (size_t i = 0; i < window_size_; ++i) counts_[static_cast<size_t>(window_[i])] = 0;
    window_size_ = 0;
    window_head_ = 0;
    n_ = 0;
}

void Sampler::load(std::span<const float> logits) {
    if (logits.size() != cand_.size())
        throw std::invalid_argument("sampler: got " + std::to_string(logits.size()) +
                                    " logits for a vocabulary of " + std::to_string(n_vocab_));
    for (size_t i = 0; i < logits.size(); ++i)
        cand_[i] = {static_cast<int32_t>(i), clean_logit(logits[i]), 0.0f};
    n_ = cand_.size();
    for (const LogitBias& b : params_.logit_bias) {
        float& logit = cand_[static_cast<size_t>(b.token)].logit;
        logit = clean_logit(logit + b.bias);
    }
    apply_penalties();
}

// llama.cpp's penalties: for a token seen `count` times in the window, a positive logit is
// divided by repeat_penalty and a negative one multiplied, then count * frequency_penalty +
// presence_penalty is subtracted. The candidates are still in id order here.
void Sampler::apply_penalties() {
    const SamplingParams& p = params_;
    if (window_size_ == 0 || (p.repeat_penalty == 1 && p.frequency_penalty == 0 && p.presence_penalty == 0))
        return;
    for (size_t i = 0; i < window_size_; ++i) {
        const auto token = static_cast<size_t>(window_[i]);
        int32_t& count = counts_[token];
        if (count <= 0) continue;  // penalised already at an earlier occurrence
        float& logit = cand_[token].logit;
        logit = logit <= 0 ? logit * p.repeat_penalty : logit / p.repeat_penalty;
        logit = clean_logit(logit - (static_cast<float>(count) * p.frequency_penalty + p.presence_penalty));
        count = -count;
    }
    for (size_t i = 0; i < window_size_; ++i) {
        int32_t& count = counts_[static_cast<size_t>(window_[i])];
        count = std::abs(count);
    }
}

size_t Sampler::min_keep() const { return std::max<size_t>(1, static_cast<size_t>(params_.min_keep)); }

// Makes live()[0, m) the first m candidates in the order of key(candidate) (ascending, ties
// to the lower id), where m - 1 is the first position at which stop(position, mass) holds,
// mass being the sum of the p fields up to and including that position; keeps everything if
// stop never holds. stop must be monotone (true stays true as position and mass grow).
// The candidates before the bin where the cut falls keep their relative order.
template <class Key, class Stop>
void Sampler::keep_first(Key key, Stop stop) {
    std::array<size_t, kBins> count{};
    std::array<double, kBins> mass{};
    for (const Candidate& x : live()) {
        const size_t b = bin_of(key(x));
        ++count[b];
        mass[b] += x.p;
    }
    size_t cut = 0, before = 0;  // the bin holding the cut, and how many come before it
    double mass_before = 0;
    for (; cut < kBins; ++cut) {
        if (count[cut] && stop(before + count[cut] - 1, mass_before + mass[cut])) break;
        before += count[cut];
        mass_before += mass[cut];
    }
    if (cut == kBins) return;
    size_t front = 0, back = before;
    for (const Candidate& x : live()) {
        const size_t b = bin_of(key(x));
        if (b < cut) scratch_[front++] = x;
        else if (b == cut) scratch_[back++] = x;
    }
    const auto first = scratch_.begin() + static_cast<ptrdiff_t>(before);
    std::sort(first, scratch_.begin() + static_cast<ptrdiff_t>(back), [&](const Candidate& a, const Candidate& b) {
        const double ka = key(a), kb = key(b);
        return ka < kb || (ka == kb && a.id < b.id);
    });
    // The bin's mass was summed in another order, so stop may hold only at its very end.
    size_t last = before;
    for (double m = mass_before; last + 1 < back; ++last) {
        m += scratch_[last].p;
        if (stop(last, m)) break;
    }
    cand_.swap(scratch_);
    n_ = last + 1;
}

void Sampler::keep_most_likely(size_t k) {
    keep_first(below(max_logit_of(live())), [k](size_t i, double) { return i + 1 >= k; });
}

void Sampler::top_k() {
    const auto k = static_cast<size_t>(params_.top_k);
    if (k > 0 && k < n_) keep_most_likely(k);
}

// Locally typical sampling (Meister et al.): with H the entropy of the candidates, keep the
// tokens whose surprisal -log p is closest to H, in that order, until their mass exceeds
// typical_p.
void Sampler::typical() {
    if (params_.typical_p >= 1) return;
    const std::span<Candidate> c = live();
    const float max = max_logit_of(c);
    const double sum = softmax_weights(c, max);
    const double log_z = max + std::log(sum);
    double entropy = 0;
    for (const Candidate& x : c)
        if (x.p > 0) entropy -= x.p / sum * std::log(x.p / sum);
    const double target = params_.typical_p * sum;
    const size_t keep = min_keep();
    keep_first([&](const Candidate& x) { return std::fabs(log_z - x.logit - entropy); },
               [&](size_t i, double mass) { return mass > target && i + 1 >= keep; });
}

// The smallest most-likely-first prefix whose probability reaches top_p.
void Sampler::top_p() {
    if (params_.top_p >= 1) return;
    const std::span<Candidate> c = live();
    const float max = max_logit_of(c);
    const double target = params_.top_p * softmax_weights(c, max);
    const size_t keep = min_keep();
    keep_first(below(max), [&](size_t i, double mass) { return mass >= target && i + 1 >= keep; });
}

// Tokens whose probability is at least min_p times the largest: logit >= max + log(min_p),
// or the min_keep most likely if fewer pass.
void Sampler::min_p() {
    if (params_.min_p <= 0) return;
    const std::span<Candidate> c = live();
    const float threshold = max_logit_of(c) + std::log(params_.min_p);
    const size_t keep = min_keep();
    const auto passes = [threshold](const Candidate& x) { return x.logit >= threshold; };
    if (static_cast<size_t>(std::count_if(c.begin(), c.end(), passes)) < keep) return keep_most_likely(keep);
    size_t out = 0;  // a stable in-place compaction
    for (const Candidate& x : c)
        if (passes(x)) c[out++] = x;
    n_ = out;
}

int32_t Sampler::pick_greedy() {
    const std::span<Candidate> c = live();
    const auto best = std::min_element(c.begin(), c.end(), by_logit);
    cand_[0] = {best->id, best->logit, 1.0f};
    n_ = 1;
    return cand_[0].id;
}

// Temperature and the draw: p_i proportional to exp((logit_i - max) / temperature), one
// uniform number from the generator, the first candidate whose cumulative weight exceeds it.
int32_t Sampler::draw() {
    const std::span<Candidate> c = live();
    const float max = max_logit_of(c);
    const float inv_temperature = 1.0f / params_.temperature;
    double total = 0;
    for (Candidate& x : c) {
        x.p = std::exp((x.logit - max) * inv_temperature);
        total += x.p;
    }
    const double target = rng_.uniform() * total;
    double cumulative = 0;
    size_t chosen = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        if (c[i].p == 0) continue;
        chosen = i;
        cumulative += c[i].p;
        if (cumulative > target) break;
    }
    for (Candidate& x : c) x.p = static_cast<float>(x.p / total);
    return c[chosen].id;
}

}  // namespace strata::sampling
