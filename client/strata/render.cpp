// client/strata/render.cpp — text renderings of daemon answers.
#include "render.h"

#include <pwd.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <utility>
#include <vector>

#include "figures/figures.h"

namespace strata::client {

namespace json = boost::json;

namespace {

std::string format(const char* fmt, double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, x);
    return buf;
}

std::string human_bytes(double bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    return u == 0 ? format("%.0f bytes", bytes) : format("%.1f ", bytes) + units[u];
}

double number(const json::value* v) {
    if (v == nullptr) return 0;
    if (v->is_double()) return v->get_double();
    if (v->is_int64()) return static_cast<double>(v->get_int64());
    if (v->is_uint64()) return static_cast<double>(v->get_uint64());
    return 0;
}

double number_at(const json::object& o, std::string_view key) { return number(o.if_contains(key)); }

std::string scalar(const json::value& v) {
    if (v.is_string()) return std::string(v.get_string());
    if (v.is_bool()) return v.get_bool() ? "yes" : "no";
    if (v.is_double()) return format("%.2f", v.get_double());
    if (v.is_null()) return "-";
    return json::serialize(v);
}

// A value on one line: scalars as they are, arrays joined by ", ", objects as "k v, k v".
std::string inline_value(const json::value& v) {
    std::string out;
    if (v.is_array()) {
        for (const json::value& item : v.get_array()) out += (out.empty() ? "" : ", ") + inline_value(item);
    } else if (v.is_object()) {
        for (const auto& kv : v.get_object())
            out += (out.empty() ? "" : ", ") + std::string(kv.key()) + " " + inline_value(kv.value());
    } else {
        out = scalar(v);
    }
    return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

void render_fields_into(std::string& out, const json::object& fields, const std::string& indent) {
    size_t width = 0;
    for (const auto& kv : fields) width = std::max(width, kv.key().size());
    for (const auto& kv : fields) {
        std::string name = std::string(kv.key()) + ":";
        name.resize(width + 2, ' ');
        if (kv.value().is_object() && !kv.value().get_object().empty()) {
            out += indent + std::string(kv.key()) + ":\n";
            render_fields_into(out, kv.value().get_object(), indent + "  ");
            continue;
        }
        std::string value = inline_value(kv.value());
        if (ends_with(kv.key(), "_bytes") && kv.value().is_number())
            value = human_bytes(number(&kv.value())) + " (" + value + ")";
        out += indent + name + value + "\n";
    }
}

std::string local_time(double unix_seconds) {
    if (unix_seconds <= 0) return "-";
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

std::string user_name(uint32_t uid) {
    if (const passwd* pw = ::getpwuid(uid); pw != nullptr) return pw->pw_name;
    return std::to_string(uid);
}

// A session's owner: its API key user ("user", on TCP), else the name of its uid.
std::string owner_of(const json::object& session) {
    if (const json::value* user = session.if_contains("user"); user != nullptr && user->is_string())
        return std::string(user->get_string()) + " (API key)";
    return user_name(static_cast<uint32_t>(number_at(session, "uid")));
}

std::string table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> widths;
    for (const auto& row : rows)
        for (size_t c = 0; c < row.size(); ++c) {
            if (widths.size() <= c) widths.push_back(0);
            widths[c] = std::max(widths[c], row[c].size());
        }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (size_t c = 0; c < row.size(); ++c) {
            line += row[c];
            if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
        }
        out += line + "\n";
    }
    return out;
}

std::string text_at(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v == nullptr ? "-" : scalar(*v);
}

// A duration in seconds as "850 us", "12.3 ms" or "1.25 s"; "-" when there is none.
std::string duration_text(const json::value* v) {
    if (v == nullptr || !v->is_number()) return "-";
    const double s = number(v);
    if (s < 0.001) return format("%.0f us", s * 1e6);
    if (s < 1) return format("%.1f ms", s * 1e3);
    return format("%.2f s", s);
}

// The status's "latency": a table of percentiles per endpoint and measure.
std::string render_latency(const json::object& latency) {
    const std::string window = format("%.0f", number_at(latency, "window_s"));
    const json::value* e = latency.if_contains("endpoints");
    if (e == nullptr || !e->is_object() || e->get_object().empty())
        return "latency: no requests in the last " + window + " s\n";
    constexpr std::pair<std::string_view, const char*> kMeasures[] = {
        {"time_to_first_token", "first token"}, {"inter_token", "between tokens"},
        {"queue_wait", "queue wait"}, {"request_duration", "whole request"}};
    std::vector<std::vector<std::string>> rows{{"latency, last " + window + " s:", "", "COUNT", "P50", "P90", "P99"}};
    for (const auto& endpoint : e->get_object()) {
        if (!endpoint.value().is_object()) continue;
        std::string name = "  " + std::string(endpoint.key());
        for (const auto& [key, label] : kMeasures) {
            const json::value* m = endpoint.value().get_object().if_contains(key);
            if (m == nullptr || !m->is_object()) continue;
            const json::object& measure = m->get_object();
            rows.push_back({std::exchange(name, ""), label, text_at(measure, "count"), duration_text(measure.if_contains("p50")),
                            duration_text(measure.if_contains("p90")), duration_text(measure.if_contains("p99"))});
        }
    }
    return table(rows);
}

// A status figure's number as its unit reads (figures.h): "1.5 MiB (1572864)", "12 s", "80.0 %".
std::string figure_text(const figures::Figure& figure, const json::value& v) {
    const double x = number(&v);
    switch (figure.unit) {
    case figures::Unit::Bytes: return human_bytes(x) + " (" + scalar(v) + ")";
    case figures::Unit::BytesPerSecond: return human_bytes(x) + "/s";
    case figures::Unit::Seconds: return scalar(v) + " s";
    case figures::Unit::PerSecond: return scalar(v) + "/s";
    case figures::Unit::Ratio: return format("%.1f %%", 100 * x);
    case figures::Unit::None: break;
    }
    return scalar(v);
}

}  // namespace

