// daemon/host/latency.cpp — latency histograms and the measuring sink (see latency.h).
#include "host/latency.h"

#include <algorithm>
#include <cmath>

namespace strata::daemon {
namespace {

size_t bucket_of(double seconds) {
    return static_cast<size_t>(std::lower_bound(Histogram::kBounds.begin(), Histogram::kBounds.end(), seconds) -
                               Histogram::kBounds.begin());
}

int64_t epoch_of(LatencyClock::time_point now) {
    return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count() /
           std::chrono::duration_cast<std::chrono::seconds>(Histogram::kSlot).count();
}

// The q-quantile of `count` observations spread over `buckets`, within [min, max].
double quantile(const std::array<uint64_t, Histogram::kBuckets>& buckets, uint64_t count, double q, double min,
                double max) {
    const double rank = q * static_cast<double>(count);
    uint64_t below = 0;
    size_t i = 0;
    while (i + 1 < buckets.size() && static_cast<double>(below + buckets[i]) < rank)
        below += buckets[i++];
    const double lower = i == 0 ? 0 : Histogram::kBounds[i - 1];
    const double upper = i < Histogram::kBounds.size() ? Histogram::kBounds[i] : max;
    const double within = buckets[i] == 0 ? 1 : (rank - static_cast<double>(below)) / static_cast<double>(buckets[i]);
    return std::clamp(lower + (upper - lower) * within, min, max);
}

class TimedSink final : public engine::Sink {
public:
    TimedSink(std::shared_ptr<engine::Sink> inner, std::shared_ptr<Latency> latency, Endpoint endpoint)
        : inner_(std::move(inner)), latency_(std::move(latency)), endpoint_(endpoint), submitted_(LatencyClock::now()) {}

    void on_text(std::string_view piece) override {
        const auto now = LatencyClock::now();
        if (!last_text_)
            record(Measure::TimeToFirstToken, now - submitted_, now);
        else
            record(Measure::InterToken, now - *last_text_, now);
        last_text_ = now;
        inner_->on_text(piece);
    }

    void on_done(const engine::Result& result) override {
        const auto now = LatencyClock::now();
        record(Measure::QueueWait, std::chrono::duration<double, std::milli>(result.timings.queued_ms), now);
        record(Measure::RequestDuration, now - submitted_, now);
        inner_->on_done(result);
    }

    void on_logprobs(const engine::TokenLogprobs& logprobs) override { inner_->on_logprobs(logprobs); }
    void on_error(const engine::EngineError& error) override { inner_->on_error(error); }

private:
    template <typename Duration>
    void record(Measure measure, Duration elapsed, LatencyClock::time_point now) {
        latency_->of(endpoint_, measure).observe(std::chrono::duration<double>(elapsed).count(), now);
    }

    std::shared_ptr<engine::Sink> inner_;
    std::shared_ptr<Latency> latency_;
    Endpoint endpoint_;
    LatencyClock::time_point submitted_;
    std::optional<LatencyClock::time_point> last_text_;
};

}  // namespace

void Histogram::observe(double seconds, LatencyClock::time_point now) {
    if (!std::isfinite(seconds) || seconds < 0)
        seconds = 0;
    const size_t bucket = bucket_of(seconds);
    const int64_t epoch = epoch_of(now);
    std::lock_guard lock(mu_);
    ++totals_.buckets[bucket];
    totals_.sum += seconds;
    ++totals_.count;
    Slot& slot = slots_[static_cast<size_t>(epoch) % kSlots];
    if (slot.epoch != epoch)
        slot = Slot{epoch, {}, 0, seconds, seconds};
    ++slot.buckets[bucket];
    ++slot.count;
    slot.min = std::min(slot.min, seconds);
    slot.max = std::max(slot.max, seconds);
}

Histogram::Totals Histogram::totals() const {
    std::lock_guard lock(mu_);
    return totals_;
}

Histogram::Recent Histogram::recent(LatencyClock::time_point now) const {
    const int64_t epoch = epoch_of(now);
    std::array<uint64_t, kBuckets> buckets{};
    Recent recent;
    double min = 0, max = 0;
    {
        std::lock_guard lock(mu_);
        for (const Slot& slot : slots_) {
            if (slot.count == 0 || slot.epoch <= epoch - static_cast<int64_t>(kSlots) || slot.epoch > epoch)
                continue;
            for (size_t i = 0; i < kBuckets; ++i)
                buckets[i] += slot.buckets[i];
            min = recent.count == 0 ? slot.min : std::min(min, slot.min);
            max = recent.count == 0 ? slot.max : std::max(max, slot.max);
            recent.count += slot.count;
        }
    }
    if (recent.count == 0)
        return recent;
    recent.p50 = quantile(buckets, recent.count, 0.50, min, max);
    recent.p90 = quantile(buckets, recent.count, 0.90, min, max);
    recent.p99 = quantile(buckets, recent.count, 0.99, min, max);
    return recent;
}

const char* endpoint_name(Endpoint endpoint) {
    switch (endpoint) {
    case Endpoint::Generate: return "generate";
    case Endpoint::Completions: return "completions";
    case Endpoint::ChatCompletions: return "chat_completions";
    case Endpoint::Embeddings: return "embeddings";
    }
    return "generate";
}

const char* measure_name(Measure measure) {
    switch (measure) {
    case Measure::TimeToFirstToken: return "time_to_first_token";
    case Measure::InterToken: return "inter_token";
    case Measure::QueueWait: return "queue_wait";
    case Measure::RequestDuration: return "request_duration";
    }
    return "request_duration";
}

std::shared_ptr<engine::Sink> timed_sink(std::shared_ptr<engine::Sink> inner, std::shared_ptr<Latency> latency,
                                         Endpoint endpoint) {
    return std::make_shared<TimedSink>(std::move(inner), std::move(latency), endpoint);
}

}  // namespace strata::daemon
