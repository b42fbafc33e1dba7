// weights/budget.h — how much memory the daemon may use.
// Owns: parsing budget settings ("6G", "512MiB", "75%"), finding the limit the system
// imposes (the cgroup's memory.max (v2) or memory.limit_in_bytes (v1) along the process's
// cgroup path, else MemAvailable), and reading how much of it others use now (for the
// pressure watch: daemon/host/pressure.h). Must not touch: what the memory is spent on
// (planner.h), when to change the budget (the pressure watch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::weights {

struct Budget {
    uint64_t bytes = 0;
    std::string source;  // where it came from, e.g. "cgroup v2 memory.max (/sys/fs/cgroup/x)"
};

// "123", "6G", "6GiB", "512M", "1.5T" (powers of 1024) or "75%" of `total`. Throws
// std::invalid_argument naming the text.
uint64_t parse_size(std::string_view text, uint64_t total);

// The system's limit for this process: the tightest cgroup limit (v2 memory.max or v1
// memory.limit_in_bytes, walking up from the process's own cgroup; "max" and v1's huge
// "unlimited" values count as none), else MemAvailable.
Budget system_budget();

// config ("" = none) wins over system_budget(); a percentage is of the system budget.
Budget resolve_budget(const std::string& configured);

// The memory cgroup whose limit binds this process: the tightest along its path.
struct MemoryCgroup {
    int version = 0;        // 1 or 2
    std::string dir;        // the cgroup directory holding the limit
    uint64_t limit = 0;
    Budget budget() const;  // the limit, named by its file
};

// Reads the limit files below `cgroup_root` for the cgroup named in `proc_self_cgroup`
// (the text of /proc/self/cgroup); exposed for tests, system_budget() uses the real files.
std::optional<MemoryCgroup> memory_cgroup(const std::string& proc_self_cgroup, const std::string& cgroup_root);
std::optional<Budget> cgroup_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root);
std::optional<MemoryCgroup> own_memory_cgroup();  // from /proc/self/cgroup and /sys/fs/cgroup

// What bounds this process's memory now: the limit, and the unreclaimable memory (anonymous
// and shared) that others hold within it, i.e. everything charged there but this process's
// own anonymous memory. Under a cgroup: its limit file and memory.stat (v1 total_rss +
// total_shmem, v2 anon + shmem); without one: MemTotal and MemTotal - MemAvailable.
struct MemoryReading {
    uint64_t limit = 0;
    uint64_t others = 0;
    std::string source;  // the limit's file
};
// `own_anon`: this process's anonymous memory (RssAnon of /proc/self/status: own_anon_bytes()).
MemoryReading read_memory(const std::optional<MemoryCgroup>& cgroup, uint64_t own_anon);
uint64_t own_anon_bytes();

}  // namespace strata::weights
