// tests/bench/strata_bench.cpp — strata-bench: prompt (pp) and generation (tg) tokens/s
// of a GGUF model, printed as one JSON line with peer-bench's field names. The weights
// are planned exactly as stratad plans them (--budget, --mode: resident or streamed).
// --sessions N decodes N sequences together, one batched forward pass per step, and
// reports their aggregate and per-session tokens/s and the median step latency (the time
// each session waits for its next token). When the llama.cpp harness (../shared/tools/peer,
// installed in $STRATA_PEER_DIR or ~/.cache/strata-peer) is present and sessions is 1,
// runs of both engines alternate on the same file and the line also carries llama.cpp's
// figures ("peer") and the ratios strata / llama.cpp: of the medians (ratio_*), and the
// median of each rep's ratio to the llama.cpp run right after it (ratio_*_paired), which a
// bus that drifts from minute to minute moves less. *_spread is (max - min) / median of the
// reps. --bus-probe sweeps 512 MiB of memory like the resident weights (read_sweep.h) with
// as many threads for a quarter of a second after each rep of strata (and of llama.cpp)
// and reports the bus's GB/s rep by rep (bus_gbps_runs, peer_bus_gbps_runs, bus_spread): a
// spread the machine's bus shows too is not the engine's, and each engine's rep lies
// between two sweeps.
//
// usage: strata-bench MODEL [--threads N] [--pp 512] [--tg 128] [--reps 3] [--tg-prompt 16]
//                           [--sessions N] [--budget SIZE] [--mode auto|resident|streamed]
//                           [--peer auto|off] [--seed S] [--fresh-copy] [--kv-type f16|q8_0]
//                           [--expert-policy lru|lfu] [--bus-probe]
//        strata-bench MODEL --speculative off|ngram|draft [--draft FILE] [--draft-max N]
//                           [--draft-p-min P]   (decode through the engine, with guesses)
//        strata-bench MODEL --read-speed      (the file's sequential read speed, O_DIRECT)
// --fresh-copy benchmarks (both engines) a copy of MODEL written just before, beside it,
// as an admin's copy or download is right before the daemon starts; the copy is removed.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <future>

#include "engine/engine.h"
#include "engine/memory.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "read_sweep.h"
#include "stats.h"
#include "weights/streamed.h"

namespace {

using namespace strata;
using Clock = std::chrono::steady_clock;
using bench::highest, bench::lowest, bench::median, bench::spread;

struct Options {
    std::string model;
    int threads = 0;
    int pp = 512, tg = 128, reps = 3, tg_prompt = 16, sessions = 1;
    std::string budget, mode = "auto";
    bool peer = true;
    bool read_speed = false;  // only measure the file's read speed
    bool fresh_copy = false;
    bool bus_probe = false;
    uint64_t seed = 42;
    kv::KvType kv_type = kv::KvType::F16;
    weights::ExpertPolicy expert_policy = weights::ExpertPolicy::Lru;
    std::string speculative;  // off, ngram, draft: decode through the engine (SpeculativeRun)
    std::string draft;
    int draft_max = 8;
    float draft_p_min = 0.1f;  // engine.draft_p_min
};

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr,
                 "strata-bench: %s\nusage: strata-bench MODEL [--threads N] [--pp 512] [--tg 128] [--reps 3] [--tg-prompt 16] [--sessions N]\n"
                 "                    [--budget SIZE] [--mode auto|resident|streamed] [--peer auto|off] [--seed S]\n"
                 "                    [--fresh-copy] [--kv-type f16|q8_0] [--expert-policy lru|lfu] [--bus-probe]\n"
                 "       strata-bench MODEL --speculative off|ngram|draft [--draft FILE] [--draft-max N]\n"
                 "                    [--draft-p-min P] [--tg 128] [--reps 3]\n"
                 "       strata-bench MODEL --read-speed\n",
                 why.c_str());
    std::exit(2);
}

