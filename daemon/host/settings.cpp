// daemon/host/settings.cpp — the keys of strata.conf and their values (see settings.h).
#include "host/settings.h"

#include "weights/budget.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "host/ini.h"

namespace strata::daemon {
namespace kv = strata::kv;
namespace {

// A value that does not parse; the caller adds where it came from and the key.
struct BadValue : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// A decimal integer, then the rest of the text (a unit) in `unit`.
uint64_t leading_number(std::string_view text, std::string& unit, const char* expected) {
    uint64_t value = 0;
    size_t i = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
        const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
        if (value > (UINT64_MAX - digit) / 10)
            throw BadValue(std::string("number too large, expected ") + expected);
        value = value * 10 + digit;
    }
    if (i == 0)
        throw BadValue(std::string("expected ") + expected);
    unit = lower(text.substr(i));
    while (!unit.empty() && unit.front() == ' ')
        unit.erase(0, 1);
    return value;
}

void check_range(uint64_t value, uint64_t lo, uint64_t hi, const std::string& shown_lo, const std::string& shown_hi) {
    if (value < lo || value > hi)
        throw BadValue("out of range, expected " + shown_lo + " to " + shown_hi);
}

int64_t parse_integer(std::string_view text, int64_t lo, int64_t hi) {
    std::string unit;
    const bool negative = !text.empty() && text.front() == '-';
    const uint64_t magnitude = leading_number(negative ? text.substr(1) : text, unit, "an integer");
    if (!unit.empty())
        throw BadValue("expected an integer, got '" + std::string(text) + "'");
    if (magnitude > static_cast<uint64_t>(INT64_MAX))
        throw BadValue("number too large");
    const int64_t value = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    if (value < lo || value > hi)
        throw BadValue("out of range, expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return value;
}

constexpr std::pair<std::string_view, unsigned> kSizeUnits[] = {
    {"", 0}, {"b", 0}, {"k", 10}, {"kb", 10}, {"kib", 10}, {"m", 20}, {"mb", 20}, {"mib", 20},
    {"g", 30}, {"gb", 30}, {"gib", 30}, {"t", 40}, {"tb", 40}, {"tib", 40},
};

std::string format_size(uint64_t bytes) {
    static constexpr const char* kSuffix[] = {"", "K", "M", "G", "T"};
    int unit = 0;
    while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++unit;
    }
    return std::to_string(bytes) + kSuffix[unit];
}

// "4096", "64K", "6G", "512MiB" (binary multiples).
uint64_t parse_size(std::string_view text, uint64_t lo, uint64_t hi) {
    std::string unit;
    const uint64_t number = leading_number(text, unit, "a size such as 4096, 512K, 64M or 6G");
    for (const auto& [name, shift] : kSizeUnits) {
        if (unit != name)
            continue;
        if (shift != 0 && number > (UINT64_MAX >> shift))
            throw BadValue("size too large");
        const uint64_t bytes = number << shift;
        check_range(bytes, lo, hi, format_size(lo), format_size(hi));
        return bytes;
    }
    throw BadValue("unknown size unit '" + unit + "' (use K, M, G or T)");
}

constexpr std::pair<std::string_view, uint64_t> kDurationUnits[] = {
    {"ms", 1}, {"", 1000}, {"s", 1000}, {"sec", 1000}, {"m", 60'000}, {"min", 60'000}, {"h", 3'600'000}, {"d", 86'400'000},
};

// The largest whole unit: "30d", "2h", "10s", "1500ms".
std::string format_duration(uint64_t ms) {
    for (const auto& [unit, scale] : {std::pair{"d", 86'400'000ull}, {"h", 3'600'000ull}, {"s", 1000ull}})
        if (ms != 0 && ms % scale == 0)
            return std::to_string(ms / scale) + unit;
    return ms == 0 ? "0s" : std::to_string(ms) + "ms";
}

// "10s", "1500ms", "2min", "1h", "30d"; a plain number is seconds.
uint64_t parse_duration_ms(std::string_view text, uint64_t max_ms) {
    std::string unit;
    const uint64_t number = leading_number(text, unit, "a duration such as 10s, 500ms, 2min or 7d");
    for (const auto& [name, scale] : kDurationUnits) {
        if (unit != name)
            continue;
        if (number > max_ms / scale)
            throw BadValue("out of range, expected at most " + format_duration(max_ms));
        return number * scale;
    }
    throw BadValue("unknown duration unit '" + unit + "' (use ms, s, min, h or d)");
}

// A duration in milliseconds that fits 32 bits (the transport's timers).
uint32_t parse_duration_ms32(std::string_view text, uint32_t max_ms) { return static_cast<uint32_t>(parse_duration_ms(text, max_ms)); }

bool parse_bool(std::string_view text) {
    const std::string value = lower(text);
    if (value == "yes" || value == "true" || value == "on" || value == "1")
        return true;
    if (value == "no" || value == "false" || value == "off" || value == "0")
        return false;
    throw BadValue("expected yes or no, got '" + std::string(text) + "'");
}

struct KeySpec {
    std::string_view name;  // "section.key"
    bool live;              // SIGHUP applies it
    std::function<void(Settings&, std::string_view)> parse;
    std::function<std::string(const Settings&)> show;
    std::function<void(const Settings&, Settings&)> copy;
};

// `access` is a generic lambda returning a reference to the field (of Settings or const
// Settings); `parse` turns text into the field's value, `show` the value into text.
template <typename Access, typename Parse, typename Show>
KeySpec key(std::string_view name, bool live, Access access, Parse parse, Show show) {
    return {name, live, [=](Settings& s, std::string_view v) { access(s) = parse(v); },
            [=](const Settings& s) { return show(access(s)); },
            [=](const Settings& from, Settings& to) { access(to) = access(from); }};
}

template <typename Access>
KeySpec integer_key(std::string_view name, bool live, int64_t lo, int64_t hi, Access access) {
    using Field = std::remove_cvref_t<decltype(access(std::declval<Settings&>()))>;
    return key(
        name, live, access, [=](std::string_view v) { return static_cast<Field>(parse_integer(v, lo, hi)); },
        [](Field v) { return std::to_string(v); });
}

// A probability: a decimal number from 0 to 1.
template <typename Access>
KeySpec probability_key(std::string_view name, bool live, Access access) {
    return key(
        name, live, access,
        [](std::string_view v) {
            const std::string text(v);
            char* end = nullptr;
            const float p = std::strtof(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() || !(p >= 0 && p <= 1))
                throw BadValue("expected a probability from 0 to 1, got '" + text + "'");
            return p;
        },
        [](float p) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%g", double(p));
            return std::string(buf);
        });
}

