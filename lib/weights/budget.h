// weights/budget.h — how much memory the daemon may use.
// Owns: parsing budget settings ("6G", "512MiB", "75%"), and finding the limit the system
// imposes: the cgroup's memory.max (v2) or memory.limit_in_bytes (v1) along the process's
// cgroup path, else MemAvailable. Must not touch: what the memory is spent on (planner.h).
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

// Reads the limit files below `cgroup_root` for the cgroup named in `proc_self_cgroup`
// (the text of /proc/self/cgroup); exposed for tests, system_budget() uses the real files.
std::optional<Budget> cgroup_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root);

}  // namespace strata::weights
