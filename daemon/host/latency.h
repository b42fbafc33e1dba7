// daemon/host/latency.h — how long requests take, as users feel it: one Histogram type
// (fixed buckets in seconds, counted since start for Prometheus, and the last five minutes
// kept in 30-second slots for percentiles), four of them per endpoint (time to first token,
// the time between streamed pieces of text, queue wait, whole request), and the Sink wrapper
// that measures a request on the engine thread as its output is produced.
// Thread-safe: observed on the engine thread, read on the io_context thread.
// Owns: bucket bounds, the window, percentile estimates. Must not touch: the Prometheus text
// (metrics.cpp), JSON (views.cpp), sockets.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/engine.h"

namespace strata::daemon {

using LatencyClock = std::chrono::steady_clock;

class Histogram {
public:
    // Upper bounds of the buckets in seconds; a last bucket (+Inf) takes the rest.
    static constexpr std::array<double, 29> kBounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                    0.05,   0.075,   0.1,    0.15,  0.2,    0.3,   0.5,  0.75,
                                                    1,      1.5,     2,      3,     5,      7.5,   10,   20,
                                                    30,     60,      120,    300,   600};
    static constexpr size_t kBuckets = kBounds.size() + 1;
    static constexpr auto kSlot = std::chrono::seconds(30);
    static constexpr size_t kSlots = 10;  // the recent window: the last kSlots * kSlot (5 minutes)
    static constexpr auto kWindow = kSlots * kSlot;

    void observe(double seconds, LatencyClock::time_point now = LatencyClock::now());

    // Since start: observations per bucket (not cumulative), their sum and count.
    struct Totals {
        std::array<uint64_t, kBuckets> buckets{};
        double sum = 0;
        uint64_t count = 0;
    };
    Totals totals() const;

    // The recent window: percentiles estimated from the buckets as Prometheus's
    // histogram_quantile does (linear within a bucket), kept within the smallest and
    // largest value observed; absent when nothing was observed.
    struct Recent {
        uint64_t count = 0;
        std::optional<double> p50, p90, p99;
    };
    Recent recent(LatencyClock::time_point now = LatencyClock::now()) const;

private:
    struct Slot {
        int64_t epoch = -1;  // which kSlot-long period since the clock's epoch it counts
        std::array<uint64_t, kBuckets> buckets{};
        uint64_t count = 0;
        double min = 0, max = 0;
    };

    mutable std::mutex mu_;
    Totals totals_;
    std::array<Slot, kSlots> slots_;
};

enum class Endpoint { Generate, Completions, ChatCompletions, Embeddings };
inline constexpr std::array<Endpoint, 4> kEndpoints{Endpoint::Generate, Endpoint::Completions, Endpoint::ChatCompletions,
                                                    Endpoint::Embeddings};
// "generate", "completions", "chat_completions", "embeddings" (JSON-RPC embed and /v1/embeddings)
const char* endpoint_name(Endpoint endpoint);

enum class Measure { TimeToFirstToken, InterToken, QueueWait, RequestDuration };
inline constexpr std::array<Measure, 4> kMeasures{Measure::TimeToFirstToken, Measure::InterToken, Measure::QueueWait,
                                                  Measure::RequestDuration};
const char* measure_name(Measure measure);  // "time_to_first_token", "inter_token", "queue_wait", "request_duration"

// Every endpoint's four histograms.
class Latency {
public:
    Histogram& of(Endpoint endpoint, Measure measure) { return histograms_[index(endpoint, measure)]; }
    const Histogram& of(Endpoint endpoint, Measure measure) const { return histograms_[index(endpoint, measure)]; }

private:
    static size_t index(Endpoint e, Measure m) { return static_cast<size_t>(e) * kMeasures.size() + static_cast<size_t>(m); }
    std::array<Histogram, kEndpoints.size() * kMeasures.size()> histograms_;
};

// `inner` with the request's latencies recorded in `latency`, from now (call it just before
// Engine::submit): the first piece of text gives the time to first token, each later one
// the time since the one before, and the end (on_done) the queue wait and the duration.
// A request that fails (on_error) is not measured.
std::shared_ptr<engine::Sink> timed_sink(std::shared_ptr<engine::Sink> inner, std::shared_ptr<Latency> latency,
                                         Endpoint endpoint);

}  // namespace strata::daemon
