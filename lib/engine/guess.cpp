// engine/guess.cpp — prompt-lookup guesses and the adaptive guess length (see guess.h).
#include "engine/guess.h"

#include <algorithm>

namespace strata::engine {

std::vector<int32_t> lookup_ngram(std::span<const int32_t> tokens, int32_t max) {
    const auto size = static_cast<ptrdiff_t>(tokens.size());
    for (ptrdiff_t n = kNgramMax; n >= kNgramMin; --n) {
        if (size <= n) continue;
        const auto suffix = tokens.subspan(size_t(size - n));
        // Latest start i < size - n whose n tokens equal the suffix and that has a follower.
        for (ptrdiff_t i = size - n - 1; i >= 0; --i) {
            if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + i)) continue;
            const ptrdiff_t from = i + n, count = std::min<ptrdiff_t>(max, size - from);
            return {tokens.begin() + from, tokens.begin() + from + count};
        }
    }
    return {};
}

std::vector<int32_t> Speculation::guess(std::span<const int32_t> history, int32_t room) {
    if (max_ <= 0 || room <= 0) return {};
    if (pause_ > 0) {
        --pause_;
        return {};
    }
    return lookup_ngram(history, std::min(len_, room));
}

void Speculation::verified(int32_t guessed, int32_t accepted) {
    if (guessed <= 0) return;
    guessed_ += uint64_t(guessed);
    accepted_ += uint64_t(accepted);
    if (accepted == guessed) {
        len_ = std::min(max_, len_ * 2);
        next_pause_ = kFirstPause;
    } else if (accepted > 0) {
        len_ = std::max(1, accepted + 1);
        next_pause_ = kFirstPause;
    } else if (len_ > 1) {
        len_ = std::max(1, len_ / 2);
    } else {
        pause_ = next_pause_;
        next_pause_ = std::min(kLongestPause, next_pause_ * 2);
    }
}

}  // namespace strata::engine
