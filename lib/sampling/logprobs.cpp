// sampling/logprobs.cpp — log-softmax at a token and the top alternatives (see logprobs.h).
#include "sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace strata::sampling {
namespace {

float finite_or_low(float x) { return std::isnan(x) ? -std::numeric_limits<float>::infinity() : x; }

}  // namespace

Logprobs logprobs_of(std::span<const float> logits, int32_t token, int32_t top) {
    if (token < 0 || static_cast<size_t>(token) >= logits.size())
        throw std::invalid_argument("logprobs: token " + std::to_string(token) + " is outside the vocabulary");
    if (top < 0 || top > kMaxTopLogprobs)
        throw std::invalid_argument("logprobs: top must be in [0, " + std::to_string(kMaxTopLogprobs) + "]");
    float max = -std::numeric_limits<float>::infinity();
    for (float x : logits) max = std::max(max, finite_or_low(x));
    double sum = 0;
    for (float x : logits) sum += std::exp(double(finite_or_low(x)) - max);
    const double log_z = double(max) + std::log(sum);
    auto logprob = [&](int32_t id) { return static_cast<float>(double(finite_or_low(logits[size_t(id)])) - log_z); };
    Logprobs out{{token, logprob(token)}, {}};
    // The `top` best by one pass keeping a small sorted list (top is at most 20).
    auto better = [&](int32_t a, int32_t b) {
        const float la = finite_or_low(logits[size_t(a)]), lb = finite_or_low(logits[size_t(b)]);
        return la > lb || (la == lb && a < b);
    };
    std::vector<int32_t> best;
    for (int32_t id = 0; id < static_cast<int32_t>(logits.size()) && top > 0; ++id) {
        if (best.size() == size_t(top) && !better(id, best.back())) continue;
        best.insert(std::upper_bound(best.begin(), best.end(), id, better), id);
        if (best.size() > size_t(top)) best.pop_back();
    }
    for (int32_t id : best) out.top.push_back({id, logprob(id)});
    return out;
}

}  // namespace strata::sampling
