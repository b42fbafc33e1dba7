// tests/bench/read_sweep.h — the read bandwidth of memory like the model's resident weights
// (a weights::Buffer: 2 MiB-aligned, MADV_HUGEPAGE, far past the last-level cache), each
// of a pool's threads sweeping its own contiguous share with 256-bit loads (64-bit words
// without AVX2). kernel_bench's read_gbps (the fastest sweep: the bus a forward pass can
// use) and strata-bench's --bus-probe (the mean over a quarter of a second between reps,
// to tell the machine's drift from the engine's) are this one sweep; read_ceiling.cpp sweeps
// the same memory with other loops (gbps_with).
// Must not touch: anything a benchmark times besides the sweep.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/threadpool.h"
#include "weights/buffer.h"

namespace strata::bench {

// The four 256-bit sums of a sweep's loads as one number.
__attribute__((target("avx2"))) inline uint64_t total_avx2(const __m256i (&s)[4]) {
    const __m256i t = _mm256_add_epi64(_mm256_add_epi64(s[0], s[1]), _mm256_add_epi64(s[2], s[3]));
    return static_cast<uint64_t>(_mm256_extract_epi64(t, 0) + _mm256_extract_epi64(t, 1) + _mm256_extract_epi64(t, 2) + _mm256_extract_epi64(t, 3));
}

// One thread's share of a read sweep, summed so that the loads are not optimised away:
// 256-bit loads into four sums (AVX2), or 64-bit words without it.
__attribute__((target("avx2"))) inline uint64_t sum_avx2(const uint8_t* p, size_t n) {
    __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (size_t i = 0; i + 128 <= n; i += 128)
        for (int j = 0; j < 4; ++j) s[j] = _mm256_add_epi64(s[j], _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32 * j)));
    return total_avx2(s);
}

inline uint64_t sum_words(const uint8_t* p, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i + 8 <= n; i += 8) s += *reinterpret_cast<const uint64_t*>(p + i);
    return s;
}

class ReadSweep {
public:
    // `bytes` of memory, written once so that every page is mapped before the first sweep.
    explicit ReadSweep(size_t bytes) : buffer_(bytes, "the read sweep") { std::memset(buffer_.data(), 1, buffer_.size()); }

    // GB/s of the fastest of `sweeps` sweeps by the pool's threads: what the bus can give.
    double best_gbps(kernels::ThreadPool& pool, int sweeps) const {
        double best = 1e30;
        for (int rep = 0; rep < sweeps; ++rep) best = std::min(best, sweep(pool));
        return bytes(pool) / best / 1e9;
    }

    // GB/s over sweeps lasting at least `seconds` together: what it gave over that time.
    double mean_gbps(kernels::ThreadPool& pool, double seconds) const {
        double spent = 0;
        int sweeps = 0;
        for (; spent < seconds; ++sweeps) spent += sweep(pool);
        return bytes(pool) * sweeps / spent / 1e9;
    }

    // GB/s of one sweep in which each thread reads its own contiguous share with
    // sum(p, bytes) instead of the probe's loop (read_ceiling.cpp's read patterns).
    template <class Sum>
    double gbps_with(kernels::ThreadPool& pool, const Sum& sum) const {
        return bytes(pool) / seconds_with(pool, sum) / 1e9;
    }

private:
    size_t share(const kernels::ThreadPool& pool) const { return buffer_.size() / pool.size() / 128 * 128; }
    double bytes(const kernels::ThreadPool& pool) const { return double(share(pool)) * pool.size(); }

    // Seconds of one sweep with the probe's loop.
    double sweep(kernels::ThreadPool& pool) const {
        return kernels::isa_supported(kernels::Isa::Avx2) ? seconds_with(pool, sum_avx2) : seconds_with(pool, sum_words);
    }

    // Seconds of one sweep: each thread sums its own contiguous share with `sum`.
    template <class Sum>
    double seconds_with(kernels::ThreadPool& pool, const Sum& sum) const {
        const int n = pool.size();
        const size_t each = share(pool);
        std::vector<uint64_t> sums(n);
        const auto start = std::chrono::steady_clock::now();
        pool.parallel_for(n, 1, [&](int64_t i, int64_t, int) { sums[i] = sum(buffer_.data() + i * each, each); });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (std::accumulate(sums.begin(), sums.end(), uint64_t{0}) == 0) throw std::logic_error("read sweep summed nothing");
        return seconds;
    }

    weights::Buffer buffer_;
};

}  // namespace strata::bench
