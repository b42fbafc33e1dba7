// daemon/host/log.h — stratad's log: one line per message on stderr, each prefixed with the
// sd-daemon priority "<N>" that journald reads (no log files of our own), filtered by a
// level that SIGHUP may change. Owns: levels, their names, the filter, the line format.
// Must not touch: what is logged (callers decide).
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace strata::daemon::log {

// syslog priorities, as the "<N>" prefix carries them.
enum class Level { Error = 3, Warning = 4, Notice = 5, Info = 6, Debug = 7 };

std::optional<Level> parse_level(std::string_view name);  // err|error|warning|notice|info|debug
std::string_view level_name(Level level);

void set_level(Level level);
bool enabled(Level level);
void write(Level level, std::string_view message);  // thread-safe; one "<N>" line per text line

template <typename... Parts>
void message(Level level, const Parts&... parts) {
    if (!enabled(level))
        return;
    std::ostringstream text;
    (text << ... << parts);
    write(level, text.str());
}

template <typename... Parts> void error(const Parts&... parts) { message(Level::Error, parts...); }
template <typename... Parts> void warning(const Parts&... parts) { message(Level::Warning, parts...); }
template <typename... Parts> void notice(const Parts&... parts) { message(Level::Notice, parts...); }
template <typename... Parts> void info(const Parts&... parts) { message(Level::Info, parts...); }
template <typename... Parts> void debug(const Parts&... parts) { message(Level::Debug, parts...); }

}  // namespace strata::daemon::log
