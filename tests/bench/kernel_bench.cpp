// tests/bench/kernel_bench.cpp — micro-benchmark of kernels::gemm, printing one JSON
// document: per weight type, ISA, shape and thread count, the matrix-vector speed (nt = 1)
// in GB/s of weight bytes and the matrix-matrix speed (nt > 1) in GFLOP/s.
// Matrix-vector runs stream through enough copies of the weights to exceed the last-level
// cache, as a forward pass does, so GB/s is DRAM bandwidth; each is also given as a share
// of stream_bw's read bandwidth (of_stream, when the peer harness has it) and of read_gbps,
// this program's own sweep of the same kind of memory (of_read). Both are measured once, at
// the start, and this VM's bus changes state within seconds (30 -> 60 GB/s and back), so
// each matrix-vector run is also bracketed by --bus-probe seconds of that sweep (the same
// memory and threads) just before and just after it: bus_gbps (their mean), of_bus (the run's
// share of it) and bus_drift (how far the two differ). --rounds N repeats that (sweep, run,
// sweep) N times and prints the medians, with of_bus_min and of_bus_max: on a host whose bus
// moves between 23 and 49 GB/s from one second to the next, one round's of_bus ranged
// 0.26-1.05 for the same kernel. Matrix-matrix runs on as many
// rows as make a run last long enough (it is compute-bound, so fewer rows do not change
// the rate). Rows are split among threads in chunks through kernels::ThreadPool.
//
// --attention D,... times kernels::attend_f16 and attend_q8_0 instead: one decoding token's
// attention over D cached positions of a 1B/8B-shaped model (16 layers, 8 KV heads of 64,
// 4 queries each), on one thread, walking the cache's blocks as the model does (every KV
// head of a block's layer in turn; a block holds its layers one after another, each 16
// transposed keys and 16 value rows of all heads; an eighth of the next block's layer
// brought in by each head's call, kernels::Ahead), in ms per token and GB/s of the cache.
// Between layers it reads --cache-mb of other memory, as a forward pass reads a layer's
// weights there, and only the attention is timed: with nothing in between, part of a deep
// cache stayed in the last-level cache from token to token (2048 positions, one thread:
// F16 7.6-8.4 ms against 10.7-11.2 with the reads).
//
// --legend prints kernels/gemm_routes.h's table instead: which kernel serves which (ISA,
// weight type, token count); each gemm result names its kernel too.
//
//   kernel_bench [--type Q4_K,F16,...] [--isa scalar,avx2,avx512] [--threads 1,2]
//                [--nt 1,32,128,512] [--shape 4096x4096,14336x4096,4096x14336]
//                [--min-time SECONDS] [--cache-mb MB] [--bus-probe SECONDS|off]
//                [--rounds N] [--attention 256,2048]
//   kernel_bench --legend
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "kernels/gemm_routes.h"
#include "kernels/kernels.h"
#include "kernels/threadpool.h"
#include "kv/kv_cache.h"
#include "read_sweep.h"
#include "stats.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"
#include "tensor/repack.h"
#include "weights/buffer.h"

namespace k = strata::kernels;
using strata::DType;
using strata::bench::highest, strata::bench::lowest, strata::bench::median;