std::string render_status(const json::object& status) {
    json::object fields;
    for (const auto& kv : status) {
        const figures::Figure* figure = figures::find_figure(kv.key());
        if (kv.key() != "latency")
            fields[kv.key()] = figure != nullptr && kv.value().is_number() ? json::value(figure_text(*figure, kv.value()))
                                                                           : kv.value();
    }
    std::string out = render_fields(fields);
    if (const json::value* latency = status.if_contains("latency"); latency != nullptr && latency->is_object())
        out += render_latency(latency->get_object());
    return out;
}

std::string render_fields(const json::object& fields) {
    std::string out;
    render_fields_into(out, fields, "");
    return out;
}

std::string render_session_table(const json::array& sessions, uint32_t my_uid) {
    bool others = false;
    for (const json::value& s : sessions)
        if (s.is_object() && number_at(s.get_object(), "uid") != my_uid) others = true;
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"NAME", "TOKENS", "MESSAGES", "CACHED", "BUSY", "LAST USED"});
    if (others) rows.back().insert(rows.back().begin() + 1, "OWNER");
    for (const json::value& v : sessions) {
        if (!v.is_object()) continue;
        const json::object& s = v.get_object();
        rows.push_back({text_at(s, "name"), text_at(s, "tokens"), text_at(s, "messages"), text_at(s, "cached"),
                        text_at(s, "busy"), local_time(number_at(s, "last_used"))});
        if (others) rows.back().insert(rows.back().begin() + 1, owner_of(s));
    }
    return table(rows);
}

std::string render_session(const json::object& info) {
    json::object fields;
    for (const auto& kv : info) {
        if (kv.key() == "conversation" || kv.key() == "text") continue;
        if (kv.key() == "created" || kv.key() == "last_used") fields[kv.key()] = local_time(number(&kv.value()));
        else if (kv.key() == "uid") fields["owner"] = owner_of(info);
        else if (kv.key() != "user") fields[kv.key()] = kv.value();
    }
    std::string out = render_fields(fields);
    if (const json::value* c = info.if_contains("conversation"); c != nullptr && c->is_array()) {
        for (const json::value& m : c->get_array()) {
            if (!m.is_object()) continue;
            out += "\n--- " + text_at(m.get_object(), "role") + "\n" + text_at(m.get_object(), "content") + "\n";
        }
    }
    if (const json::value* t = info.if_contains("text"); t != nullptr && t->is_string() && !t->get_string().empty())
        out += "\n--- text\n" + std::string(t->get_string()) + "\n";
    return out;
}

std::string render_speed(const json::object& result) {
    const json::value* u = result.if_contains("usage");
    const json::value* t = result.if_contains("timings");
    const json::object usage = u != nullptr && u->is_object() ? u->get_object() : json::object();
    const json::object timings = t != nullptr && t->is_object() ? t->get_object() : json::object();
    return format("prompt: %.0f tokens", number_at(usage, "prompt_tokens")) +
           format(" (%.0f cached)", number_at(usage, "cached_tokens")) +
           format(", %.1f ms", number_at(timings, "prompt_ms")) +
           format(", %.1f tokens/s", number_at(timings, "prompt_tps")) +
           format("; generation: %.0f tokens", number_at(usage, "completion_tokens")) +
           format(", %.1f ms", number_at(timings, "generate_ms")) +
           format(", %.1f tokens/s", number_at(timings, "generate_tps")) +
           format("; guesses accepted: %.0f", number_at(timings, "speculative_accepted")) +
           format(" of %.0f", number_at(timings, "speculative_guessed")) + "\n";
}

}  // namespace strata::client
