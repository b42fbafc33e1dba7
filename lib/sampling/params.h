// sampling/params.h — the user-facing sampling parameters and their validation.
// Owns: SamplingParams (defaults as llama.cpp's), the accepted range of every field, and
// SamplingError naming the offending field. Must not touch: logits (sampler.h), text
// (stop.h), request parsing (the daemon fills these fields from JSON and forwards the error).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::sampling {

struct LogitBias {
    int32_t token = 0;
    float bias = 0;  // added to the token's logit; -infinity bans the token
};

struct SamplingParams {
    float temperature = 0.8f;       // 0 = greedy (argmax, ties to the lowest token id)
    int32_t top_k = 40;             // keep the k most likely tokens; 0 = off
    float top_p = 0.95f;            // keep the smallest most-likely prefix with mass >= p; 1 = off
    float min_p = 0.05f;            // keep tokens with p >= min_p * p_max; 0 = off
    float typical_p = 1.0f;         // locally typical sampling mass; 1 = off
    float repeat_penalty = 1.0f;    // repeated tokens: positive logits / it, negative * it; 1 = off
    float frequency_penalty = 0.0f; // minus count * this, for tokens in the window
    float presence_penalty = 0.0f;  // minus this, for tokens in the window
    int32_t penalty_last_n = 64;    // the penalty window: the last n accepted tokens; 0 = off
    int32_t min_keep = 0;           // every filter keeps at least this many tokens (and >= 1)
    uint64_t seed = 0;              // the same seed, logits and accepted tokens give the same draws
    std::vector<LogitBias> logit_bias;  // several entries for one token add up
};

// Accepted ranges (inclusive unless noted), also quoted in the error messages.
inline constexpr float kMaxTemperature = 100.0f;       // temperature in [0, 100]
inline constexpr float kMaxRepeatPenalty = 100.0f;     // repeat_penalty in (0, 100]
inline constexpr float kMaxAbsPenalty = 100.0f;        // frequency/presence in [-100, 100]
inline constexpr int32_t kMaxPenaltyWindow = 1 << 20;  // penalty_last_n in [0, 2^20]
inline constexpr int32_t kMaxMinKeep = 1 << 20;        // min_keep in [0, 2^20]
inline constexpr float kMaxAbsLogitBias = 1000.0f;     // bias in [-1000, 1000], or -infinity
inline constexpr size_t kMaxLogitBiasEntries = 1 << 20;

// A parameter outside its range; field() is its name as in SamplingParams
// ("top_p", "logit_bias[2].token", ...).
class SamplingError : public std::invalid_argument {
public:
    SamplingError(std::string field, const std::string& message)
        : std::invalid_argument(message), field_(std::move(field)) {}
    const std::string& field() const { return field_; }

private:
    std::string field_;
};

// Throws SamplingError for the first field out of range. n_vocab bounds the logit_bias tokens.
void validate(const SamplingParams& params, int32_t n_vocab);

}  // namespace strata::sampling
