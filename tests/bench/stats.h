// tests/bench/stats.h — the summary statistics the benchmark programs print for repeated
// measurements (strata-bench's reps, kernel_bench's rounds and attention runs): median,
// least, greatest and spread. An empty list gives 0.
// Must not touch: timing or output formats (each program prints its own).
#pragma once

#include <algorithm>
#include <vector>

namespace strata::bench {

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

inline double lowest(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
inline double highest(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// (greatest - least) / median: how far the repetitions scatter.
inline double spread(const std::vector<double>& v) { return median(v) > 0 ? (highest(v) - lowest(v)) / median(v) : 0; }

}  // namespace strata::bench
