// client/strata-gguf/args.h — a small command-line parser shared by the subcommands:
// positional arguments plus --name VALUE / --name=VALUE / -x VALUE options and --flags, with
// errors that say which option is wrong.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::tool {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Args {
public:
    // `options` take a value, `flags` do not; anything else starting with "--" is an error.
    Args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags);

    const std::vector<std::string>& positional() const { return positional_; }
    const std::string& pos(size_t i, const char* what) const;
    bool flag(const std::string& name) const { return flags_.count(name) != 0; }
    std::optional<std::string> get(const std::string& name) const;
    std::string get_or(const std::string& name, std::string def) const;
    int64_t get_int(const std::string& name, int64_t def, int64_t min, int64_t max) const;
    double get_double(const std::string& name, double def) const;

private:
    std::vector<std::string> positional_;
    std::map<std::string, std::string> values_;
    std::set<std::string> flags_;
};

// Parses "1 2 3" or "1,2,3" into token ids; throws UsageError on anything else.
std::vector<int32_t> parse_ids(const std::string& text);

}  // namespace strata::tool
