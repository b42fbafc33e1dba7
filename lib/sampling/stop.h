// sampling/stop.h — stop strings over streamed text.
// Owns: StopMatcher, which is fed the generated text piece by piece (pieces may end anywhere,
// even inside a UTF-8 character) and says what can be shown now: it holds back any tail that
// could still become a stop string, and any incomplete UTF-8 character at the end. When a stop
// string completes, the text before it is released and the rest is dropped. The result does
// not depend on how the text was cut into pieces: the match is the one that ends first, and
// among those ending at the same byte the longest. Must not touch: tokens, detokenizing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::sampling {

inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopLength = 256;  // bytes

class StopMatcher {
public:
    // Throws SamplingError (field "stop" or "stop[i]") for more than kMaxStopStrings strings,
    // an empty one, one longer than kMaxStopLength bytes, or one that is not valid UTF-8.
    explicit StopMatcher(std::vector<std::string> stops);

    struct Step {
        std::string text;            // to emit now
        std::optional<size_t> stop;  // set once a stop string matched: its index in stops()
    };

    // Adds generated text. After a stop, further text is ignored (empty text, same stop).
    Step feed(std::string_view piece);

    // The end of the stream: everything still held back (nothing after a stop).
    std::string finish();

    std::optional<size_t> stopped() const { return stop_; }
    std::string_view held() const { return held_; }
    const std::vector<std::string>& stops() const { return stops_; }

private:
    struct Match {
        size_t begin, end, index;
    };
    std::optional<Match> first_match(size_t new_from) const;
    size_t tail_to_hold() const;

    std::vector<std::string> stops_;
    std::string held_;
    std::optional<size_t> stop_;
};

}  // namespace strata::sampling
