// tests/bench/quant_rmse.cpp — quant-rmse: how close strata's quantizers come to the source
// weights, and to llama.cpp's. For each target type it quantizes an F16/F32 GGUF with
// strata (model/quantize_model) and, when the peer harness is installed, with llama.cpp's
// peer-quantize, then prints per type: the RMSE (and RMSE relative to the RMS of the source
// values) of each result against the source, over every tensor whose type changed; how
// many tensors are byte-identical between the two; whether the files are identical; and
// the wall-clock and CPU time each quantizer took.
//
//   quant-rmse SRC.gguf [--types q8_0,q4_k_m,...] [--threads N] [--peer DIR] [--work DIR]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "model/quantize_model.h"
#include "tensor/quantize.h"

extern char** environ;

namespace {

using namespace strata;
namespace fs = std::filesystem;

// llama.cpp names of the types peer-quantize accepts (it has no Q3_K_S / Q3_K_L).
const char* kPeerTypes[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k",
                            "q3_k_m", "q4_k_s", "q4_k_m", "q5_k_s", "q5_k_m", "q6_k"};

struct Options {
    std::string src;
    std::vector<std::string> types;
    int threads = 2;
    fs::path peer;
    fs::path work;
};

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr,
                 "quant-rmse: %s\nusage: quant-rmse SRC.gguf [--types T1,T2,...] [--threads N] [--peer DIR] "
                 "[--work DIR]\n",
                 why.c_str());
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    const char* env_peer = std::getenv("STRATA_PEER_DIR");
    const char* home = std::getenv("HOME");
    o.peer = env_peer ? fs::path(env_peer) : fs::path(home ? home : "/") / ".cache" / "strata-peer";
    o.work = fs::temp_directory_path() / "strata-quant-rmse";
    std::string types = "q8_0,q6_k,q5_k_m,q5_k_s,q5_1,q5_0,q4_k_m,q4_k_s,q4_1,q4_0,q3_k_l,q3_k_m,q3_k_s,q2_k,bf16";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        if (a == "--types") types = value();
        else if (a == "--threads") o.threads = std::atoi(value().c_str());
        else if (a == "--peer") o.peer = value();
        else if (a == "--work") o.work = value();
        else if (a.starts_with("--")) usage("unknown option " + a);
        else if (o.src.empty()) o.src = a;
        else usage("unexpected argument " + a);
    }
    if (o.src.empty()) usage("missing SRC.gguf");
    if (o.threads < 1) usage("--threads must be at least 1");
    std::stringstream ss(types);
    for (std::string t; std::getline(ss, t, ',');)
        if (!t.empty()) o.types.push_back(t);
    return o;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// CPU seconds (user + system) used so far by this process (who = RUSAGE_SELF) or by its
// waited-for children (RUSAGE_CHILDREN): on a shared machine they say more than wall time.
double cpu_seconds(int who) {
    rusage u{};
    getrusage(who, &u);
    auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return sec(u.ru_utime) + sec(u.ru_stime);
}

