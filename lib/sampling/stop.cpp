// sampling/stop.cpp — StopMatcher: matching stop strings in streamed text, holding back
// possible starts of a stop string and incomplete UTF-8 characters.
// Owns: the matching and hold-back rules described in stop.h. Must not touch: tokens.
#include "sampling/stop.h"

#include <algorithm>

#include "sampling/params.h"
#include "utf8/utf8.h"

namespace strata::sampling {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

// The bytes at the end of s that begin a UTF-8 character without completing it.
size_t incomplete_utf8_tail(std::string_view s) {
    for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
        const auto c = static_cast<unsigned char>(s[s.size() - back]);
        if (is_continuation(c)) continue;
        const size_t len = utf8::sequence_length(c);
        return len > back ? back : 0;
    }
    return 0;
}

// The longest proper prefix of `stop` that s ends with.
size_t suffix_matching_prefix(std::string_view s, std::string_view stop) {
    const size_t longest = std::min(s.size(), stop.size() - 1);
    for (size_t len = longest; len > 0; --len)
        if (s.substr(s.size() - len) == stop.substr(0, len)) return len;
    return 0;
}

}  // namespace

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
    if (stops_.size() > kMaxStopStrings)
        throw SamplingError("stop", "too many stop strings: " + std::to_string(stops_.size()) +
                                        " (at most " + std::to_string(kMaxStopStrings) + ")");
    for (size_t i = 0; i < stops_.size(); ++i) {
        const std::string field = "stop[" + std::to_string(i) + "]";
        if (stops_[i].empty()) throw SamplingError(field, "stop string " + field + " is empty");
        if (stops_[i].size() > kMaxStopLength)
            throw SamplingError(field, "stop string " + field + " is " + std::to_string(stops_[i].size()) +
                                           " bytes long (at most " + std::to_string(kMaxStopLength) + ")");
        if (!utf8::is_valid(stops_[i]))
            throw SamplingError(field, "stop string " + field + " is not valid UTF-8");
    }
}

StopMatcher::Step StopMatcher::feed(std::string_view piece) {
    if (stop_) return {"", stop_};
    const size_t old_size = held_.size();
    held_.append(piece);
    if (auto match = first_match(old_size)) {
        Step step{held_.substr(0, match->begin), match->index};
        stop_ = match->index;
        held_.clear();
        return step;
    }
    const size_t emit = held_.size() - tail_to_hold();
    Step step{held_.substr(0, emit), std::nullopt};
    held_.erase(0, emit);
    return step;
}

std::string StopMatcher::finish() {
    std::string rest;
    rest.swap(held_);
    return rest;
}

// The held text had no complete stop string before the new bytes at new_from, so a match
// must end after new_from. Earliest end wins; at the same end, the longest (earliest begin).
std::optional<StopMatcher::Match> StopMatcher::first_match(size_t new_from) const {
    std::optional<Match> best;
    for (size_t i = 0; i < stops_.size(); ++i) {
        const std::string& stop = stops_[i];
        const size_t from = new_from >= stop.size() - 1 ? new_from - (stop.size() - 1) : 0;
        const size_t at = held_.find(stop, from);
        if (at == std::string::npos) continue;
        const Match m{at, at + stop.size(), i};
        if (!best || m.end < best->end || (m.end == best->end && m.begin < best->begin)) best = m;
    }
    return best;
}

size_t StopMatcher::tail_to_hold() const {
    size_t hold = incomplete_utf8_tail(held_);
    for (const std::string& stop : stops_) hold = std::max(hold, suffix_matching_prefix(held_, stop));
    return hold;
}

}  // namespace strata::sampling
