// weights/budget.cpp — budget settings and the cgroup / meminfo limits.
#include "weights/budget.h"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
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

const char* limit_file(int version) { return version == 1 ? "memory.limit_in_bytes" : "memory.max"; }

// The tightest limit of cgroup `version` from `rel` below `root` up to `root`.
std::optional<MemoryCgroup> tightest(const fs::path& root, const std::string& rel, int version) {
    std::optional<MemoryCgroup> best;
    fs::path dir = root / fs::path(rel).relative_path();
    for (;;) {
        if (auto v = read_limit(dir / limit_file(version)); v && (!best || *v < best->limit)) best = MemoryCgroup{version, dir.string(), *v};
        if (dir == root || !dir.has_parent_path() || dir.parent_path() == dir) break;
        dir = dir.parent_path();
    }
    return best;
}

// "Key: value kB" lines (/proc/meminfo, /proc/self/status): the value in bytes, 0 when absent.
uint64_t kb_field(const char* path, const char* key) {
    std::ifstream in(path);
    const std::string name = std::string(key) + ":";
    for (std::string line; std::getline(in, line);) {
        if (line.compare(0, name.size(), name) != 0) continue;
        std::istringstream fields(line.substr(name.size()));
        uint64_t kb = 0;
        fields >> kb;
        return kb * 1024;
    }
    return 0;
}

// The sum of `keys` in a memory.stat file ("key value" lines, bytes).
uint64_t stat_sum(const fs::path& file, std::initializer_list<std::string_view> keys) {
    std::ifstream in(file);
    std::string name;
    uint64_t v = 0, sum = 0;
    while (in >> name >> v)
        for (std::string_view k : keys) sum += name == k ? v : 0;
    return sum;
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

Budget MemoryCgroup::budget() const {
    return {limit, std::string("cgroup v") + std::to_string(version) + " " + limit_file(version) + " (" +
                       (fs::path(dir) / limit_file(version)).string() + ")"};
}

std::optional<MemoryCgroup> memory_cgroup(const std::string& proc_self_cgroup, const std::string& cgroup_root) {
    std::istringstream in(proc_self_cgroup);
    std::string line;
    std::optional<MemoryCgroup> v1, v2;
    while (std::getline(in, line)) {
        // hierarchy-ID:controller-list:path
        const auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (line.substr(0, a) == "0" && controllers.empty()) {
            v2 = tightest(fs::path(cgroup_root), path, 2);
            if (!v2) v2 = tightest(fs::path(cgroup_root) / "unified", path, 2);
        }
        std::istringstream list(controllers);
        for (std::string c; std::getline(list, c, ',');)
            if (c == "memory") v1 = tightest(fs::path(cgroup_root) / "memory", path, 1);
    }
    if (v1 && v2) return v1->limit <= v2->limit ? v1 : v2;
    return v1 ? v1 : v2;
}

std::optional<Budget> cgroup_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root) {
    const auto c = memory_cgroup(proc_self_cgroup, cgroup_root);
    return c ? std::optional<Budget>(c->budget()) : std::nullopt;
}

std::optional<MemoryCgroup> own_memory_cgroup() {
    std::ifstream in("/proc/self/cgroup");
    std::stringstream text;
    text << in.rdbuf();
    return memory_cgroup(text.str(), "/sys/fs/cgroup");
}

Budget system_budget() {
    if (auto c = own_memory_cgroup()) return c->budget();
    return {kb_field("/proc/meminfo", "MemAvailable"), "MemAvailable (/proc/meminfo)"};
}

uint64_t own_anon_bytes() { return kb_field("/proc/self/status", "RssAnon"); }

MemoryReading read_memory(const std::optional<MemoryCgroup>& cgroup, uint64_t own_anon) {
    const auto others = [&](uint64_t charged) { return charged > own_anon ? charged - own_anon : 0; };
    if (!cgroup) {
        const uint64_t total = kb_field("/proc/meminfo", "MemTotal"), available = kb_field("/proc/meminfo", "MemAvailable");
        return {total, others(total > available ? total - available : 0), "MemTotal (/proc/meminfo)"};
    }
    const fs::path stat = fs::path(cgroup->dir) / "memory.stat";
    const uint64_t charged = cgroup->version == 1 ? stat_sum(stat, {"total_rss", "total_shmem"}) : stat_sum(stat, {"anon", "shmem"});
    const auto limit = read_limit(fs::path(cgroup->dir) / limit_file(cgroup->version));
    MemoryCgroup now = *cgroup;
    now.limit = limit.value_or(kb_field("/proc/meminfo", "MemTotal"));  // lifted: the machine's
    return {now.limit, others(charged), now.budget().source};
}

Budget resolve_budget(const std::string& configured) {
    if (configured.empty()) return system_budget();
    const bool percent = configured.find('%') != std::string::npos;
    const Budget system = percent ? system_budget() : Budget{};
    return {parse_size(configured, system.bytes), percent ? "memory.budget = " + configured + " of " + system.source : "memory.budget = " + configured};
}

}  // namespace strata::weights