// A size; with `automatic`, "auto" (shown as such) means 0.
template <typename Access>
KeySpec size_key(std::string_view name, bool live, uint64_t lo, uint64_t hi, bool automatic, Access access) {
    return key(
        name, live, access,
        [=](std::string_view v) { return automatic && lower(v) == "auto" ? 0 : parse_size(v, lo, hi); },
        [=](uint64_t v) { return automatic && v == 0 ? std::string("auto") : format_size(v); });
}

template <typename Access>
KeySpec string_key(std::string_view name, bool live, Access access) {
    return key(
        name, live, access, [](std::string_view v) { return std::string(v); }, [](const std::string& v) { return v; });
}

std::vector<KeySpec> make_keys() {
    constexpr uint64_t kGiB = 1ull << 30;
    return {
        string_key("model.path", false, [](auto& s) -> auto& { return s.engine.model_path; }),
        string_key("model.draft", false, [](auto& s) -> auto& { return s.engine.draft_path; }),
        key(
            "model.pooling", false, [](auto& s) -> auto& { return s.engine.pooling; },
            [](std::string_view v) {
                if (v == "last") return model::Pooling::Last;
                if (v == "mean") return model::Pooling::Mean;
                throw BadValue("expected last or mean, got '" + std::string(v) + "'");
            },
            [](model::Pooling v) { return std::string(v == model::Pooling::Mean ? "mean" : "last"); }),

        string_key("server.socket", false, [](auto& s) -> auto& { return s.server.socket; }),
        key(
            "server.listen", false, [](auto& s) -> auto& { return s.server.listen; },
            [](std::string_view v) {
                try {
                    return parse_listen_address(v);
                } catch (const std::invalid_argument& e) {
                    throw BadValue(e.what());
                }
            },
            [](const ListenAddress& a) { return a.show(); }),
        string_key("server.api_keys_file", false, [](auto& s) -> auto& { return s.server.api_keys_file; }),
        key(
            "server.tcp_without_api_keys", false, [](auto& s) -> auto& { return s.server.tcp_without_api_keys; },
            parse_bool, [](bool v) { return std::string(v ? "yes" : "no"); }),
        key(
            "server.tcp_jsonrpc", false, [](auto& s) -> auto& { return s.server.tcp_jsonrpc; }, parse_bool,
            [](bool v) { return std::string(v ? "yes" : "no"); }),
        integer_key("server.max_connections", true, 1, 65536, [](auto& s) -> auto& { return s.server.max_connections; }),
        integer_key("server.max_connections_per_user", true, 1, 65536,
                    [](auto& s) -> auto& { return s.server.max_connections_per_user; }),
        key(
            "server.idle_timeout", true, [](auto& s) -> auto& { return s.server.idle_timeout_ms; },
            [](std::string_view v) {
                const uint32_t ms = parse_duration_ms32(v, 3'600'000);
                if (ms < 100)
                    throw BadValue("out of range, expected at least 100ms");
                return ms;
            },
            format_duration),
        size_key("server.max_request_bytes", true, 1024, 256ull << 20, false,
                 [](auto& s) -> auto& { return s.server.max_request_bytes; }),
        integer_key("server.max_json_depth", true, 2, 1000, [](auto& s) -> auto& { return s.server.max_json_depth; }),
        integer_key("server.max_requests_per_connection", true, 1, 4096,
                    [](auto& s) -> auto& { return s.server.max_requests_per_connection; }),
        size_key("server.max_output_buffer", true, 4096, 4 * kGiB, false,
                 [](auto& s) -> auto& { return s.server.max_output_buffer; }),
        key(
            "server.shutdown_grace", true, [](auto& s) -> auto& { return s.server.shutdown_grace_ms; },
            [](std::string_view v) { return parse_duration_ms32(v, 3'600'000); }, format_duration),

        key(
            "memory.budget", true, [](auto& s) -> auto& { return s.engine.memory.budget; },
            [](std::string_view v) {
                if (lower(v) == "auto") return std::string();
                try {
                    if (v.find('%') == std::string_view::npos && weights::parse_size(v, 0) < (64ull << 20))
                        throw BadValue("a budget under 64M cannot hold a model");
                    weights::parse_size(v, 100);
                } catch (const std::invalid_argument& e) {
                    throw BadValue(e.what());
                }
                return std::string(v);
            },
            [](const std::string& v) { return v.empty() ? std::string("auto") : v; }),
        key(
            "memory.mode", false, [](auto& s) -> auto& { return s.engine.memory.mode; },
            [](std::string_view v) {
                if (v != "auto" && v != "resident" && v != "streamed")
                    throw BadValue("expected auto, resident or streamed, got '" + std::string(v) + "'");
                return std::string(v);
            },
            [](const std::string& v) { return v; }),
        key(
            "memory.follow_pressure", true, [](auto& s) -> auto& { return s.memory_watch.follow_pressure; }, parse_bool,
            [](bool v) { return std::string(v ? "yes" : "no"); }),
        key(
            "memory.regrow_after", true, [](auto& s) -> auto& { return s.memory_watch.regrow_after_ms; },
            [](std::string_view v) { return parse_duration_ms32(v, 3'600'000); }, format_duration),
        key(
            "memory.lock", false, [](auto& s) -> auto& { return s.engine.memory.lock; }, parse_bool,
            [](bool v) { return std::string(v ? "yes" : "no"); }),
        size_key("memory.kv_budget", false, 1ull << 20, 1ull << 50, true,
                 [](auto& s) -> auto& { return s.engine.memory.kv_bytes; }),
        key(
            "memory.kv_type", false, [](auto& s) -> auto& { return s.engine.memory.kv_type; },
            [](std::string_view v) {
                const auto type = kv::kv_type_from_name(lower(v));
                if (!type) throw BadValue("expected f16 or q8_0, got '" + std::string(v) + "'");
                return *type;
            },
            [](kv::KvType v) { return std::string(kv::kv_type_name(v)); }),

        integer_key("limits.max_prompt_tokens", true, 1, 1 << 24,
                    [](auto& s) -> auto& { return s.engine.limits.max_prompt_tokens; }),
        integer_key("limits.max_tokens", true, 1, 1 << 24, [](auto& s) -> auto& { return s.engine.limits.max_tokens; }),
        integer_key("limits.default_max_tokens", true, 1, 1 << 24,
                    [](auto& s) -> auto& { return s.engine.limits.default_max_tokens; }),
        integer_key("limits.max_sessions", true, 0, 1 << 20, [](auto& s) -> auto& { return s.engine.limits.max_sessions; }),
        integer_key("limits.max_sessions_per_user", true, 0, 1 << 20,
                    [](auto& s) -> auto& { return s.engine.limits.max_sessions_per_user; }),
        integer_key("limits.max_queued", true, 1, 65536, [](auto& s) -> auto& { return s.engine.limits.max_queued; }),
        integer_key("limits.max_running_per_user", true, 1, 65536,
                    [](auto& s) -> auto& { return s.engine.limits.max_running_per_user; }),
        key(
            "limits.session_idle_timeout", true, [](auto& s) -> auto& { return s.engine.limits.session_idle_timeout_s; },
            [](std::string_view v) {
                const uint64_t ms = parse_duration_ms(v, 3650ull * 86'400'000);
                if (ms % 1000 != 0)
                    throw BadValue("expected whole seconds (0 = never)");
                return static_cast<int64_t>(ms / 1000);
            },
            [](int64_t s) { return format_duration(uint64_t(s) * 1000); }),
        key(
            "limits.request_timeout", true, [](auto& s) -> auto& { return s.engine.limits.request_timeout_ms; },
            [](std::string_view v) { return static_cast<int64_t>(parse_duration_ms(v, 30ull * 86'400'000)); },
            [](int64_t ms) { return format_duration(uint64_t(ms)); }),
        key(
            "limits.context_overflow", true, [](auto& s) -> auto& { return s.engine.limits.context_overflow; },
            [](std::string_view v) {
                if (v == "error") return engine::ContextOverflow::Error;
                if (v == "truncate_middle") return engine::ContextOverflow::TruncateMiddle;
                throw BadValue("expected error or truncate_middle, got '" + std::string(v) + "'");
            },
            [](engine::ContextOverflow v) { return std::string(v == engine::ContextOverflow::Error ? "error" : "truncate_middle"); }),

        integer_key("engine.threads", false, 0, 1024, [](auto& s) -> auto& { return s.engine.threads; }),
        key(
            "engine.context", false, [](auto& s) -> auto& { return s.engine.context; },
            [](std::string_view v) { return lower(v) == "auto" ? 0 : static_cast<int32_t>(parse_integer(v, 16, 1 << 24)); },
            [](int32_t v) { return v == 0 ? std::string("auto") : std::to_string(v); }),
        key(
            "engine.batch_tokens", false, [](auto& s) -> auto& { return s.engine.batch_tokens; },
            [](std::string_view v) { return lower(v) == "auto" ? 0 : static_cast<int32_t>(parse_integer(v, 1, 65536)); },
            [](int32_t v) { return v == 0 ? std::string("auto") : std::to_string(v); }),
        key(
            "engine.speculative", false, [](auto& s) -> auto& { return s.engine.speculative; },
            [](std::string_view v) {
                if (const auto mode = engine::speculative_from_name(lower(v))) return *mode;
                throw BadValue("expected off, ngram, draft or auto, got '" + std::string(v) + "'");
            },
            [](engine::Speculative v) { return std::string(engine::speculative_name(v)); }),
        integer_key("engine.draft_max", false, 1, engine::kMaxDraft, [](auto& s) -> auto& { return s.engine.draft_max; }),
        probability_key("engine.draft_p_min", false, [](auto& s) -> auto& { return s.engine.draft_p_min; }),
        string_key("engine.chat_template", false, [](auto& s) -> auto& { return s.engine.chat_template; }),

        string_key("sessions.state_dir", false, [](auto& s) -> auto& { return s.engine.state_dir; }),

        key(
            "log.level", true, [](auto& s) -> auto& { return s.log_level; },
            [](std::string_view v) {
                const auto level = log::parse_level(lower(v));
                if (!level)
                    throw BadValue("expected err, warning, notice, info or debug, got '" + std::string(v) + "'");
                return *level;
            },
            [](log::Level v) { return std::string(log::level_name(v)); }),
    };
}