// --draft-p-min's value: a number from 0 to 1.
float probability(const std::string& v) {
    size_t used = 0;
    float p = -1;
    try {
        p = std::stof(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || !(p >= 0 && p <= 1)) usage("--draft-p-min must be a number from 0 to 1, not " + v);
    return p;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        auto number = [&](int min) {
            const std::string v = value();
            size_t used = 0;
            int x = 0;
            try {
                x = std::stoi(v, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != v.size() || x < min) usage(a + ": '" + v + "' is not an integer >= " + std::to_string(min));
            return x;
        };
        if (a == "--threads") o.threads = number(1);
        else if (a == "--pp") o.pp = number(0);
        else if (a == "--tg") o.tg = number(0);
        else if (a == "--reps") o.reps = number(1);
        else if (a == "--tg-prompt") o.tg_prompt = number(1);
        else if (a == "--sessions") o.sessions = number(1);
        else if (a == "--seed") o.seed = static_cast<uint64_t>(number(0));
        else if (a == "--budget") o.budget = value();
        else if (a == "--mode") o.mode = value();
        else if (a == "--read-speed") o.read_speed = true;
        else if (a == "--fresh-copy") o.fresh_copy = true;
        else if (a == "--bus-probe") o.bus_probe = true;
        else if (a == "--kv-type") {
            const auto type = kv::kv_type_from_name(value());
            if (!type) usage("--kv-type must be f16 or q8_0");
            o.kv_type = *type;
        }
        else if (a == "--expert-policy") {
            const std::string v = value();
            if (v != "lru" && v != "lfu") usage("--expert-policy must be lru or lfu");
            o.expert_policy = v == "lru" ? weights::ExpertPolicy::Lru : weights::ExpertPolicy::Lfu;
        }
        else if (a == "--speculative") {
            o.speculative = value();
            if (!engine::speculative_from_name(o.speculative) || o.speculative == "auto") usage("--speculative must be off, ngram or draft");
        }
        else if (a == "--draft") o.draft = value();
        else if (a == "--draft-max") o.draft_max = number(1);
        else if (a == "--draft-p-min") o.draft_p_min = probability(value());
        else if (a == "--peer") {
            const std::string v = value();
            if (v != "auto" && v != "off") usage("--peer must be auto or off");
            o.peer = v == "auto";
        } else if (!a.empty() && a[0] == '-') usage("unknown option " + a);
        else if (o.model.empty()) o.model = a;
        else usage("more than one model given");
    }
    if (o.model.empty()) usage("no model given");
    if (o.speculative == "draft" && o.draft.empty()) usage("--speculative draft needs --draft FILE");
    if (!o.speculative.empty()) o.pp = 0;  // decode only
    return o;
}

std::string json_array(const std::vector<double>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
        char b[32];
        std::snprintf(b, sizeof b, "%s%.4f", i ? "," : "", v[i]);
        s += b;
    }
    return s + "]";
}

// Bytes this process has read from storage (/proc/self/io read_bytes).
uint64_t read_bytes() {
    std::ifstream in("/proc/self/io");
    std::string key;
    uint64_t v = 0;
    while (in >> key >> v)
        if (key == "read_bytes:") return v;
    return 0;
}

long major_faults() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_majflt;
}

class StrataRun {
public:
    explicit StrataRun(const Options& o) : o_(o), rng_(o.seed) {
        const auto t0 = Clock::now();
        auto file = gguf::File::open(o.model);
        const auto hp = model::HParams::from_gguf(*file);
        config_.model_path = o.model;
        config_.memory.budget = o.budget;
        config_.memory.mode = o.mode;
        config_.memory.kv_type = o.kv_type;
        config_.memory.stream.expert_policy = o.expert_policy;
        config_.context = std::max(o.pp, o.tg_prompt + o.tg) + 1;
        config_.batch_tokens = std::max({o.pp, o.tg_prompt, o.sessions, 1});
        const int threads = o.threads > 0 ? o.threads : model::physical_cores();
        planner_ = std::make_unique<engine::MemoryPlanner>(config_, hp, config_.context, threads);
        model::Options mo;
        mo.n_threads = threads;
        mo.weights = planner_->factory();
        model_ = model::Model::load(file, mo);
        model_->set_max_batch_tokens(config_.batch_tokens);
        load_s_ = std::chrono::duration<double>(Clock::now() - t0).count();
        // Warm-up: a short prompt and one decode step, as peer-bench does.
        if (o.pp) run_prompt(std::min(o.pp, 32));
        if (o.tg) decode(1, 1);
    }