namespace {

struct Options {
    std::vector<DType> types;
    std::vector<k::Isa> isas;
    std::vector<int> threads = {1, 2};
    std::vector<int64_t> nts = {1, 32, 128, 512};
    std::vector<std::pair<int64_t, int64_t>> shapes = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
    double min_time = 0.3;
    int64_t cache_mb = 96;  // matrix-vector working set, > the last-level cache
    std::string stream;     // stream_bw program, "" when absent or off
    double bus_probe = 0.15;  // seconds of read sweep before and after each matrix-vector run, 0: off
    int rounds = 1;           // matrix-vector runs (each between its two sweeps), medians printed
    std::vector<int> depths;  // --attention: cached positions, instead of the products
};

// $STRATA_PEER_DIR/bin/stream_bw, else ~/.cache/strata-peer/bin/stream_bw, if present.
std::string default_stream_bw() {
    std::string dir;
    if (const char* p = std::getenv("STRATA_PEER_DIR")) dir = p;
    else if (const char* h = std::getenv("HOME")) dir = std::string(h) + "/.cache/strata-peer";
    const std::string path = dir + "/bin/stream_bw";
    return !dir.empty() && access(path.c_str(), X_OK) == 0 ? path : "";
}

// Read bandwidth (GB/s) per thread count, from stream_bw's JSON lines
// {"threads":N,...,"read_GBps":X,...}; empty when it cannot run.
std::map<int, double> stream_read_gbps(const std::string& program) {
    std::map<int, double> out;
    if (program.empty()) return out;
    FILE* f = popen(program.c_str(), "r");
    if (!f) return out;
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
        int threads = 0;
        double gbps = 0;
        const char* t = std::strstr(line, "\"threads\":");
        const char* r = std::strstr(line, "\"read_GBps\":");
        if (t && r && std::sscanf(t, "\"threads\":%d", &threads) == 1 && std::sscanf(r, "\"read_GBps\":%lf", &gbps) == 1)
            out[threads] = gbps;
    }
    pclose(f);
    return out;
}

// The read bandwidth (GB/s) per thread count of the memory the model keeps its weights in
// (`sweep`, read_sweep.h), best of 5 sweeps: the bus as a forward pass can use it.
// stream_bw's figure (malloc'd memory, OpenMP) runs below it on some machines.
std::map<int, double> read_gbps(const strata::bench::ReadSweep& sweep, const std::vector<int>& threads) {
    std::map<int, double> out;
    for (int n : threads) {
        k::ThreadPool pool(n);
        out[n] = sweep.best_gbps(pool, 5);
    }
    return out;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

k::Isa parse_isa(const std::string& s) {
    for (k::Isa isa : {k::Isa::Scalar, k::Isa::Avx2, k::Isa::Avx512})
        if (k::isa_name(isa) == s) return isa;
    throw std::invalid_argument("unknown ISA " + s);
}

Options parse(int argc, char** argv) {
    Options o;
    bool stream_set = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        const std::string v = argv[++i];
        if (a == "--type") {
            for (const auto& t : split(v)) {
                auto d = strata::dtype_from_name(t);
                if (!d || !k::can_be_weight(*d)) throw std::invalid_argument("not a weight type: " + t);
                o.types.push_back(*d);
            }
        } else if (a == "--isa") {
            for (const auto& s : split(v)) o.isas.push_back(parse_isa(s));
        } else if (a == "--threads") {
            o.threads.clear();
            for (const auto& s : split(v)) o.threads.push_back(std::stoi(s));
        } else if (a == "--nt") {
            o.nts.clear();
            for (const auto& s : split(v)) o.nts.push_back(std::stoll(s));
        } else if (a == "--shape") {
            o.shapes.clear();
            for (const auto& s : split(v)) {
                const auto x = s.find('x');
                if (x == std::string::npos) throw std::invalid_argument("shape is ROWSxK: " + s);
                o.shapes.emplace_back(std::stoll(s.substr(0, x)), std::stoll(s.substr(x + 1)));
            }
        } else if (a == "--min-time") {
            o.min_time = std::stod(v);
        } else if (a == "--cache-mb") {
            o.cache_mb = std::stoll(v);
        } else if (a == "--attention") {
            for (const auto& d : split(v)) o.depths.push_back(std::stoi(d));
        } else if (a == "--bus-probe") {
            o.bus_probe = v == "off" ? 0.0 : std::stod(v);
        } else if (a == "--rounds") {
            o.rounds = std::stoi(v);
            if (o.rounds < 1) throw std::invalid_argument("--rounds needs at least 1");
        } else if (a == "--stream") {
            o.stream = v == "off" ? "" : v;
            stream_set = true;
        } else {
            throw std::invalid_argument("unknown option " + a);
        }
    }
    if (o.types.empty())
        o.types = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                   DType::Q5_1, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                   DType::IQ4_NL, DType::IQ4_XS, DType::MXFP4, DType::IQ1_S, DType::IQ1_M, DType::IQ2_XXS,
                   DType::IQ2_XS, DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S};
    if (o.isas.empty())
        for (k::Isa isa : {k::Isa::Scalar, k::Isa::Avx2, k::Isa::Avx512})
            if (k::isa_supported(isa)) o.isas.push_back(isa);
    if (!stream_set) o.stream = default_stream_bw();
    return o;
}