const std::vector<KeySpec>& keys() {
    static const std::vector<KeySpec> table = make_keys();
    return table;
}

std::string known_keys_of(std::string_view section) {
    std::string list;
    for (const KeySpec& key : keys()) {
        const std::string_view name = key.name;
        if (name.substr(0, name.find('.')) != section)
            continue;
        list += (list.empty() ? "" : ", ") + std::string(name.substr(name.find('.') + 1));
    }
    return list;
}

std::string known_sections() {
    std::string list;
    for (const KeySpec& key : keys()) {
        const std::string section = "[" + std::string(key.name.substr(0, key.name.find('.'))) + "]";
        if (list.find(section) == std::string::npos)
            list += (list.empty() ? "" : " ") + section;
    }
    return list;
}

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The known key an unknown `name` ("section.key") most likely meant: one it begins
// (memory.kv -> memory.kv_budget), the same key in another section, or one a few
// typing mistakes away. "" when none is close.
std::string did_you_mean(const std::string& name) {
    const std::string_view key_part = std::string_view(name).substr(name.find('.') + 1);
    std::string best;
    size_t best_distance = std::max<size_t>(2, name.size() / 4) + 1;
    for (const KeySpec& key : keys()) {
        const std::string_view known = key.name;
        const std::string_view known_key = known.substr(known.find('.') + 1);
        size_t distance = edit_distance(name, known);
        if ((known.starts_with(name) && !key_part.empty()) || known_key == key_part)
            distance = 0;
        if (distance < best_distance) {
            best_distance = distance;
            best = std::string(known);
        }
    }
    return best;
}