    double pp_once() {
        const auto t0 = Clock::now();
        run_prompt(o_.pp);
        return o_.pp / std::chrono::duration<double>(Clock::now() - t0).count();
    }

    // Aggregate tokens/s of o_.sessions sequences decoding together.
    double tg_once() {
        const Decode d = decode(o_.tg_prompt, o_.tg);
        tg_read_ += d.read_bytes;
        tg_weight_read_ += d.weight_read_bytes;
        tg_majflt_ += d.major_faults;
        tg_seconds_ += d.seconds;
        tg_read_busy_s_ += d.read_busy_s;
        tg_tokens_ += uint64_t(o_.tg) * o_.sessions;
        tg_passes_ += o_.tg;
        step_ms_.insert(step_ms_.end(), d.step_ms.begin(), d.step_ms.end());
        return d.tokens_per_s;
    }

    std::string json(const std::vector<double>& pp, const std::vector<double>& tg) const {
        const auto& hp = model_->hparams();
        const auto& plan = planner_->setup().plan;
        const auto ws = model_->weight_stats();
        uint64_t bytes = 0, params = 0;
        for (const auto& t : model_->file().tensors()) {
            bytes += t.nbytes;
            params += static_cast<uint64_t>(t.elements());
        }
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        const auto isa = kernels::isa_name(kernels::active_isa());
        char buf[4096];
        std::snprintf(buf, sizeof buf,
                      "\"engine\":\"strata\",\"pp_tps\":%.4f,\"tg_tps\":%.4f,\"threads\":%d,\"model_bytes\":%llu,\"file_bytes\":%llu,"
                      "\"n_params\":%llu,\"pp\":%d,\"tg\":%d,\"reps\":%d,\"tg_prompt\":%d,\"sessions\":%d,\"tg_tps_per_session\":%.4f,"
                      "\"n_batch\":%d,\"mode\":\"%s\",\"budget_bytes\":%llu,\"budget_source\":\"%s\",\"streamed_bytes_per_pass\":%llu,"
                      "\"resident_weight_bytes\":%llu,\"ring_bytes\":%llu,\"isa\":\"%.*s\",\"kv_type\":\"%.*s\",\"pp_runs\":%s,\"tg_runs\":%s,"
                      "\"pp_min_tps\":%.4f,\"pp_max_tps\":%.4f,\"tg_min_tps\":%.4f,\"tg_max_tps\":%.4f,"
                      "\"tg_read_bytes_per_token\":%.0f,\"tg_weight_read_bytes_per_pass\":%.0f,\"tg_read_busy_fraction\":%.3f,\"tg_majflt_per_token\":%.1f,"
                      "\"read_bytes_per_s\":%.0f,\"read_stall_s\":%.3f,\"load_s\":%.3f,\"maxrss_kb\":%ld,\"n_vocab\":%d,\"model\":\"%s\"",
                      median(pp), median(tg), model_->n_threads(), (unsigned long long)bytes, (unsigned long long)model_->file().file_size(),
                      (unsigned long long)params, o_.pp, o_.tg, o_.reps, o_.tg_prompt, o_.sessions, median(tg) / o_.sessions,
                      config_.batch_tokens, weights::mode_name(plan.mode), (unsigned long long)plan.budget,
                      planner_->setup().budget.source.c_str(), (unsigned long long)plan.streamed_bytes, (unsigned long long)plan.resident_bytes,
                      (unsigned long long)plan.ring_bytes, int(isa.size()), isa.data(), int(kv::kv_type_name(o_.kv_type).size()),
                      kv::kv_type_name(o_.kv_type).data(), json_array(pp).c_str(), json_array(tg).c_str(), lowest(pp), highest(pp), lowest(tg),
                      highest(tg),
                      tg_tokens_ ? double(tg_read_) / tg_tokens_ : 0.0, tg_passes_ ? double(tg_weight_read_) / tg_passes_ : 0.0,
                      tg_seconds_ > 0 ? tg_read_busy_s_ / tg_seconds_ : 0.0, tg_tokens_ ? double(tg_majflt_) / tg_tokens_ : 0.0, ws.read_bytes_per_s(), ws.stall_s, load_s_, ru.ru_maxrss, hp.n_vocab,
                      o_.model.c_str());
        char step[512];
        std::snprintf(step, sizeof step,
                      ",\"pp_spread\":%.3f,\"tg_spread\":%.3f,\"tg_step_ms_median\":%.3f,\"expert_cache_bytes\":%llu,\"expert_cache_hits\":%llu,\"expert_cache_misses\":%llu,"
                      "\"expert_cache_hit_rate\":%.4f,\"expert_bytes_read\":%llu",
                      spread(pp), spread(tg), median(step_ms_), (unsigned long long)ws.expert_cache_bytes, (unsigned long long)ws.expert_hits,
                      (unsigned long long)ws.expert_misses, ws.expert_hit_rate(),
                      (unsigned long long)ws.expert_bytes_read);
        return std::string(buf) + step;
    }

private:
    std::vector<int32_t> random_tokens(int n) {
        std::uniform_int_distribution<int32_t> d(0, model_->hparams().n_vocab - 1);
        std::vector<int32_t> v(n);
        for (auto& t : v) t = d(rng_);
        return v;
    }