// Offsets (in bytes) of a block's F16 scale fields, which get finite random values; every
// other byte is random.
std::vector<size_t> scale_fields(DType t) {
    switch (t) {
        case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: case DType::IQ4_NL: case DType::IQ4_XS: return {0};
        case DType::Q4_1: case DType::Q5_1: return {0, 2};
        case DType::Q2_K: return {offsetof(strata::BlockQ2_K, d), offsetof(strata::BlockQ2_K, dmin)};
        case DType::Q3_K: return {offsetof(strata::BlockQ3_K, d)};
        case DType::Q4_K: case DType::Q5_K: case DType::Q4_K_R: return {0, 2};
        case DType::Q6_K: return {offsetof(strata::BlockQ6_K, d)};
        case DType::IQ1_S: case DType::IQ2_XXS: case DType::IQ2_XS: case DType::IQ2_S: case DType::IQ3_XXS:
        case DType::IQ3_S: return {0};
        default: return {};  // MXFP4's E8M0 and IQ1_M's scattered F16 take any bits
    }
}

// Random weights in the memory the model keeps resident weights in (weights::Buffer:
// 2 MiB-aligned, MADV_HUGEPAGE), so that a sweep walks the TLB as a forward pass does.
strata::weights::Buffer random_matrix(DType t, int64_t rows, int64_t cols, std::mt19937& rng) {
    const size_t row_bytes = strata::dtype_bytes(t, cols);
    if (const auto file = strata::file_type_of_r8(t)) {  // the file type's as the loader rearranges them
        strata::weights::Buffer m = random_matrix(*file, rows, cols, rng);
        strata::rearrange(*file, t, m.data(), rows, row_bytes);
        return m;
    }
    strata::weights::Buffer m(row_bytes * rows);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    if (t == DType::F32 || t == DType::F16 || t == DType::BF16) {
        std::vector<float> row(cols);
        for (int64_t r = 0; r < rows; ++r) {
            for (float& x : row) x = dist(rng);
            strata::quantize_row(t, row.data(), m.data() + r * row_bytes, cols);
        }
        return m;
    }
    std::generate_n(m.data(), m.size(), [&] { return static_cast<uint8_t>(rng()); });
    const auto& info = strata::dtype_info(t);
    for (size_t off = 0; off + info.block_bytes <= m.size(); off += info.block_bytes)
        for (size_t f : scale_fields(t)) {
            const uint16_t h = strata::fp32_to_fp16(0.01f * dist(rng));
            std::memcpy(m.data() + off + f, &h, sizeof h);
        }
    return m;
}

std::vector<uint8_t> activations(DType w, int64_t nt, int64_t cols, std::mt19937& rng) {
    const DType at = k::activation_type(w);
    const size_t row_bytes = strata::dtype_bytes(at, cols);
    std::vector<uint8_t> x(row_bytes * nt);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> row(cols);
    for (int64_t t = 0; t < nt; ++t) {
        for (float& v : row) v = dist(rng);
        k::convert_activations(at, row.data(), x.data() + t * row_bytes, cols);
    }
    return x;
}

using Clock = std::chrono::steady_clock;