// "section.key" as written in strata.conf: "[section] key".
std::string as_written(std::string_view name) {
    return "[" + std::string(name.substr(0, name.find('.'))) + "] " + std::string(name.substr(name.find('.') + 1));
}

// Sets `name` ("section.key") from `value`; `where` prefixes errors ("file:line" or an option).
void apply(Settings& settings, const std::string& name, std::string_view value, const std::string& where) {
    for (const KeySpec& key : keys()) {
        if (key.name != name)
            continue;
        try {
            key.parse(settings, value);
        } catch (const BadValue& bad) {
            throw ConfigError(where + ": " + name + " = \"" + std::string(value) + "\": " + bad.what());
        }
        return;
    }
    const std::string section = name.substr(0, name.find('.'));
    const std::string known = known_keys_of(section);
    const std::string guess = did_you_mean(name);
    const std::string hint = guess.empty() ? "" : "did you mean " + as_written(guess) + " (" + guess + ")? ";
    if (known.empty())
        throw ConfigError(where + ": unknown section [" + section + "] (" + hint + "known: " + known_sections() + ")");
    throw ConfigError(where + ": unknown key '" + name.substr(name.find('.') + 1) + "' in [" + section + "] (" + hint +
                      "known: " + known + ")");
}

std::optional<std::string> read_file(const std::string& path, bool required) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (!required && errno == ENOENT)
            return std::nullopt;
        throw ConfigError(path + ": cannot read the configuration file: " + std::strerror(errno));
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void check_together(const Settings& s) {
    if (s.engine.model_path.empty())
        throw ConfigError("no model: set [model] path in the configuration file or pass --model FILE");
    if (!s.server.listen.host.empty() && s.server.api_keys_file.empty() && !s.server.tcp_without_api_keys)
        throw ConfigError("server.listen = " + s.server.listen.show() +
                          " needs server.api_keys_file (the API keys TCP clients must present); to serve TCP "
                          "without keys, where anyone who reaches the port may use the daemon, set "
                          "server.tcp_without_api_keys = yes");
    if (s.engine.limits.default_max_tokens > s.engine.limits.max_tokens)
        throw ConfigError("limits.default_max_tokens (" + std::to_string(s.engine.limits.default_max_tokens) +
                          ") is larger than limits.max_tokens (" + std::to_string(s.engine.limits.max_tokens) + ")");
}

}  // namespace

