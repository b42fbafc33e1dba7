// daemon/host/metrics.cpp — Prometheus text format (see metrics.h).
#include "host/metrics.h"

#include <sstream>
#include <string_view>
#include <variant>

namespace strata::daemon {
namespace {

// A label value with backslash, double quote and line feed escaped.
std::string label_value(std::string_view text) {
    std::string out;
    for (const char c : text) {
        if (c == '\\' || c == '"')
            out += '\\';
        out += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return out;
}

class Exposition {
public:
    // One status figure: a counter or gauge with its value, or a text as NAME_info{NAME="text"} 1.
    void add(const figures::Figure& figure, const figures::Value& value) {
        const std::string name = figures::metric_name(figure);
        out_ << "# HELP " << name << ' ' << figure.help << "\n# TYPE " << name << ' '
             << (figure.kind == figures::Kind::Counter ? "counter" : "gauge") << '\n' << name;
        if (const std::string* text = std::get_if<std::string>(&value))
            out_ << '{' << figure.name << "=\"" << label_value(*text) << "\"} 1\n";
        else
            std::visit([this](const auto& number) { out_ << ' ' << number << '\n'; }, value);
    }
    // One histogram family: a series of cumulative buckets, _sum and _count per endpoint.
    void add_histogram(const char* name, const char* help, const Latency& latency, Measure measure) {
        out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " histogram\n";
        for (const Endpoint endpoint : kEndpoints) {
            const Histogram::Totals totals = latency.of(endpoint, measure).totals();
            const std::string label = std::string("endpoint=\"") + endpoint_name(endpoint) + '"';
            uint64_t cumulative = 0;
            for (size_t i = 0; i < Histogram::kBuckets; ++i) {
                cumulative += totals.buckets[i];
                out_ << name << "_bucket{" << label << ",le=\"";
                if (i < Histogram::kBounds.size())
                    out_ << Histogram::kBounds[i];
                else
                    out_ << "+Inf";
                out_ << "\"} " << cumulative << '\n';
            }
            out_ << name << "_sum{" << label << "} " << totals.sum << '\n'
                 << name << "_count{" << label << "} " << totals.count << '\n';
        }
    }
    std::string text() const { return out_.str(); }

private:
    std::ostringstream out_;
};

}  // namespace

std::string prometheus_text(const figures::Snapshot& status, const Latency& latency) {
    Exposition e;
    for (size_t i = 0; i < figures::kFigureCount; ++i)
        e.add(figures::kFigures[i], status.value(i));
    e.add_histogram("strata_time_to_first_token_seconds",
                    "Time from accepting a generation to its first piece of text (queue wait and prompt included).",
                    latency, Measure::TimeToFirstToken);
    e.add_histogram("strata_inter_token_latency_seconds", "Time between consecutive pieces of text of one generation.",
                    latency, Measure::InterToken);
    e.add_histogram("strata_queue_wait_seconds", "Time a generation waited for its first forward pass.", latency,
                    Measure::QueueWait);
    e.add_histogram("strata_request_duration_seconds", "Time from accepting a generation to its end.", latency,
                    Measure::RequestDuration);
    return e.text();
}

}  // namespace strata::daemon
