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

uint64_t NgramPool::key(const int32_t* gram) {
    uint64_t h = 1469598103934665603ull;
    for (int32_t i = 0; i < kPoolGram; ++i) h = (h ^ uint32_t(gram[i])) * 1099511628211ull;
    return h;
}

void NgramPool::learn(std::span<const int32_t> tokens, size_t from) {
    if (max_entries_ == 0) return;
    for (size_t i = from; i + kPoolGram < tokens.size(); ++i) {
        const uint64_t k = key(&tokens[i]);
        const auto follow = tokens.subspan(i + kPoolGram, std::min<size_t>(kMaxFollow, tokens.size() - i - kPoolGram));
        Entry e{{}, {follow.begin(), follow.end()}};
        std::copy_n(&tokens[i], kPoolGram, e.gram.begin());
        const auto [it, fresh] = map_.insert_or_assign(k, std::move(e));
        if (!fresh) continue;
        order_.push_back(k);
        if (map_.size() > max_entries_) {
            map_.erase(order_.front());
            order_.pop_front();
        }
    }
}

std::vector<int32_t> NgramPool::lookup(std::span<const int32_t> tokens, int32_t max) const {
    if (tokens.size() < size_t(kPoolGram)) return {};
    const int32_t* gram = &tokens[tokens.size() - kPoolGram];
    const auto it = map_.find(key(gram));
    if (it == map_.end() || !std::equal(it->second.gram.begin(), it->second.gram.end(), gram)) return {};
    const auto& f = it->second.follow;
    return {f.begin(), f.begin() + std::min<ptrdiff_t>(max, ptrdiff_t(f.size()))};
}

Speculation::Guess Speculation::guess(std::span<const int32_t> history, int32_t room, const NgramPool& pool) {
    if (max_ <= 0 || room <= 0) return {};
    if (pause_ > 0) {
        --pause_;
        return {};
    }
    const int32_t n = std::min(len_, room);
    if (ngram_) {
        if (std::vector<int32_t> own = lookup_ngram(history, n); !own.empty()) return {std::move(own)};
        if (std::vector<int32_t> pooled = pool.lookup(history, n); !pooled.empty()) return {std::move(pooled)};
    }
    return {{}, draft_ ? n : 0};
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