std::string ListenAddress::show() const {
    if (host.empty())
        return "";
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

ListenAddress parse_listen_address(std::string_view text) {
    if (text.empty() || lower(text) == "off")
        return {};
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
        throw std::invalid_argument("expected ADDRESS:PORT such as 127.0.0.1:8080 or [::1]:8080");
    std::string host(text.substr(0, colon));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    else if (host.find(':') != std::string::npos)
        throw std::invalid_argument("an IPv6 address goes in brackets: [" + host + "]:PORT");
    unsigned char address[sizeof(in6_addr)];
    if (inet_pton(host.find(':') != std::string::npos ? AF_INET6 : AF_INET, host.c_str(), address) != 1)
        throw std::invalid_argument("'" + host + "' is not an IPv4 or IPv6 address (host names are not resolved)");
    try {
        return {host, static_cast<uint16_t>(parse_integer(text.substr(colon + 1), 0, 65535))};
    } catch (const BadValue& bad) {
        throw std::invalid_argument(std::string("port: ") + bad.what());
    }
}

std::string default_socket_path() {
    const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
    if (geteuid() != 0 && runtime_dir != nullptr && *runtime_dir != '\0')
        return std::string(runtime_dir) + "/strata.sock";
    return "/run/strata/strata.sock";
}

Settings load_settings(const std::string& path, bool required, const std::vector<Override>& overrides) {
    Settings settings;
    if (const auto text = read_file(path, required))
        for (const IniEntry& entry : parse_ini(*text, path))
            apply(settings, entry.section + "." + entry.key, entry.value, path + ":" + std::to_string(entry.line));
    for (const Override& o : overrides) {
        if (o.key.find('.') == std::string::npos)
            throw ConfigError(o.origin + ": expected section.key=value, got '" + o.key + "'");
        apply(settings, o.key, o.value, o.origin);
    }
    if (settings.server.socket.empty())
        settings.server.socket = default_socket_path();
    check_together(settings);
    return settings;
}

SettingsChange compare(const Settings& before, const Settings& after) {
    SettingsChange change;
    for (const KeySpec& key : keys()) {
        const std::string old_value = key.show(before), new_value = key.show(after);
        if (old_value == new_value)
            continue;
        (key.live ? change.live : change.restart)
            .push_back(std::string(key.name) + ": " + old_value + " -> " + new_value);
    }
    return change;
}

Settings merge_live(const Settings& running, const Settings& fresh) {
    Settings merged = running;
    for (const KeySpec& key : keys())
        if (key.live)
            key.copy(fresh, merged);
    return merged;
}

std::vector<std::string> describe(const Settings& settings) {
    std::vector<std::string> lines;
    for (const KeySpec& key : keys())
        lines.push_back(std::string(key.name) + " = " + key.show(settings));
    return lines;
}

}  // namespace strata::daemon
