// figures/figures.h — the status figures, declared once: every number and text that
// `strata status`, the `status` method (JSON) and GET /metrics (Prometheus) show.
// Owns: the table of figures (name, kind, unit, who reads it, help text, the Prometheus
// name where it predates the naming rule), and the snapshot that carries one value per
// figure. The engine fills its figures (Engine::status()), the daemon its own (connections
// and request counters) and renders the snapshot generically (daemon/protocol/views.cpp,
// daemon/host/metrics.cpp), the client formats the JSON by unit (client/strata/render.cpp).
// Adding a figure: one row here, one Snapshot::set where its value is known, and its name
// in strata-protocol(7) (tests/unit/figures_test.cpp checks the table and the manual).
// Must not touch: JSON, Prometheus text, sockets (daemon/), the engine's state.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace strata::figures {

enum class Kind {
    Counter,  // only grows (Prometheus counter; its metric name ends in _total)
    Gauge,    // goes up and down
    Info,     // a text (Prometheus: strata_NAME_info{NAME="text"} 1)
};
enum class Unit { None, Bytes, BytesPerSecond, Seconds, PerSecond, Ratio };
enum class Source { Engine, Daemon };  // who sets the value: Engine::status(), or the daemon's Server

struct Figure {
    std::string_view name;  // the JSON key and `strata status` label
    Kind kind;
    Unit unit;
    Source source;
    std::string_view help;
    std::string_view metric = {};  // the Prometheus name when it is not metric_name()'s rule
};

using enum Kind;
using enum Unit;
using enum Source;

// In the order `status` lists them.
inline constexpr Figure kFigures[] = {
    {"model", Info, None, Engine, "The loaded model (general.name)."},
    {"weights_mode", Info, None, Engine, "Where the weights are: resident or streamed."},
    {"memory_plan", Info, None, Engine, "The memory plan in one line."},
    {"threads", Gauge, None, Engine, "Compute threads."},
    {"uptime_s", Gauge, Seconds, Engine, "Seconds since the model was loaded.", "strata_uptime_seconds"},
    {"sessions", Gauge, None, Engine, "Named sessions."},
    {"requests_running", Gauge, None, Engine, "Generation requests being computed."},
    {"requests_queued", Gauge, None, Engine, "Generation requests waiting for the engine (queue depth)."},
    {"requests_total", Counter, None, Engine, "Generation requests accepted by the engine."},
    {"requests_failed", Counter, None, Engine, "Generation requests that ended with an error."},
    {"prompt_tokens_total", Counter, None, Engine, "Prompt tokens processed."},
    {"completion_tokens_total", Counter, None, Engine, "Tokens generated."},
    {"cached_tokens_total", Counter, None, Engine, "Prompt tokens served from the KV cache."},
    {"sessions_expired", Counter, None, Engine, "Sessions deleted after limits.session_idle_timeout."},
    {"messages_dropped", Counter, None, Engine, "Chat turns dropped to fit the context (limits.context_overflow)."},
    {"generate_tps_recent", Gauge, PerSecond, Engine, "Recent generation speed, all requests together.",
     "strata_generate_tokens_per_second"},
    {"prompt_tps_recent", Gauge, PerSecond, Engine, "Recent prompt processing speed.", "strata_prompt_tokens_per_second"},
    {"kv_bytes", Gauge, Bytes, Engine, "Bytes held by KV caches (a block shared by several counts once).",
     "strata_kv_cache_bytes"},
    {"kv_mapped_bytes", Gauge, Bytes, Engine,
     "Memory mapped for KV blocks (huge-page chunks; freed slots are kept for new blocks).", "strata_kv_cache_mapped_bytes"},
    {"kv_type", Info, None, Engine, "The KV cache's element type (memory.kv_type)."},
    {"kv_budget_bytes", Gauge, Bytes, Engine, "memory.kv_budget.", "strata_kv_cache_budget_bytes"},
    {"kv_bytes_running", Gauge, Bytes, Engine, "KV bytes of running requests.", "strata_kv_cache_running_bytes"},
    {"kv_bytes_idle", Gauge, Bytes, Engine, "KV bytes of idle sessions.", "strata_kv_cache_idle_bytes"},
    {"kv_bytes_prefix", Gauge, Bytes, Engine, "KV bytes held only by the prefix cache.", "strata_kv_cache_prefix_bytes"},
    {"kv_evictions", Counter, None, Engine, "Idle sessions' caches and prefix blocks evicted for the budget.",
     "strata_kv_cache_evictions_total"},
    {"prefix_cache_blocks", Gauge, None, Engine, "KV blocks the prefix cache can hand out."},
    {"prefix_cache_lookups", Counter, None, Engine, "Requests that looked for a cached prefix."},
    {"prefix_cache_hits", Counter, None, Engine, "Requests that reused cached prefix blocks."},
    {"rss_bytes", Gauge, Bytes, Engine, "Resident set size of stratad.", "strata_resident_memory_bytes"},
    {"forward_passes", Counter, None, Engine, "Forward passes run."},
    {"speculative_passes", Counter, None, Engine, "Decoding passes that verified guessed tokens (engine.speculative)."},
    {"speculative_guessed", Counter, None, Engine, "Guessed tokens verified."},
    {"speculative_accepted", Counter, None, Engine, "Guessed tokens the model accepted."},
    {"speculative_accept_rate", Gauge, Ratio, Engine, "Of the guessed tokens, the share accepted."},
    {"ngram_pool_entries", Gauge, None, Engine, "Token runs in the n-gram pool that requests share for guesses."},
    {"ngram_pool_bytes", Gauge, Bytes, Engine, "Memory the shared n-gram pool takes (at most 4096 runs)."},
    {"speculative_tokens_per_pass", Gauge, None, Engine, "Tokens generated per verifying pass (accepted guesses and the model's own)."},
    {"draft_model", Info, None, Engine, "The draft model's file (model.draft), or empty."},
    {"draft_passes", Counter, None, Engine, "Forward passes of the draft model (catching up and guessing)."},
    {"draft_time_share", Gauge, Ratio, Engine, "Of the time spent in forward passes, the share the draft model took."},
    {"batch_tokens", Gauge, None, Engine, "Tokens per forward pass (engine.batch_tokens)."},
    {"memory_budget_bytes", Gauge, Bytes, Engine, "The memory budget the plan was made for (it follows memory pressure)."},
    {"memory_budget_source", Info, None, Engine, "Where the memory budget came from."},
    {"weights_resident_bytes", Gauge, Bytes, Engine, "Weight bytes the plan keeps in memory."},
    {"memory_pressure_events", Counter, None, Engine, "Times the memory budget was lowered while serving (pressure, a lower limit)."},
    {"memory_released_bytes", Counter, Bytes, Engine, "KV and weight bytes given back for lowered budgets."},
    {"streamed_bytes_per_pass", Gauge, Bytes, Engine, "Weight bytes read from disk by every forward pass (0: resident)."},
    {"weights_bytes_read", Counter, Bytes, Engine, "Weight bytes read from disk by the streamer.",
     "strata_weights_read_bytes_total"},
    {"read_bytes_per_s", Gauge, BytesPerSecond, Engine, "Measured streaming read speed.",
     "strata_weights_read_bytes_per_second"},
    {"read_stall_s", Counter, Seconds, Engine, "Time forward passes waited for weight reads.",
     "strata_weights_read_stall_seconds_total"},
    {"read_retries", Counter, None, Engine, "Weight reads retried after an error or a short read.",
     "strata_weights_read_retries_total"},
    {"pass_bound_per_s", Gauge, PerSecond, Engine, "Forward passes per second the measured read speed allows."},
    {"weights_bytes_read_per_token", Gauge, Bytes, Engine,
     "Weight bytes read over the tokens computed (prompt and generated)."},
    {"expert_cache_bytes", Gauge, Bytes, Engine,
     "Memory of the expert cache (a streamed mixture of experts; 0 otherwise)."},
    {"expert_cache_hits", Counter, None, Engine, "Experts a forward pass found in the expert cache."},
    {"expert_cache_misses", Counter, None, Engine, "Experts read from disk into the expert cache."},
    {"expert_cache_hit_rate", Gauge, Ratio, Engine, "Share of the chosen experts found in the expert cache."},
    {"expert_bytes_read", Counter, Bytes, Engine,
     "Bytes read from disk for experts (part of strata_weights_read_bytes_total).", "strata_expert_read_bytes_total"},
    {"connections", Gauge, None, Daemon, "Open client connections."},
    {"connections_total", Counter, None, Daemon, "Client connections accepted."},
    {"connections_refused", Counter, None, Daemon,
     "Connections refused over server.max_connections or server.max_connections_per_user."},
    {"rpc_requests_total", Counter, None, Daemon, "Native protocol request lines received."},
    {"http_requests_total", Counter, None, Daemon, "HTTP requests received."},
    {"slow_readers_dropped", Counter, None, Daemon, "Connections dropped because their output buffer overflowed."},
    {"disconnect_cancels", Counter, None, Daemon, "Requests cancelled because their client went away."},
};
inline constexpr size_t kFigureCount = std::size(kFigures);

