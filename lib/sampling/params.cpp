// sampling/params.cpp — range checks of SamplingParams with errors that name the field.
// Owns: validate(). Must not touch: sampling itself.
#include "sampling/params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace strata::sampling {
namespace {

// Integers as integers, other values with the float's significant digits.
std::string number(double v) {
    char buf[40];
    const bool integral = std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e15;
    std::snprintf(buf, sizeof buf, integral ? "%.0f" : "%.7g", v);
    return buf;
}

[[noreturn]] void out_of_range(const std::string& field, double value, const std::string& expected) {
    throw SamplingError(field, "sampling parameter " + field + " = " + number(value) +
                                   " is out of range: expected " + expected);
}

// value in [lo, hi] (or (lo, hi] when lo_open), finite.
void check_range(const std::string& field, double value, double lo, double hi, bool lo_open = false) {
    const bool ok = std::isfinite(value) && (lo_open ? value > lo : value >= lo) && value <= hi;
    if (!ok)
        out_of_range(field, value, std::string("a number in ") + (lo_open ? "(" : "[") + number(lo) + ", " +
                                       number(hi) + "]");
}

void check_logit_bias(const std::vector<LogitBias>& biases, int32_t n_vocab) {
    if (biases.size() > kMaxLogitBiasEntries)
        out_of_range("logit_bias", static_cast<double>(biases.size()),
                     "at most " + std::to_string(kMaxLogitBiasEntries) + " entries");
    for (size_t i = 0; i < biases.size(); ++i) {
        const std::string field = "logit_bias[" + std::to_string(i) + "]";
        if (biases[i].token < 0 || biases[i].token >= n_vocab)
            out_of_range(field + ".token", biases[i].token,
                         "a token id in [0, " + std::to_string(n_vocab - 1) + "]");
        const float b = biases[i].bias;
        if (!(std::isinf(b) && b < 0))
            check_range(field + ".bias", b, -kMaxAbsLogitBias, kMaxAbsLogitBias);
    }
    std::vector<bool> banned(static_cast<size_t>(n_vocab), false);
    for (const LogitBias& bias : biases)
        if (std::isinf(bias.bias) && bias.bias < 0) banned[static_cast<size_t>(bias.token)] = true;
    if (std::all_of(banned.begin(), banned.end(), [](bool b) { return b; }))
        throw SamplingError("logit_bias", "logit_bias bans every one of the " + std::to_string(n_vocab) +
                                              " tokens (bias -inf): nothing could be generated");
}

}  // namespace

void validate(const SamplingParams& p, int32_t n_vocab) {
    if (n_vocab <= 0)
        throw SamplingError("n_vocab", "vocabulary size " + std::to_string(n_vocab) + " is not positive");
    check_range("temperature", p.temperature, 0, kMaxTemperature);
    check_range("top_k", p.top_k, 0, INT32_MAX);
    check_range("top_p", p.top_p, 0, 1);
    check_range("min_p", p.min_p, 0, 1);
    check_range("typical_p", p.typical_p, 0, 1);
    check_range("repeat_penalty", p.repeat_penalty, 0, kMaxRepeatPenalty, /*lo_open=*/true);
    check_range("frequency_penalty", p.frequency_penalty, -kMaxAbsPenalty, kMaxAbsPenalty);
    check_range("presence_penalty", p.presence_penalty, -kMaxAbsPenalty, kMaxAbsPenalty);
    check_range("penalty_last_n", p.penalty_last_n, 0, kMaxPenaltyWindow);
    check_range("min_keep", p.min_keep, 0, kMaxMinKeep);
    check_logit_bias(p.logit_bias, n_vocab);
}

}  // namespace strata::sampling