// CPU seconds used by the whole process (all threads), to tell how much of the wall time
// the benchmark actually ran on a shared machine.
double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Runs Y = W X over rows [0, rows) split among the pool's threads as the engine's matmul
// does (each gemm call prepares its activations once).
void product(k::ThreadPool& pool, DType w, int64_t cols, const uint8_t* W, int64_t rows, const uint8_t* X, int64_t nt,
             float* Y) {
    const size_t ldw = strata::dtype_bytes(w, cols), ldx = strata::dtype_bytes(k::activation_type(w), cols);
    pool.parallel_for_guided(rows, k::kRowUnit, [&](int64_t b, int64_t e, int) {
        k::gemm(w, cols, W, ldw, b, e, X, ldx, nt, Y, static_cast<size_t>(rows));
    });
}

struct Result {
    double seconds_per_run;
    int64_t rows;
    double cpu_util;  // process CPU time / (wall time * threads)
};

// The weights of one (type, shape): enough copies that a matrix-vector sweep over them
// exceeds the last-level cache; matrix-matrix runs use the first.
struct Weights {
    DType type;
    int64_t rows, cols;
    std::vector<strata::weights::Buffer> copies;

    Weights(DType t, int64_t r, int64_t c, const Options& o, std::mt19937& rng) : type(t), rows(r), cols(c) {
        const size_t bytes = strata::dtype_bytes(t, c) * r;
        const size_t n = std::max<size_t>(1, (static_cast<size_t>(o.cache_mb) << 20) / bytes + 1);
        for (size_t i = 0; i < n; ++i) copies.push_back(random_matrix(t, r, c, rng));
    }
    double bytes() const { return static_cast<double>(strata::dtype_bytes(type, cols) * rows); }
};

Result time_gemv(k::ThreadPool& pool, const Weights& w, const Options& o, std::mt19937& rng) {
    const std::vector<uint8_t> x = activations(w.type, 1, w.cols, rng);
    std::vector<float> y(w.rows);
    for (const auto& m : w.copies) product(pool, w.type, w.cols, m.data(), w.rows, x.data(), 1, y.data());  // warm-up
    int64_t runs = 0;
    const auto start = Clock::now();
    const double cpu0 = cpu_seconds();
    double elapsed = 0;
    while (elapsed < o.min_time) {
        product(pool, w.type, w.cols, w.copies[runs % w.copies.size()].data(), w.rows, x.data(), 1, y.data());
        ++runs;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    }
    return {elapsed / runs, w.rows, (cpu_seconds() - cpu0) / (elapsed * pool.size())};
}