    void run_prompt(int n) {
        auto cache = model_->new_cache(n, nullptr, o_.kv_type);
        const auto toks = random_tokens(n);
        const model::SequenceBatch s{&cache, toks, model::Logits::None};
        model_->forward({&s, 1}, logits_);
    }

    struct Decode {
        double tokens_per_s;                                  // all sessions together
        uint64_t read_bytes, weight_read_bytes, major_faults; // during the decode steps only
        double seconds, read_busy_s;                          // wall time; of it, with reads in flight
        std::vector<double> step_ms;                          // each step's wall time
    };

    // n single-token steps of every session, after a prompt of `prompt` tokens each (all
    // prompts in one pass).
    Decode decode(int prompt, int n) {
        std::vector<kv::KvCache> caches;
        std::vector<std::vector<int32_t>> prompts;
        std::vector<model::SequenceBatch> batch;
        for (int s = 0; s < o_.sessions; ++s) {
            caches.push_back(model_->new_cache(prompt + n, nullptr, o_.kv_type));
            prompts.push_back(random_tokens(prompt));
        }
        for (int s = 0; s < o_.sessions; ++s) batch.push_back({&caches[s], prompts[s], model::Logits::None});
        model_->forward(batch, logits_);
        const auto toks = random_tokens(n * o_.sessions);
        // Reads are counted over the decode steps only (as peer-bench counts them).
        const weights::Stats w0 = model_->weight_stats();
        const uint64_t rb = read_bytes();
        const long mf = major_faults();
        std::vector<double> step_ms;
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) {
            const auto ts = Clock::now();
            for (int s = 0; s < o_.sessions; ++s)
                batch[s] = {&caches[s], std::span<const int32_t>(&toks[size_t(i) * o_.sessions + s], 1), model::Logits::Last};
            model_->forward(batch, logits_);
            step_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - ts).count());
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        const weights::Stats w1 = model_->weight_stats();
        return {double(n) * o_.sessions / seconds, read_bytes() - rb, w1.bytes_read - w0.bytes_read,
                static_cast<uint64_t>(major_faults() - mf), seconds, w1.read_busy_s - w0.read_busy_s, std::move(step_ms)};
    }

    const Options& o_;
    std::mt19937_64 rng_;
    engine::Config config_;
    std::unique_ptr<engine::MemoryPlanner> planner_;
    std::unique_ptr<model::Model> model_;
    std::vector<float> logits_;
    double load_s_ = 0;
    uint64_t tg_read_ = 0, tg_weight_read_ = 0, tg_tokens_ = 0, tg_passes_ = 0;
    long tg_majflt_ = 0;
    double tg_seconds_ = 0, tg_read_busy_s_ = 0;
    std::vector<double> step_ms_;  // decode step latencies of every rep
};

