// daemon/host/metrics.cpp — Prometheus text format (see metrics.h).
#include "host/metrics.h"

#include <sstream>

#include "protocol/views.h"

namespace strata::daemon {
namespace {

class Exposition {
public:
    template <typename Number>
    void add(const char* name, const char* type, const char* help, Number value) {
        out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n' << name << ' '
             << value << '\n';
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

std::string prometheus_text(const engine::Status& s, const Counters& c, size_t open_connections, const Latency& latency) {
    Exposition e;
    e.add("strata_requests_total", "counter", "Generation requests accepted by the engine.", s.requests_total);
    e.add("strata_requests_failed_total", "counter", "Generation requests that ended with an error.", s.requests_failed);
    e.add("strata_requests_running", "gauge", "Generation requests being computed.", s.requests_running);
    e.add("strata_requests_queued", "gauge", "Generation requests waiting for the engine (queue depth).",
          s.requests_queued);
    e.add("strata_prompt_tokens_total", "counter", "Prompt tokens processed.", s.prompt_tokens_total);
    e.add("strata_completion_tokens_total", "counter", "Tokens generated.", s.completion_tokens_total);
    e.add("strata_cached_tokens_total", "counter", "Prompt tokens served from the KV cache.", s.cached_tokens_total);
    e.add("strata_sessions_expired_total", "counter", "Sessions deleted after limits.session_idle_timeout.", s.sessions_expired);
    e.add("strata_messages_dropped_total", "counter", "Chat turns dropped to fit the context (limits.context_overflow).",
          s.messages_dropped);
    e.add("strata_generate_tokens_per_second", "gauge", "Recent generation speed, all requests together.",
          finite(s.generate_tps_recent));
    e.add("strata_prompt_tokens_per_second", "gauge", "Recent prompt processing speed.", finite(s.prompt_tps_recent));
    e.add("strata_forward_passes_total", "counter", "Forward passes run.", s.forward_passes);
    e.add("strata_sessions", "gauge", "Named sessions.", s.sessions);
    e.add("strata_kv_cache_bytes", "gauge", "Bytes held by KV caches (a block shared by several counts once).", s.kv_bytes);
    e.add("strata_kv_cache_mapped_bytes", "gauge", "Memory mapped for KV blocks (huge-page chunks; freed slots are kept for new blocks).",
          s.kv_mapped_bytes);
    e.add("strata_kv_cache_budget_bytes", "gauge", "memory.kv_budget.", s.kv_budget_bytes);
    e.add("strata_kv_cache_running_bytes", "gauge", "KV bytes of running requests.", s.kv_bytes_running);
    e.add("strata_kv_cache_idle_bytes", "gauge", "KV bytes of idle sessions.", s.kv_bytes_idle);
    e.add("strata_kv_cache_prefix_bytes", "gauge", "KV bytes held only by the prefix cache.", s.kv_bytes_prefix);
    e.add("strata_kv_cache_evictions_total", "counter", "Idle sessions' caches and prefix blocks evicted for the budget.",
          s.kv_evictions);
    e.add("strata_prefix_cache_blocks", "gauge", "KV blocks the prefix cache can hand out.", s.prefix_cache_blocks);
    e.add("strata_prefix_cache_lookups_total", "counter", "Requests that looked for a cached prefix.", s.prefix_cache_lookups);
    e.add("strata_prefix_cache_hits_total", "counter", "Requests that reused cached prefix blocks.", s.prefix_cache_hits);
    e.add("strata_resident_memory_bytes", "gauge", "Resident set size of stratad.", s.rss_bytes);
    e.add("strata_threads", "gauge", "Compute threads.", s.threads);
    e.add("strata_memory_budget_bytes", "gauge", "The memory budget the plan was made for.", s.budget_bytes);
    e.add("strata_streamed_bytes_per_pass", "gauge", "Weight bytes read from disk by every forward pass (0: resident).",
          s.streamed_bytes_per_pass);
    e.add("strata_weights_read_bytes_total", "counter", "Weight bytes read from disk by the streamer.", s.weights_bytes_read);
    e.add("strata_weights_read_bytes_per_second", "gauge", "Measured streaming read speed.", finite(s.read_bytes_per_s));
    e.add("strata_weights_read_stall_seconds_total", "counter", "Time forward passes waited for weight reads.", finite(s.read_stall_s));
    e.add("strata_weights_read_retries_total", "counter", "Weight reads retried after an error or a short read.", s.read_retries);
    e.add("strata_expert_cache_bytes", "gauge", "Memory of the expert cache (a streamed mixture of experts; 0 otherwise).", s.expert_cache_bytes);
    e.add("strata_expert_cache_hits_total", "counter", "Experts a forward pass found in the expert cache.", s.expert_cache_hits);
    e.add("strata_expert_cache_misses_total", "counter", "Experts read from disk into the expert cache.", s.expert_cache_misses);
    e.add("strata_expert_read_bytes_total", "counter", "Bytes read from disk for experts (part of strata_weights_read_bytes_total).",
          s.expert_bytes_read);
    e.add("strata_uptime_seconds", "gauge", "Seconds since the model was loaded.", s.uptime_s);
    e.add("strata_connections", "gauge", "Open client connections.", open_connections);
    e.add("strata_connections_total", "counter", "Client connections accepted.", c.connections_total);
    e.add("strata_connections_refused_total", "counter", "Connections refused over server.max_connections.",
          c.connections_refused);
    e.add("strata_rpc_requests_total", "counter", "Native protocol request lines received.", c.rpc_requests_total);
    e.add("strata_http_requests_total", "counter", "HTTP requests received.", c.http_requests_total);
    e.add("strata_slow_readers_dropped_total", "counter", "Connections dropped because their output buffer overflowed.",
          c.slow_readers_dropped);
    e.add("strata_disconnect_cancels_total", "counter", "Requests cancelled because their client went away.",
          c.disconnect_cancels);
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
