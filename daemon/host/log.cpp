// daemon/host/log.cpp — the stderr log with "<N>" priority prefixes (see log.h).
#include "host/log.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <utility>

namespace strata::daemon::log {
namespace {

constexpr std::array<std::pair<std::string_view, Level>, 6> kNames{{
    {"err", Level::Error},
    {"error", Level::Error},
    {"warning", Level::Warning},
    {"notice", Level::Notice},
    {"info", Level::Info},
    {"debug", Level::Debug},
}};

std::atomic<int> g_level{static_cast<int>(Level::Info)};
std::mutex g_write_mutex;

}  // namespace

std::optional<Level> parse_level(std::string_view name) {
    for (const auto& [text, level] : kNames)
        if (text == name)
            return level;
    return std::nullopt;
}

std::string_view level_name(Level level) {
    for (const auto& [text, candidate] : kNames)
        if (candidate == level && text != "error")
            return text;
    return "info";
}

void set_level(Level level) { g_level.store(static_cast<int>(level)); }

bool enabled(Level level) { return static_cast<int>(level) <= g_level.load(); }

void write(Level level, std::string_view message) {
    std::string out;
    out.reserve(message.size() + 8);
    const std::string prefix = "<" + std::to_string(static_cast<int>(level)) + ">";
    size_t start = 0;
    while (start <= message.size()) {
        const size_t end = message.find('\n', start);
        const std::string_view line = message.substr(start, end == std::string_view::npos ? end : end - start);
        out += prefix;
        out += line;
        out += '\n';
        if (end == std::string_view::npos)
            break;
        start = end + 1;
    }
    std::lock_guard lock(g_write_mutex);
    std::fwrite(out.data(), 1, out.size(), stderr);
    std::fflush(stderr);
}

}  // namespace strata::daemon::log