Result time_gemm(k::ThreadPool& pool, const Weights& w, int64_t nt, const Options& o, std::mt19937& rng) {
    const strata::weights::Buffer& m = w.copies.front();
    const std::vector<uint8_t> x = activations(w.type, nt, w.cols, rng);
    std::vector<float> y(w.rows * nt);
    auto seconds = [&](int64_t used) {
        const auto start = Clock::now();
        product(pool, w.type, w.cols, m.data(), used, x.data(), nt, y.data());
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    // Grow the rows until one run takes a tenth of the measuring time (or all rows).
    int64_t used = std::min<int64_t>(w.rows, 64);
    while (used < w.rows && seconds(used) < o.min_time / 10) used = std::min(w.rows, used * 4);
    int64_t runs = 0;
    double elapsed = 0;
    const double cpu0 = cpu_seconds();
    while (elapsed < o.min_time) {
        elapsed += seconds(used);
        ++runs;
    }
    return {elapsed / runs, used, (cpu_seconds() - cpu0) / (elapsed * pool.size())};
}

// The benchmark's model shape; a block's layer is laid out as kv::BlockFormat says.
struct AttentionShape {
    static constexpr int kLayers = 16, kHeads = 8, kHd = 64, kGroup = 4, B = strata::kv::kBlockTokens;
    static strata::kv::BlockFormat format(bool q8) { return {q8 ? strata::kv::KvType::Q8_0 : strata::kv::KvType::F16, kHeads * kHd}; }
};

// A cache of `blocks` blocks of every layer: random values, F16 scales of 1/64 in Q8_0.
std::vector<uint8_t> random_cache(const strata::kv::BlockFormat& f, int blocks, std::mt19937& rng) {
    std::vector<uint8_t> cache(size_t(blocks) * AttentionShape::kLayers * f.layer_bytes());
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const uint16_t scale = strata::fp32_to_fp16(1.0f / 64);
    for (size_t at = 0; at < cache.size(); at += f.layer_bytes()) {
        uint8_t* layer = cache.data() + at;
        if (f.type == strata::kv::KvType::F16) {
            auto* h = reinterpret_cast<uint16_t*>(layer);
            for (size_t i = 0; i < f.layer_bytes() / 2; ++i) h[i] = strata::fp32_to_fp16(u(rng));
            continue;
        }
        for (size_t i = 0; i < f.layer_bytes(); ++i) layer[i] = static_cast<uint8_t>(rng());
        for (size_t i = 0; i < f.key_scale_bytes(); i += 2) std::memcpy(layer + f.key_bytes() + i, &scale, 2);
        for (int j = 0; j < AttentionShape::B; ++j)
            for (size_t c = 0; c < f.value_row_bytes(); c += 34)
                std::memcpy(layer + f.key_bytes() + f.key_scale_bytes() + j * f.value_row_bytes() + c, &scale, 2);
    }
    return cache;
}

// Milliseconds per token of attention over `depth` positions, the median of runs lasting
// at least o.min_time (see the file comment for the shape).
double time_attention(int depth, bool q8, const Options& o, std::mt19937& rng) {
    const strata::kv::BlockFormat f = AttentionShape::format(q8);
    constexpr int L = AttentionShape::kLayers, H = AttentionShape::kHeads, hd = AttentionShape::kHd, G = AttentionShape::kGroup,
                  B = AttentionShape::B;
    const int blocks = (depth + B - 1) / B;
    const std::vector<uint8_t> cache = random_cache(f, blocks, rng);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> q(size_t(H) * G * hd), state(size_t(H) * G * (hd + 2));
    for (auto& x : q) x = strata::fp16_to_fp32(strata::fp32_to_fp16(u(rng)));
    auto block = [&](const uint8_t* layer, int h, int hi, k::Ahead ahead) {
        float* m = state.data() + size_t(h) * G * (hd + 2);
        const float* qh = q.data() + size_t(h) * G * hd;
        const uint8_t* values = layer + f.key_bytes() + f.key_scale_bytes();
        if (q8)
            k::attend_q8_0(qh, G, hd, reinterpret_cast<const int8_t*>(layer) + size_t(h) * hd * B,
                           reinterpret_cast<const uint16_t*>(layer + f.key_bytes()) + size_t(h) * (hd / 32) * B, values + size_t(h) * (hd / 32) * 34,
                           f.value_row_bytes(), 0, hi, 0.125f, 0.0f, m, m + G, m + 2 * G, ahead);
        else
            k::attend_f16(qh, G, hd, reinterpret_cast<const uint16_t*>(layer) + size_t(h) * hd * B,
                          reinterpret_cast<const uint16_t*>(values) + size_t(h) * hd, size_t(H) * hd, 0, hi, 0.125f, 0.0f, m, m + G, m + 2 * G,
                          ahead);
    };
    // A layer's weights passing through the caches (one load per cache line).
    const std::vector<uint8_t> weights(static_cast<size_t>(o.cache_mb) << 20, 1);
    auto evict = [&] {
        uint64_t sum = 0;
        for (size_t i = 0; i < weights.size(); i += 64) sum += weights[i];
        asm volatile("" : : "r"(sum));
    };
    auto token = [&] {  // milliseconds of attention
        double ms = 0;
        for (int l = 0; l < L; ++l) {
            evict();
            const auto start = std::chrono::steady_clock::now();
            for (int h = 0; h < H; ++h) {
                float* m = state.data() + size_t(h) * G * (hd + 2);
                std::fill(m, m + G, -INFINITY);
                std::fill(m + G, m + G * (hd + 2), 0.0f);
            }
            for (int b = 0; b < blocks; ++b) {
                const uint8_t* layer = cache.data() + (size_t(b) * L + l) * f.layer_bytes();
                for (int h = 0; h < H; ++h) {
                    const k::Ahead ahead = b + 1 < blocks ? k::ahead_part(layer + L * f.layer_bytes(), f.layer_bytes(), h, H) : k::Ahead{};
                    block(layer, h, std::min(B, depth - b * B), ahead);
                }
            }
            ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        }
        return ms;
    };
    std::vector<double> ms;
    const auto t0 = std::chrono::steady_clock::now();
    while (ms.size() < 5 || std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < o.min_time) ms.push_back(token());
    return median(ms);
}

void print_attention(const Options& o, std::mt19937& rng) {
    std::printf("{\"bench\":\"attention\",\"results\":[");
    bool first = true;
    for (int depth : o.depths)
        for (bool q8 : {false, true})
            for (k::Isa isa : o.isas) {
                k::set_isa(isa);
                const double ms = time_attention(depth, q8, o, rng);
                const double bytes = double(AttentionShape::kLayers) * depth * (AttentionShape::format(q8).layer_bytes() / AttentionShape::B);
                std::printf("%s\n{\"kernel\":\"%s\",\"isa\":\"%s\",\"depth\":%d,\"ms\":%.3f,\"gbps\":%.2f}", first ? "" : ",",
                            q8 ? "attend_q8_0" : "attend_f16", std::string(k::isa_name(isa)).c_str(), depth, ms, bytes / ms / 1e6);
                first = false;
                std::fflush(stdout);
            }
    std::printf("\n]}\n");
}

void print_gbps(const std::map<int, double>& gbps) {
    std::printf("{");
    for (auto it = gbps.begin(); it != gbps.end(); ++it)
        std::printf("%s\"%d\":%.2f", it == gbps.begin() ? "" : ",", it->first, it->second);
    std::printf("}");
}

// One matrix-vector round: the run's GB/s and CPU use, and the bus around it (the mean of
// the read sweeps just before and just after it, and how far the two differ: their
// difference over their mean, so that a run during which the bus changed state can be told
// apart); bus 0 without a probe.
struct Round {
    double gbps, cpu_util, bus = 0, drift = 0;
};

Round gemv_round(k::ThreadPool& pool, const Weights& w, const Options& o, std::mt19937& rng, const strata::bench::ReadSweep* probe) {
    const double before = probe ? probe->mean_gbps(pool, o.bus_probe) : 0;
    const Result r = time_gemv(pool, w, o, rng);
    Round round{w.bytes() / r.seconds_per_run / 1e9, r.cpu_util};
    if (probe) {
        const double after = probe->mean_gbps(pool, o.bus_probe);
        round.bus = (before + after) / 2;
        round.drift = std::fabs(after - before) / round.bus;
    }
    return round;
}

// o.rounds rounds of one matrix-vector product, printed as medians (of_bus: the median of
// the rounds' own shares, and with more than one round its least and greatest).
void print_gemv(k::ThreadPool& pool, const Weights& w, const Options& o, std::mt19937& rng, const strata::bench::ReadSweep* probe,
                const std::map<int, double>& stream, const std::map<int, double>& read) {
    std::vector<double> gbps, util, bus, of_bus, drift;
    for (int i = 0; i < o.rounds; ++i) {
        const Round r = gemv_round(pool, w, o, rng, probe);
        gbps.push_back(r.gbps);
        util.push_back(r.cpu_util);
        bus.push_back(r.bus);
        of_bus.push_back(probe ? r.gbps / r.bus : 0);
        drift.push_back(r.drift);
    }
    const double g = median(gbps);
    std::printf("\"ms\":%.3f,\"gbps\":%.2f,\"cpu_util\":%.2f", w.bytes() / g / 1e6, g, median(util));
    if (auto it = stream.find(pool.size()); it != stream.end() && it->second > 0) std::printf(",\"of_stream\":%.2f", g / it->second);
    std::printf(",\"of_read\":%.2f", g / read.at(pool.size()));
    if (probe)
        std::printf(",\"bus_gbps\":%.2f,\"of_bus\":%.2f,\"bus_drift\":%.2f", median(bus), median(of_bus), median(drift));
    if (probe && o.rounds > 1)
        std::printf(",\"of_bus_min\":%.2f,\"of_bus_max\":%.2f", lowest(of_bus), highest(of_bus));
    std::printf(",\"rounds\":%d}", o.rounds);
}

}  // namespace

