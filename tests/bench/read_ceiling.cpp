// tests/bench/read_ceiling.cpp — read-ceiling: does any way of reading memory draw more
// from this host's bus than the plain loads of the bus probe (read_sweep.h)? The probe's
// figure is the bus that strata-bench's and kernel_bench's of_bus divide by; if a read
// pattern beat it, a decode could read faster than "the bus", and the probe would be the
// wrong ceiling. Each round sweeps the probe's own memory (bench::ReadSweep, 1 GiB like the
// resident weights: 2 MiB aligned, MADV_HUGEPAGE), every thread its own contiguous share,
// once with the probe's loop and then once with each pattern, the probe's loop again in
// between; each pattern's sweep is given as a share of the mean of the plain sweeps just
// before and after it, so that a bus which moves from second to second moves both. Printed
// as one JSON document: per pattern the median GB/s and the median, least and greatest
// share of plain.
//
//   read-ceiling [--threads 2] [--rounds 20] [--mib 1024]
//
// Patterns: software prefetches (prefetcht0, prefetcht1, prefetchnta) 1, 4 and 16 KB ahead
// of the loads, and two streams a thread (the two halves of its share read side by side,
// as two 8-row groups of a 16-row tile are).
// Must not touch: the probe's own sweep (read_sweep.h), which it calls as it is.
#include <immintrin.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/threadpool.h"
#include "read_sweep.h"
#include "stats.h"

namespace {

using namespace strata;
using Sum = std::function<uint64_t(const uint8_t*, size_t)>;

struct Options {
    int threads = 2, rounds = 20;
    size_t mib = 1024;
};

// The probe's loop with a prefetch of `Hint` `ahead` bytes on for each 128 bytes loaded.
template <int Hint>
__attribute__((target("avx2"))) uint64_t sum_prefetched(const uint8_t* p, size_t n, size_t ahead) {
    __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (size_t i = 0; i + 128 <= n; i += 128) {
        _mm_prefetch(reinterpret_cast<const char*>(p + i + ahead), static_cast<_mm_hint>(Hint));
        _mm_prefetch(reinterpret_cast<const char*>(p + i + ahead + 64), static_cast<_mm_hint>(Hint));
        for (int j = 0; j < 4; ++j) s[j] = _mm256_add_epi64(s[j], _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32 * j)));
    }
    return bench::total_avx2(s);
}

// The two halves of [p, p + n) read side by side, 64 bytes of each in turn.
__attribute__((target("avx2"))) uint64_t sum_two_streams(const uint8_t* p, size_t n) {
    const size_t half = n / 2 / 64 * 64;
    __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (size_t i = 0; i + 64 <= half; i += 64)
        for (int j = 0; j < 4; ++j)
            s[j] = _mm256_add_epi64(s[j], _mm256_load_si256(reinterpret_cast<const __m256i*>(p + (j / 2) * half + i + 32 * (j % 2))));
    return bench::total_avx2(s);
}

struct Pattern {
    std::string name;
    Sum sum;
};

std::vector<Pattern> patterns() {
    std::vector<Pattern> out;
    for (size_t kb : {1, 4, 16}) {
        const size_t ahead = kb << 10;
        const std::string at = std::to_string(kb) + "k";
        out.push_back({"prefetcht0_" + at, [=](const uint8_t* p, size_t n) { return sum_prefetched<_MM_HINT_T0>(p, n, ahead); }});
        out.push_back({"prefetcht1_" + at, [=](const uint8_t* p, size_t n) { return sum_prefetched<_MM_HINT_T1>(p, n, ahead); }});
        out.push_back({"prefetchnta_" + at, [=](const uint8_t* p, size_t n) { return sum_prefetched<_MM_HINT_NTA>(p, n, ahead); }});
    }
    out.push_back({"two_streams", sum_two_streams});
    return out;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) throw std::invalid_argument("read-ceiling: " + a + " needs a value (see the file's header)");
        const std::string v = argv[++i];
        if (a == "--threads") o.threads = std::stoi(v);
        else if (a == "--rounds") o.rounds = std::stoi(v);
        else if (a == "--mib") o.mib = std::stoul(v);
        else throw std::invalid_argument("read-ceiling: unknown option " + a);
    }
    if (o.threads < 1 || o.rounds < 1 || o.mib < 64) throw std::invalid_argument("read-ceiling: --threads, --rounds >= 1, --mib >= 64");
    return o;
}

void run(const Options& o) {
    if (!kernels::isa_supported(kernels::Isa::Avx2)) throw std::runtime_error("read-ceiling: needs AVX2 (the probe's loop)");
    const bench::ReadSweep sweep(size_t(o.mib) << 20);
    kernels::ThreadPool pool(o.threads);
    const std::vector<Pattern> ps = patterns();
    std::vector<std::vector<double>> gbps(ps.size()), share(ps.size());
    std::vector<double> plain_gbps;
    for (int r = 0; r < o.rounds; ++r) {
        double before = sweep.best_gbps(pool, 1);
        plain_gbps.push_back(before);
        for (size_t i = 0; i < ps.size(); ++i) {
            const double g = sweep.gbps_with(pool, ps[i].sum);
            const double after = sweep.best_gbps(pool, 1);
            gbps[i].push_back(g);
            share[i].push_back(g / ((before + after) / 2));
            plain_gbps.push_back(after);
            before = after;
        }
    }
    std::printf("{\"threads\": %d, \"rounds\": %d, \"mib\": %zu, \"plain_gbps\": %.1f, \"plain_min_gbps\": %.1f, \"plain_max_gbps\": %.1f, \"patterns\": [\n",
                o.threads, o.rounds, o.mib, bench::median(plain_gbps), bench::lowest(plain_gbps), bench::highest(plain_gbps));
    for (size_t i = 0; i < ps.size(); ++i)
        std::printf("  {\"pattern\": \"%s\", \"gbps\": %.1f, \"of_plain\": %.3f, \"of_plain_min\": %.2f, \"of_plain_max\": %.2f}%s\n", ps[i].name.c_str(),
                    bench::median(gbps[i]), bench::median(share[i]), bench::lowest(share[i]), bench::highest(share[i]), i + 1 < ps.size() ? "," : "");
    std::printf("]}\n");
}

}  // namespace

int main(int argc, char** argv) {
    try {
        run(parse(argc, argv));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
