// weights/budget.cpp — budget settings and the cgroup / meminfo limits.
#include "weights/budget.h"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace strata::weights {
namespace {

namespace fs = std::filesystem;

// cgroup v1 reports "no limit" as a huge page-rounded number.
constexpr uint64_t kUnlimited = uint64_t(1) << 60;

std::optional<uint64_t> read_limit(const fs::path& file) {
    std::ifstream in(file);
    std::string text;
    if (!(in >> text) || text == "max") return std::nullopt;
    try {
        size_t used = 0;
        const uint64_t v = std::stoull(text, &used);
        if (used != text.size() || v >= kUnlimited) return std::nullopt;
        return v;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// The tightest limit in `file_name` from `dir` up to `root`.
std::optional<Budget> tightest(const fs::path& root, const std::string& rel, const char* file_name, const char* label) {
    std::optional<Budget> best;
    fs::path dir = root / fs::path(rel).relative_path();
    for (;;) {
        if (auto v = read_limit(dir / file_name); v && (!best || *v < best->bytes))
            best = Budget{*v, std::string(label) + " (" + (dir / file_name).string() + ")"};
        if (dir == root || !dir.has_parent_path() || dir.parent_path() == dir) break;
        dir = dir.parent_path();
    }
    return best;
}

uint64_t meminfo(const char* key) {
    std::ifstream in("/proc/meminfo");
    std::string name, unit;
    uint64_t kb = 0;
    while (in >> name >> kb) {
        std::getline(in, unit);
        if (name == std::string(key) + ":") return kb * 1024;
    }
    return 0;
}

}  // namespace

uint64_t parse_size(std::string_view text, uint64_t total) {
    std::string t(text);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    size_t used = 0;
    double x = -1;
    try {
        x = std::stod(t, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || !std::isfinite(x) || x < 0) throw std::invalid_argument("'" + std::string(text) + "' is not a size (e.g. 6G, 512M, 75%)");
    std::string unit = t.substr(used);
    for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (unit == "%") {
        if (x > 100) throw std::invalid_argument("'" + std::string(text) + "': a percentage above 100");
        return static_cast<uint64_t>(static_cast<double>(total) * x / 100.0);
    }
    static const std::vector<std::pair<std::string, double>> units = {
        {"", 1.0}, {"B", 1.0}, {"K", 0x1p10}, {"KB", 0x1p10}, {"KIB", 0x1p10}, {"M", 0x1p20}, {"MB", 0x1p20}, {"MIB", 0x1p20},
        {"G", 0x1p30}, {"GB", 0x1p30}, {"GIB", 0x1p30}, {"T", 0x1p40}, {"TB", 0x1p40}, {"TIB", 0x1p40}};
    for (const auto& [name, mul] : units)
        if (unit == name) return static_cast<uint64_t>(x * mul);
    throw std::invalid_argument("'" + std::string(text) + "': unknown unit '" + unit + "' (use K, M, G, T or %)");
}

std::optional<Budget> cgroup_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root) {
    std::istringstream in(proc_self_cgroup);
    std::string line;
    std::optional<Budget> v1, v2;
    while (std::getline(in, line)) {
        // hierarchy-ID:controller-list:path
        const auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (line.substr(0, a) == "0" && controllers.empty()) {
            v2 = tightest(fs::path(cgroup_root), path, "memory.max", "cgroup v2 memory.max");
            if (!v2) v2 = tightest(fs::path(cgroup_root) / "unified", path, "memory.max", "cgroup v2 memory.max");
        }
        std::istringstream list(controllers);
        for (std::string c; std::getline(list, c, ',');)
            if (c == "memory") v1 = tightest(fs::path(cgroup_root) / "memory", path, "memory.limit_in_bytes", "cgroup v1 memory.limit_in_bytes");
    }
    if (v1 && v2) return v1->bytes <= v2->bytes ? v1 : v2;
    return v1 ? v1 : v2;
}

Budget system_budget() {
    std::ifstream in("/proc/self/cgroup");
    std::stringstream text;
    text << in.rdbuf();
    if (auto c = cgroup_limit(text.str(), "/sys/fs/cgroup")) return *c;
    return {meminfo("MemAvailable"), "MemAvailable (/proc/meminfo)"};
}

Budget resolve_budget(const std::string& configured) {
    if (configured.empty()) return system_budget();
    const bool percent = configured.find('%') != std::string::npos;
    const Budget system = percent ? system_budget() : Budget{};
    return {parse_size(configured, system.bytes), percent ? "memory.budget = " + configured + " of " + system.source : "memory.budget = " + configured};
}

}  // namespace strata::weights