// The products' dispatch table, a row per line: ISA, weight type, tokens, kernel, its source.
void print_legend() {
    namespace d = strata::kernels::detail;
    std::printf("%-7s %-10s %-10s %-15s %s\n", "isa", "type", "tokens", "kernel", "source (lib/kernels/)");
    for (const d::GemmRow& row : d::kGemmRows) {
        const std::string tokens = std::to_string(row.min_tokens) +
                                   (row.max_tokens == d::kAnyTokens ? "+" : row.max_tokens == row.min_tokens ? "" : "-" + std::to_string(row.max_tokens));
        std::printf("%-7s %-10s %-10s %-15s %s\n", std::string(k::isa_name(row.isa)).c_str(), std::string(strata::dtype_name(row.w)).c_str(),
                    tokens.c_str(), d::kernel_name(row.kernel), d::kernel_source(row.kernel));
    }
}

int main(int argc, char** argv) try {
    if (argc == 2 && std::strcmp(argv[1], "--legend") == 0) {
        print_legend();
        return 0;
    }
    const Options o = parse(argc, argv);
    std::mt19937 rng(42);
    if (!o.depths.empty()) {
        print_attention(o, rng);
        return 0;
    }
    // 1 GiB, far past the last-level cache: read_gbps, and (--bus-probe) the bus around each run.
    const strata::bench::ReadSweep sweep(size_t(1) << 30);
    const std::map<int, double> stream = stream_read_gbps(o.stream), read = read_gbps(sweep, o.threads);
    const strata::bench::ReadSweep* probe = o.bus_probe > 0 ? &sweep : nullptr;
    std::printf("{\"bench\":\"kernels\",\"detected_isa\":\"%s\",\"stream_read_gbps\":",
                std::string(k::isa_name(k::detected_isa())).c_str());
    print_gbps(stream);
    std::printf(",\"read_gbps\":");
    print_gbps(read);
    std::printf(",\"results\":[");
    bool first = true;
    for (DType w : o.types) {
        for (auto [rows, cols] : o.shapes) {
            const Weights weights(w, rows, cols, o, rng);
            for (int threads : o.threads) {
                k::ThreadPool pool(threads);
                for (k::Isa isa : o.isas) {
                    k::set_isa(isa);
                    for (int64_t nt : o.nts) {
                        std::printf("%s\n{\"type\":\"%s\",\"isa\":\"%s\",\"kernel\":\"%s\",\"threads\":%d,\"shape\":\"%lldx%lld\",\"nt\":%lld,",
                                    first ? "" : ",", std::string(strata::dtype_name(w)).c_str(),
                                    std::string(k::isa_name(isa)).c_str(), std::string(k::gemm_kernel(w, nt)).c_str(), threads,
                                    static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(nt));
                        first = false;
                        if (nt == 1) {
                            print_gemv(pool, weights, o, rng, probe, stream, read);
                        } else {
                            const Result r = time_gemm(pool, weights, nt, o, rng);
                            const double flops = 2.0 * static_cast<double>(r.rows) * cols * nt;
                            std::printf("\"rows_timed\":%lld,\"gflops\":%.2f,\"cpu_util\":%.2f}",
                                        static_cast<long long>(r.rows), flops / r.seconds_per_run / 1e9, r.cpu_util);
                        }
                        std::fflush(stdout);
                    }
                }
            }
        }
    }
    std::printf("\n]}\n");
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_bench: %s\n", e.what());
    return 2;
}