// --speculative: greedy generation through the engine (as stratad runs it) with the given
// mode — off, ngram (prompt lookup: the prompt is a text and its start again, which the model
// continues by copying) or draft (--draft FILE; free generation from a short prompt) — each
// rep one request of --tg tokens; tg_tps is the request's generation rate, accept_rate and
// tokens_per_pass what its guesses earned.
class SpeculativeRun {
public:
    explicit SpeculativeRun(const Options& o) : o_(o) {
        engine::Config c;
        c.model_path = o.model;
        c.draft_path = o.speculative == "draft" ? o.draft : "";
        c.threads = o.threads;
        c.context = 4 * o.tg + 256;
        c.speculative = *engine::speculative_from_name(o.speculative);
        c.draft_max = o.draft_max;
        c.draft_p_min = o.draft_p_min;
        c.memory.budget = o.budget;
        c.memory.mode = o.mode;
        c.memory.kv_type = o.kv_type;
        c.log = [](int priority, const std::string& m) { if (priority <= 4) std::fprintf(stderr, "strata-bench: %s\n", m.c_str()); };
        engine_ = std::make_unique<engine::Engine>(std::move(c));
        prompt_ = "Once upon a time";
        if (o.speculative == "ngram") {  // a text the model writes, then its start again: it copies
            const std::string text = generate(prompt_, o.tg, engine::Speculative::Off).text;
            prompt_ += text + "\n\n" + prompt_;
        }
        generate(prompt_, 4, mode());  // warm-up
    }

    double tg_once() {
        const double passes0 = figure("forward_passes");
        const engine::Result r = generate(prompt_, o_.tg, mode());
        passes_ += figure("forward_passes") - passes0 - 1;  // the prompt's pass is not a decoding one
        tokens_ += r.usage.completion_tokens - 1;         // nor its token
        guessed_ += r.timings.speculative_guessed;
        accepted_ += r.timings.speculative_accepted;
        return r.timings.generate_tps;
    }

    std::string json(const std::vector<double>& tg) const {
        char buf[2048];
        std::snprintf(buf, sizeof buf,
                      "\"engine\":\"strata\",\"speculative\":\"%s\",\"tg_tps\":%.4f,\"tg_min_tps\":%.4f,\"tg_max_tps\":%.4f,\"tg_spread\":%.3f,"
                      "\"accept_rate\":%.4f,\"tokens_per_pass\":%.3f,\"draft_max\":%d,\"draft_p_min\":%.3f,\"draft_time_share\":%.4f,\"threads\":%.0f,"
                      "\"tg\":%d,\"reps\":%d,\"mode\":\"%s\",\"model\":\"%s\",\"draft\":\"%s\",\"tg_runs\":%s",
                      o_.speculative.c_str(), median(tg), lowest(tg), highest(tg), spread(tg), guessed_ ? accepted_ / guessed_ : 0.0,
                      passes_ > 0 ? tokens_ / passes_ : 0.0, o_.draft_max, o_.draft_p_min, figure("draft_time_share"), figure("threads"), o_.tg, o_.reps,
                      engine_->status().text("weights_mode").c_str(), o_.model.c_str(), o_.draft.c_str(), json_array(tg).c_str());
        return buf;
    }

private:
    struct Collect : engine::Sink {
        std::promise<engine::Result> done;
        void on_text(std::string_view) override {}
        void on_done(const engine::Result& r) override { done.set_value(r); }
        void on_error(const engine::EngineError& e) override { done.set_exception(std::make_exception_ptr(e)); }
    };

    engine::Speculative mode() const { return *engine::speculative_from_name(o_.speculative); }