// The Prometheus name: the `metric` column, else "strata_" + name, counters ending in
// "_total" and texts in "_info".
std::string metric_name(const Figure& figure);
// The figure called `name`; null when the table has none (a newer daemon's).
const Figure* find_figure(std::string_view name);

// A figure named by a string literal: a name that is not in the table does not compile.
class Id {
public:
    consteval Id(const char* name) : index_(index_of(name)) {}  // NOLINT: implicit on purpose
    size_t index() const { return index_; }

private:
    static consteval size_t index_of(std::string_view name) {
        for (size_t i = 0; i < kFigureCount; ++i)
            if (kFigures[i].name == name)
                return i;
        throw "not a status figure";  // not a constant expression: the Id does not compile
    }
    size_t index_;
};

// A figure's value: an integer as its producer holds it (signed or not), a double, or a text.
using Value = std::variant<int64_t, uint64_t, double, std::string>;

// One value per figure of kFigures, in its order: 0, or "" for Info figures, until set.
class Snapshot {
public:
    Snapshot();
    template <std::integral T>
    void set(Id id, T value) {
        if constexpr (std::signed_integral<T>)
            values_[id.index()] = static_cast<int64_t>(value);
        else
            values_[id.index()] = static_cast<uint64_t>(value);
    }
    void set(Id id, double value);  // a value that is not finite becomes 0 (JSON has no NaN)
    void set(Id id, std::string value);

    double number(Id id) const;  // a number figure's value (0 for a text)
    const std::string& text(Id id) const;  // an Info figure's text
    const Value& value(size_t index) const { return values_[index]; }  // of kFigures[index]
    Value& value(size_t index) { return values_[index]; }

private:
    std::array<Value, kFigureCount> values_;
};

// A number value as a double (0 for a text).
double as_number(const Value& value);

}  // namespace strata::figures
