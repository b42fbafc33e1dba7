// tests/unit/figures_test.cpp — the table of status figures (lib/figures/figures.h) and its
// three renderings: the status JSON (daemon/protocol/views.cpp), GET /metrics
// (daemon/host/metrics.cpp) and `strata status` (client/strata/render.cpp). Checks that names
// are unique and well formed, that every figure appears in each rendering with the same
// value, that the names users knew before the table stay, and that strata-protocol(7)
// documents every figure.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "figures/figures.h"
#include "host/latency.h"
#include "host/metrics.h"
#include "protocol/views.h"
#include "render.h"

namespace json = boost::json;
namespace figures = strata::figures;
using figures::kFigures;

namespace {

// A value of the figure's kind, different for every figure: a text with characters
// Prometheus labels escape, whole numbers, and (every third number) a fraction.
figures::Value sample(size_t index) {
    const figures::Figure& f = kFigures[index];
    if (f.kind == figures::Kind::Info)
        return "text " + std::to_string(index) + " \"quoted\" back\\slash";
    if (index % 3 == 0)
        return 0.25 + static_cast<double>(index);
    if (index % 3 == 1)
        return static_cast<int64_t>(1000 + index);
    return static_cast<uint64_t>(1u << 20) * (index + 1);
}

figures::Snapshot sample_snapshot() {
    figures::Snapshot s;
    for (size_t i = 0; i < figures::kFigureCount; ++i)
        s.value(i) = sample(i);
    return s;
}

// The samples of a Prometheus text: "name{labels}" → value.
std::map<std::string, std::string> samples_of(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#')
            continue;
        const size_t space = line.rfind(' ');
        out[line.substr(0, space)] = line.substr(space + 1);
    }
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(figures_table)

BOOST_AUTO_TEST_CASE(names_are_unique_and_well_formed) {
    std::set<std::string> names, metrics;
    const std::regex json_name("[a-z][a-z0-9_]*"), metric_name("strata_[a-z0-9_]+");
    for (const figures::Figure& f : kFigures) {
        const std::string metric = figures::metric_name(f);
        BOOST_TEST(names.insert(std::string(f.name)).second, f.name << " twice");
        BOOST_TEST(metrics.insert(metric).second, metric << " twice");
        BOOST_TEST(std::regex_match(std::string(f.name), json_name), f.name);
        BOOST_TEST(std::regex_match(metric, metric_name), metric);
        BOOST_TEST(!f.help.empty(), f.name);
        if (f.kind == figures::Kind::Counter)
            BOOST_TEST(metric.ends_with("_total"), metric);
        BOOST_TEST(figures::find_figure(f.name) == &f);
    }
    BOOST_TEST(figures::find_figure("no_such_figure") == nullptr);
}

BOOST_AUTO_TEST_CASE(the_naming_rule) {
    BOOST_TEST(figures::metric_name(*figures::find_figure("requests_total")) == "strata_requests_total");
    BOOST_TEST(figures::metric_name(*figures::find_figure("requests_failed")) == "strata_requests_failed_total");
    BOOST_TEST(figures::metric_name(*figures::find_figure("memory_budget_bytes")) == "strata_memory_budget_bytes");
    BOOST_TEST(figures::metric_name(*figures::find_figure("kv_type")) == "strata_kv_type_info");
    BOOST_TEST(figures::metric_name(*figures::find_figure("kv_bytes")) == "strata_kv_cache_bytes");  // older than the rule
}

// Every JSON key and metric name stratad showed before the table (strata-protocol(7),
// README, dashboards) still names the same figure.
BOOST_AUTO_TEST_CASE(names_from_before_the_table_stay) {
    const std::map<std::string, std::string> before = {
        {"requests_total", "strata_requests_total"}, {"requests_failed", "strata_requests_failed_total"},
        {"requests_running", "strata_requests_running"}, {"requests_queued", "strata_requests_queued"},
        {"prompt_tokens_total", "strata_prompt_tokens_total"}, {"completion_tokens_total", "strata_completion_tokens_total"},
        {"cached_tokens_total", "strata_cached_tokens_total"}, {"sessions_expired", "strata_sessions_expired_total"},
        {"messages_dropped", "strata_messages_dropped_total"}, {"generate_tps_recent", "strata_generate_tokens_per_second"},
        {"prompt_tps_recent", "strata_prompt_tokens_per_second"}, {"forward_passes", "strata_forward_passes_total"},
        {"sessions", "strata_sessions"}, {"kv_bytes", "strata_kv_cache_bytes"},
        {"kv_mapped_bytes", "strata_kv_cache_mapped_bytes"}, {"kv_budget_bytes", "strata_kv_cache_budget_bytes"},
        {"kv_bytes_running", "strata_kv_cache_running_bytes"}, {"kv_bytes_idle", "strata_kv_cache_idle_bytes"},
        {"kv_bytes_prefix", "strata_kv_cache_prefix_bytes"}, {"kv_evictions", "strata_kv_cache_evictions_total"},
        {"prefix_cache_blocks", "strata_prefix_cache_blocks"}, {"prefix_cache_lookups", "strata_prefix_cache_lookups_total"},
        {"prefix_cache_hits", "strata_prefix_cache_hits_total"}, {"rss_bytes", "strata_resident_memory_bytes"},
        {"threads", "strata_threads"}, {"memory_budget_bytes", "strata_memory_budget_bytes"},
        {"streamed_bytes_per_pass", "strata_streamed_bytes_per_pass"}, {"weights_bytes_read", "strata_weights_read_bytes_total"},
        {"read_bytes_per_s", "strata_weights_read_bytes_per_second"},
        {"read_stall_s", "strata_weights_read_stall_seconds_total"}, {"read_retries", "strata_weights_read_retries_total"},
        {"expert_cache_bytes", "strata_expert_cache_bytes"}, {"expert_cache_hits", "strata_expert_cache_hits_total"},
        {"expert_cache_misses", "strata_expert_cache_misses_total"}, {"expert_bytes_read", "strata_expert_read_bytes_total"},
        {"uptime_s", "strata_uptime_seconds"}, {"connections", "strata_connections"},
        {"connections_total", "strata_connections_total"}, {"connections_refused", "strata_connections_refused_total"},
        {"rpc_requests_total", "strata_rpc_requests_total"}, {"http_requests_total", "strata_http_requests_total"},
        {"slow_readers_dropped", "strata_slow_readers_dropped_total"},
        {"disconnect_cancels", "strata_disconnect_cancels_total"},
        // JSON only before the table
        {"model", ""}, {"weights_mode", ""}, {"memory_plan", ""}, {"kv_type", ""}, {"batch_tokens", ""},
        {"memory_budget_source", ""}, {"pass_bound_per_s", ""}, {"weights_bytes_read_per_token", ""},
        {"expert_cache_hit_rate", ""}};
    for (const auto& [name, metric] : before) {
        const figures::Figure* f = figures::find_figure(name);
        BOOST_REQUIRE_MESSAGE(f != nullptr, name << " is gone");
        if (!metric.empty())
            BOOST_TEST(figures::metric_name(*f) == metric);
    }
}

BOOST_AUTO_TEST_CASE(snapshot_set_keeps_the_type_and_zeroes_what_is_not_finite) {
    figures::Snapshot s;
    BOOST_TEST(s.text("model").empty());
    BOOST_TEST(s.number("requests_total") == 0);
    s.set("requests_running", int32_t{-1});
    s.set("requests_total", uint64_t{1} << 60);
    s.set("read_bytes_per_s", std::nan(""));
    s.set("model", std::string("m"));
    BOOST_TEST(std::holds_alternative<int64_t>(s.value(figures::Id("requests_running").index())));
    BOOST_TEST(std::get<uint64_t>(s.value(figures::Id("requests_total").index())) == uint64_t{1} << 60);
    BOOST_TEST(s.number("read_bytes_per_s") == 0);
    BOOST_TEST(s.text("model") == "m");
}

// The status JSON, /metrics and `strata status` show every figure, with one value.
BOOST_AUTO_TEST_CASE(the_three_renderings_agree) {
    const figures::Snapshot snapshot = sample_snapshot();
    const json::object status = strata::daemon::status_json(snapshot);
    const std::string text = strata::daemon::prometheus_text(snapshot, strata::daemon::Latency());
    const std::map<std::string, std::string> metrics = samples_of(text);
    const std::string shown = strata::client::render_status(json::parse(json::serialize(status)).as_object());
    BOOST_TEST(status.size() == figures::kFigureCount);
    for (size_t i = 0; i < figures::kFigureCount; ++i) {
        const figures::Figure& f = kFigures[i];
        const std::string metric = figures::metric_name(f);
        BOOST_TEST_CONTEXT(f.name) {
            const json::value* value = status.if_contains(f.name);
            BOOST_REQUIRE(value != nullptr);
            BOOST_TEST(text.find("# HELP " + metric + " " + std::string(f.help) + "\n") != std::string::npos);
            const char* type = f.kind == figures::Kind::Counter ? " counter\n" : " gauge\n";
            BOOST_TEST(text.find("# TYPE " + metric + type) != std::string::npos);
            BOOST_TEST(("\n" + shown).find("\n" + std::string(f.name) + ":") != std::string::npos);
            if (const std::string* words = std::get_if<std::string>(&snapshot.value(i))) {
                BOOST_TEST(value->as_string() == *words);
                BOOST_TEST(metrics.count(metric + "{" + std::string(f.name) + "=\"text " + std::to_string(i) +
                                         " \\\"quoted\\\" back\\\\slash\"}") == 1u);
                BOOST_TEST(shown.find(" " + *words + "\n") != std::string::npos);
                continue;
            }
            const double number = figures::as_number(snapshot.value(i));
            BOOST_TEST(value->to_number<double>() == number);
            BOOST_TEST(value->is_double() == std::holds_alternative<double>(snapshot.value(i)));
            BOOST_REQUIRE(metrics.count(metric) == 1u);
            BOOST_TEST(std::stod(metrics.at(metric)) == number);
        }
    }
}

BOOST_AUTO_TEST_CASE(strata_status_shows_units) {
    figures::Snapshot s;
    s.set("kv_bytes", uint64_t{3} << 20);
    s.set("uptime_s", int64_t{12});
    s.set("generate_tps_recent", 12.5);
    s.set("expert_cache_hit_rate", 0.8);
    const std::string shown = strata::client::render_status(strata::daemon::status_json(s));
    BOOST_TEST(shown.find(" 3.0 MiB (3145728)\n") != std::string::npos, shown);
    BOOST_TEST(shown.find(" 12 s\n") != std::string::npos);
    BOOST_TEST(shown.find(" 12.50/s\n") != std::string::npos);
    BOOST_TEST(shown.find(" 80.0 %\n") != std::string::npos);
}

// strata-protocol(7) names every figure, and every metric name the rule does not give.
BOOST_AUTO_TEST_CASE(the_manual_documents_every_figure) {
    const char* source = std::getenv("STRATA_SOURCE_DIR");
    BOOST_REQUIRE(source != nullptr);
    const std::string manual = read_file(std::string(source) + "/man/strata-protocol.7");
    BOOST_REQUIRE(!manual.empty());
    auto documented = [&](std::string_view name) {
        return std::regex_search(manual, std::regex("\\b" + std::string(name) + "\\b"));
    };
    for (const figures::Figure& f : kFigures) {
        BOOST_TEST(documented(f.name), f.name << " is not in strata-protocol(7)");
        if (!f.metric.empty())
            BOOST_TEST(documented(f.metric), f.metric << " is not in strata-protocol(7)");
    }
}

BOOST_AUTO_TEST_SUITE_END()