    engine::Result generate(const std::string& prompt, int tokens, engine::Speculative mode) {
        engine::GenerateRequest r;
        r.prompt = prompt;
        r.max_tokens = tokens;
        r.ignore_eos = true;
        r.sampling.temperature = 0;
        r.speculative = mode;
        auto sink = std::make_shared<Collect>();
        auto result = sink->done.get_future();
        engine_->submit(std::move(r), sink);
        return result.get();
    }

    double figure(figures::Id id) const { return engine_->status().number(id); }

    const Options& o_;
    std::unique_ptr<engine::Engine> engine_;
    std::string prompt_;
    double passes_ = 0, tokens_ = 0, guessed_ = 0, accepted_ = 0;
};

std::string peer_bench_path() {
    namespace fs = std::filesystem;
    std::vector<fs::path> dirs;
    if (const char* d = std::getenv("STRATA_PEER_DIR")) dirs.emplace_back(d);
    if (const char* h = std::getenv("HOME")) dirs.push_back(fs::path(h) / ".cache/strata-peer");
    for (const auto& d : dirs)
        if (fs::exists(d / "bin/peer-bench")) return (d / "bin/peer-bench").string();
    return "";
}

// One llama.cpp run (reps 1) on the same file; returns its JSON object, or "" on failure.
std::string peer_once(const std::string& bin, const Options& o, int threads) {
    std::ostringstream cmd;
    cmd << "'" << bin << "' '" << o.model << "' --threads " << threads << " --pp " << o.pp << " --tg " << o.tg << " --reps 1 --tg-prompt "
        << o.tg_prompt << " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.str().c_str(), "r"), pclose);
    if (!p) return "";
    std::string out;
    std::array<char, 4096> buf;
    while (std::fgets(buf.data(), buf.size(), p.get())) out += buf.data();
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out.rfind("{", 0) == 0 ? out : "";
}

