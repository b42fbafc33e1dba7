// daemon/host/ini.cpp — INI syntax of strata.conf (see ini.h).
#include "host/ini.h"

#include <algorithm>

namespace strata::daemon {
namespace {

std::string_view trim(std::string_view text) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!text.empty() && blank(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && blank(text.back()))
        text.remove_suffix(1);
    return text;
}

std::string_view unquote(std::string_view value) {
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        return value.substr(1, value.size() - 2);
    return value;
}

bool is_name(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

[[noreturn]] void fail(const std::string& file, int line, const std::string& what) {
    throw ConfigError(file + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

std::vector<IniEntry> parse_ini(std::string_view text, const std::string& file) {
    std::vector<IniEntry> entries;
    std::string section;
    int line_no = 0;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = std::min(text.find('\n', start), text.size());
        const std::string_view line = trim(text.substr(start, end - start));
        start = end + 1;
        ++line_no;
        if (line.empty() || line.front() == '#' || line.front() == ';')
            continue;
        if (line.front() == '[') {
            if (line.back() != ']' || !is_name(trim(line.substr(1, line.size() - 2))))
                fail(file, line_no, "malformed section header '" + std::string(line) + "' (expected [name])");
            section = trim(line.substr(1, line.size() - 2));
            continue;
        }
        const size_t eq = line.find('=');
        if (eq == std::string_view::npos)
            fail(file, line_no, "expected 'key = value', '[section]' or a comment, got '" + std::string(line) + "'");
        const std::string key(trim(line.substr(0, eq)));
        if (!is_name(key))
            fail(file, line_no, "malformed key '" + key + "'");
        if (section.empty())
            fail(file, line_no, "key '" + key + "' comes before any [section]");
        for (const IniEntry& earlier : entries)
            if (earlier.section == section && earlier.key == key)
                fail(file, line_no, "[" + section + "] " + key + " is set twice (first on line " +
                                        std::to_string(earlier.line) + ")");
        entries.push_back({section, key, std::string(unquote(trim(line.substr(eq + 1)))), line_no});
    }
    return entries;
}

}  // namespace strata::daemon
