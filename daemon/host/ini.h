// daemon/host/ini.h — the syntax of strata.conf: an INI file of "[section]" headers,
// "key = value" lines, blank lines and comment lines starting with '#' or ';'.
// Owns: splitting the text into located entries and syntax errors naming file and line.
// Must not touch: what the keys mean (settings.cpp).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strata::daemon {

// A configuration mistake; the message names where (file and line, or the option) and the key.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct IniEntry {
    std::string section;
    std::string key;
    std::string value;  // trimmed; one pair of surrounding double quotes removed
    int line = 0;
};

// Throws ConfigError "<file>:<line>: ..." for a line that is none of the above, a key before
// any section, an empty key or section name, and a key given twice in one section.
std::vector<IniEntry> parse_ini(std::string_view text, const std::string& file);

}  // namespace strata::daemon
