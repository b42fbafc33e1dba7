// client/strata-gguf/args.cpp — command-line parsing for strata-gguf.
#include "args.h"

#include <cctype>
#include <cmath>
#include <sstream>

namespace strata::tool {

Args::Args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags) {
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        const bool short_opt = a.size() == 2 && a[0] == '-' && std::isalpha(static_cast<unsigned char>(a[1]));
        if (!short_opt && (a.size() < 3 || a.rfind("--", 0) != 0)) {
            positional_.push_back(a);
            continue;
        }
        std::string name = a.substr(short_opt ? 1 : 2), value;
        bool has_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            has_value = true;
        }
        if (flags.count(name)) {
            if (has_value) throw UsageError("option " + name + " takes no value");
            flags_.insert(name);
        } else if (options.count(name)) {
            if (!has_value) {
                if (i + 1 >= argv.size()) throw UsageError("option " + name + " needs a value");
                value = argv[++i];
            }
            values_[name] = value;
        } else {
            throw UsageError("unknown option " + a);
        }
    }
}

const std::string& Args::pos(size_t i, const char* what) const {
    if (i >= positional_.size()) throw UsageError(std::string("missing ") + what);
    return positional_[i];
}

std::optional<std::string> Args::get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string Args::get_or(const std::string& name, std::string def) const { return get(name).value_or(std::move(def)); }

int64_t Args::get_int(const std::string& name, int64_t def, int64_t min, int64_t max) const {
    auto v = get(name);
    if (!v) return def;
    size_t used = 0;
    int64_t x = 0;
    try {
        x = std::stoll(*v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != v->size()) throw UsageError("--" + name + ": '" + *v + "' is not an integer");
    if (x < min || x > max)
        throw UsageError("--" + name + ": " + *v + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return x;
}

double Args::get_double(const std::string& name, double def) const {
    auto v = get(name);
    if (!v) return def;
    size_t used = 0;
    double x = 0;
    try {
        x = std::stod(*v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != v->size() || !std::isfinite(x)) throw UsageError("--" + name + ": '" + *v + "' is not a number");
    return x;
}

std::vector<int32_t> parse_ids(const std::string& text) {
    std::vector<int32_t> ids;
    std::string t = text;
    for (char& c : t)
        if (c == ',') c = ' ';
    std::istringstream in(t);
    std::string w;
    while (in >> w) {
        size_t used = 0;
        long long x = -1;
        try {
            x = std::stoll(w, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != w.size() || x < 0 || x > INT32_MAX) throw UsageError("'" + w + "' is not a token id");
        ids.push_back(static_cast<int32_t>(x));
    }
    return ids;
}

}  // namespace strata::tool
