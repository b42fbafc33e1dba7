// sampling/logprobs.h — log-probabilities of a generated token and of the most likely
// alternatives, for clients that ask for them (OpenAI logprobs / top_logprobs): the
// log-softmax of the model's own logits at temperature 1, before logit bias, penalties,
// truncation and temperature — the distribution llama-server reports by default.
// Must not touch: the sampler chain (sampler.h), text (the engine turns ids into bytes).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata::sampling {

inline constexpr int32_t kMaxTopLogprobs = 20;  // alternatives per token: [0, 20], as OpenAI

struct TokenLogprob {
    int32_t id = 0;
    float logprob = 0;  // natural log; -infinity for a token with a -inf or NaN logit
};

struct Logprobs {
    TokenLogprob chosen;
    std::vector<TokenLogprob> top;  // most likely first, ties to the lower id
};

// Throws std::invalid_argument for a token outside logits or `top` outside [0, kMaxTopLogprobs].
Logprobs logprobs_of(std::span<const float> logits, int32_t token, int32_t top);

}  // namespace strata::sampling