// A number field of a flat JSON object ("key":123.4).
double field(const std::string& json, const std::string& key) {
    const auto at = json.find("\"" + key + "\":");
    return at == std::string::npos ? 0 : std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// --bus-probe: the read bandwidth of 512 MiB of memory like the resident weights, with the
// engine's thread count, over sweeps of a quarter of a second together.
class BusProbe {
public:
    explicit BusProbe(int threads) : pool_(threads), sweep_(size_t(512) << 20) {}
    double gbps() { return sweep_.mean_gbps(pool_, 0.25); }

private:
    kernels::ThreadPool pool_;
    bench::ReadSweep sweep_;
};

// A copy of the model written now, beside it (same file system); removed when done.
class FreshCopy {
public:
    explicit FreshCopy(const std::string& model) {
        path_ = model + ".fresh-" + std::to_string(::getpid());
        std::filesystem::copy_file(model, path_, std::filesystem::copy_options::overwrite_existing);
    }
    ~FreshCopy() {
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// --speculative: each rep one request through the engine, then llama.cpp's plain decode of the
// same model (peer-bench --tg, random tokens: its speed does not depend on them).
int speculative_main(const Options& o) {
    SpeculativeRun run(o);
    const std::string peer = o.peer ? peer_bench_path() : "";
    const int threads = o.threads > 0 ? o.threads : model::physical_cores();
    std::vector<double> tg, peer_tg;
    for (int r = 0; r < o.reps; ++r) {
        tg.push_back(run.tg_once());
        if (peer.empty()) continue;
        if (const std::string j = peer_once(peer, o, threads); !j.empty()) peer_tg.push_back(field(j, "tg_tps"));
    }
    std::string line = "{" + run.json(tg);
    if (!peer_tg.empty()) {
        char buf[256];
        std::snprintf(buf, sizeof buf, ",\"peer_tg_tps\":%.4f,\"ratio_tg\":%.3f,\"peer_tg_runs\":", median(peer_tg),
                      median(tg) / median(peer_tg));
        line += buf + json_array(peer_tg);
    }
    std::printf("%s}\n", line.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    try {
        std::optional<FreshCopy> fresh;
        if (o.fresh_copy) o.model = fresh.emplace(o.model).path();
        if (o.read_speed) {  // the streamer's own reader: io_uring, O_DIRECT, requests in parallel
            auto f = gguf::File::open(o.model);
            const uint64_t bytes = std::min<uint64_t>(f->file_size(), 8ull << 30);
            std::printf("{\"read_bytes_per_s\":%.0f,\"bytes\":%llu,\"model\":\"%s\"}\n", weights::measure_read_speed(*f, bytes),
                        (unsigned long long)bytes, o.model.c_str());
            return 0;
        }
        if (!o.speculative.empty()) return speculative_main(o);
        StrataRun strata(o);
        const std::string peer = o.peer && o.sessions == 1 ? peer_bench_path() : "";
        const int threads = o.threads > 0 ? o.threads : model::physical_cores();
        std::optional<BusProbe> bus;
        if (o.bus_probe) bus.emplace(threads);
        std::vector<double> pp, tg, peer_pp, peer_tg, paired_pp, paired_tg, bus_gbps, peer_bus_gbps;
        std::string peer_last;
        for (int r = 0; r < o.reps; ++r) {
            if (o.pp) pp.push_back(strata.pp_once());
            if (o.tg) tg.push_back(strata.tg_once());
            if (bus) bus_gbps.push_back(bus->gbps());
            if (peer.empty()) continue;
            std::string j = peer_once(peer, o, threads);
            if (bus) peer_bus_gbps.push_back(bus->gbps());
            if (j.empty()) continue;
            peer_pp.push_back(field(j, "pp_tps"));
            peer_tg.push_back(field(j, "tg_tps"));
            if (o.pp && peer_pp.back() > 0) paired_pp.push_back(pp.back() / peer_pp.back());
            if (o.tg && peer_tg.back() > 0) paired_tg.push_back(tg.back() / peer_tg.back());
            peer_last = std::move(j);
        }
        std::string line = "{" + strata.json(pp, tg);
        if (o.fresh_copy) line += ",\"fresh_copy\":true";
        if (bus) {
            char buf[256];
            std::snprintf(buf, sizeof buf, ",\"bus_gbps\":%.2f,\"bus_min_gbps\":%.2f,\"bus_max_gbps\":%.2f,\"bus_spread\":%.3f,\"bus_gbps_runs\":",
                          median(bus_gbps), lowest(bus_gbps), highest(bus_gbps), spread(bus_gbps));
            line += buf + json_array(bus_gbps);
            if (!peer_bus_gbps.empty()) line += ",\"peer_bus_gbps_runs\":" + json_array(peer_bus_gbps);
        }
        if (!peer_last.empty()) {
            char buf[1024];
            const double ppr = median(peer_pp) > 0 ? median(pp) / median(peer_pp) : 0, tgr = median(peer_tg) > 0 ? median(tg) / median(peer_tg) : 0;
            std::snprintf(buf, sizeof buf,
                          ",\"peer_pp_tps\":%.4f,\"peer_tg_tps\":%.4f,\"ratio_pp\":%.3f,\"ratio_tg\":%.3f,"
                          "\"peer_pp_min_tps\":%.4f,\"peer_pp_max_tps\":%.4f,\"peer_tg_min_tps\":%.4f,\"peer_tg_max_tps\":%.4f,"
                          "\"peer_pp_spread\":%.3f,\"peer_tg_spread\":%.3f,\"ratio_pp_paired\":%.3f,\"ratio_tg_paired\":%.3f",
                          median(peer_pp), median(peer_tg), ppr, tgr, lowest(peer_pp), highest(peer_pp), lowest(peer_tg), highest(peer_tg),
                          spread(peer_pp), spread(peer_tg), median(paired_pp), median(paired_tg));
            // The runs go after the fixed-size fields: their length grows with --reps.
            line += buf;
            line += ",\"peer_pp_runs\":" + json_array(peer_pp) + ",\"peer_tg_runs\":" + json_array(peer_tg) +
                    ",\"ratio_tg_paired_runs\":" + json_array(paired_tg);
            line += ",\"peer\":" + peer_last;
        }
        std::printf("%s}\n", line.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "strata-bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