// Runs argv with stdout and stderr sent to /dev/null; returns the exit status.
int run_quiet(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Squared error of a quantized file's tensors against the source, over the tensors whose
// type differs from the source's.
struct Error {
    double sse = 0, ssq = 0;
    uint64_t n = 0;
    double rmse() const { return n ? std::sqrt(sse / static_cast<double>(n)) : 0; }
    double relative() const { return ssq > 0 ? std::sqrt(sse / ssq) : 0; }
};

Error measure(const gguf::File& src, const gguf::File& out) {
    Error e;
    std::vector<float> a, b;
    for (const auto& s : src.tensors()) {
        const gguf::TensorInfo* q = out.tensor(s.name);
        if (!q) throw std::runtime_error(out.path() + " has no tensor " + s.name);
        if (q->type == s.type) continue;
        a.resize(static_cast<size_t>(s.ne[0]));
        b.resize(static_cast<size_t>(s.ne[0]));
        const uint64_t src_row = dtype_bytes(s.type, static_cast<uint64_t>(s.ne[0]));
        const uint64_t out_row = dtype_bytes(q->type, static_cast<uint64_t>(s.ne[0]));
        for (int64_t r = 0; r < s.rows(); ++r) {
            dequantize_row(s.type, s.data + r * src_row, a.data(), s.ne[0]);
            dequantize_row(q->type, q->data + r * out_row, b.data(), s.ne[0]);
            for (size_t i = 0; i < a.size(); ++i) {
                const double d = static_cast<double>(b[i]) - a[i];
                e.sse += d * d;
                e.ssq += static_cast<double>(a[i]) * a[i];
            }
            e.n += a.size();
        }
    }
    return e;
}

struct Identity {
    size_t same = 0, total = 0;
    bool file = false;
};

Identity compare(const std::string& x, const std::string& y) {
    auto a = gguf::File::open(x), b = gguf::File::open(y);
    Identity id;
    for (const auto& t : a->tensors()) {
        ++id.total;
        const gguf::TensorInfo* u = b->tensor(t.name);
        id.same += u && u->type == t.type && u->nbytes == t.nbytes && std::memcmp(u->data, t.data, t.nbytes) == 0;
    }
    std::ifstream fx(x, std::ios::binary), fy(y, std::ios::binary);
    id.file = std::equal(std::istreambuf_iterator<char>(fx), {}, std::istreambuf_iterator<char>(fy), {});
    return id;
}

bool peer_knows(const std::string& type) {
    for (const char* t : kPeerTypes)
        if (type == t) return true;
    return false;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    try {
        fs::create_directories(o.work);
        auto src = gguf::File::open(o.src);
        const fs::path peer_bin = o.peer / "bin" / "peer-quantize";
        const bool have_peer = fs::exists(peer_bin);
        std::printf("source %s, %d threads, llama.cpp peer: %s\n", o.src.c_str(), o.threads,
                    have_peer ? peer_bin.c_str() : "not installed");
        std::printf("%-7s %12s %12s %10s %10s %9s %5s %15s %15s\n", "type", "strata_rmse", "llama_rmse", "strata_rel",
                    "llama_rel", "same_tens", "file", "strata_s(cpu)", "llama_s(cpu)");
        for (const std::string& name : o.types) {
            const auto ft = model::file_type_from_name(name);
            if (!ft) throw std::runtime_error("unknown type " + name);
            const std::string label(ft->name), t = lower(label);
            const std::string ours = (o.work / ("strata." + t + ".gguf")).string();
            const std::string theirs = (o.work / ("llama." + t + ".gguf")).string();
            model::QuantizeOptions qo;
            qo.threads = o.threads;
            double t0 = now(), c0 = cpu_seconds(RUSAGE_SELF);
            model::quantize_model(o.src, ours, *ft, qo);
            const double strata_s = now() - t0, strata_cpu = cpu_seconds(RUSAGE_SELF) - c0;
            const Error es = measure(*src, *gguf::File::open(ours));
            if (!have_peer || !peer_knows(t)) {
                std::printf("%-7s %12.4e %12s %10.4e %10s %9s %5s %6.2f (%6.2f) %15s\n", label.c_str(), es.rmse(), "-",
                            es.relative(), "-", "-", "-", strata_s, strata_cpu, "-");
                std::fflush(stdout);
                continue;
            }
            t0 = now();
            c0 = cpu_seconds(RUSAGE_CHILDREN);
            const int rc = run_quiet({peer_bin.string(), o.src, theirs, t, "--threads", std::to_string(o.threads), "-v", "0"});
            const double llama_s = now() - t0, llama_cpu = cpu_seconds(RUSAGE_CHILDREN) - c0;
            if (rc != 0) throw std::runtime_error("peer-quantize failed for " + t);
            const Error el = measure(*src, *gguf::File::open(theirs));
            const Identity id = compare(ours, theirs);
            std::printf("%-7s %12.4e %12.4e %10.4e %10.4e %4zu/%-4zu %5s %6.2f (%6.2f) %6.2f (%6.2f)\n", label.c_str(),
                        es.rmse(), el.rmse(), es.relative(), el.relative(), id.same, id.total, id.file ? "same" : "DIFF",
                        strata_s, strata_cpu, llama_s, llama_cpu);
            std::fflush(stdout);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "quant-rmse: %s\n", e.what());
        return 1;
    }
    return 0;
}
