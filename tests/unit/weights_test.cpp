// tests/unit/weights_test.cpp — the weights layer: budget settings and cgroup limits (on
// a fake /sys tree), aligned read ranges, the planner's decisions, and the streamed source:
// logits bit-identical to resident on every golden model over many passes, experts of a
// mixture read on demand into the expert cache, per-layer embedding rows read on demand
// in every plan, read errors
// and short reads retried or reported (and recovered from), a truncated model file; the
// resident plan's copies, which outlive a truncated file, and the prefaulting of their
// memory, which leaves what the reads write as it is.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "golden.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "tensor/repack.h"
#include "test_isa.h"
#include "test_util.h"
#include "weights/budget.h"
#include "weights/buffer.h"
#include "weights/planner.h"
#include "weights/ranges.h"
#include "weights/streamed.h"

using namespace strata;
using namespace strata::weights;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("strata-weights-test-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

gguf::TensorInfo tensor(uint64_t offset, uint64_t bytes) {
    gguf::TensorInfo t;
    t.file_offset = offset;
    t.nbytes = bytes;
    return t;
}

// A layout of n equal blocks of `block` bytes and a head of `head` bytes, laid out
// back to back from byte 4096.
struct FakeModel {
    std::vector<gguf::TensorInfo> tensors;
    Layout layout;
    FakeModel(int n, uint64_t block, uint64_t head) {
        tensors.reserve(n + 1);
        uint64_t at = 4096;
        for (int i = 0; i <= n; ++i) {
            tensors.push_back(tensor(at, i < n ? block : head));
            at += tensors.back().nbytes;
        }
        for (auto& t : tensors) layout.layers.push_back({&t});
    }
};

constexpr uint64_t MiB = 1 << 20;

std::unique_ptr<model::Model> load(const fs::path& path, model::WeightFactory factory = {}) {
    model::Options o;
    o.n_threads = 2;
    o.weights = std::move(factory);
    return model::Model::load(gguf::File::open(path.string()), o);
}

// Streams everything it can: a budget that keeps no block in memory.
model::WeightFactory streaming(StreamOptions opt = {}, uint64_t budget = 0) {
    return [opt, budget](std::shared_ptr<const gguf::File> f, Layout l) {
        const Plan p = make_plan(l, {.budget = budget, .mode = Mode::Streamed});
        return load_weights(std::move(f), std::move(l), p, opt);
    };
}

// The resident plan: every layer, and the embeddings, copied into memory at load.
model::WeightFactory resident_copy() {
    return [](std::shared_ptr<const gguf::File> f, Layout l) {
        const Plan p = make_plan(l, {.budget = ~uint64_t(0), .mode = Mode::Resident});
        return load_weights(std::move(f), std::move(l), p, {});
    };
}

std::vector<int32_t> long_tokens() {
    for (const auto& c : test::golden_cases())
        if (c.name == "llama-f16.long") return c.tokens;
    return {};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(weights)

BOOST_AUTO_TEST_CASE(sizes_parse) {
    BOOST_TEST(parse_size("123", 0) == 123u);
    BOOST_TEST(parse_size("6G", 0) == 6ull << 30);
    BOOST_TEST(parse_size("6GiB", 0) == 6ull << 30);
    BOOST_TEST(parse_size("512m", 0) == 512ull << 20);
    BOOST_TEST(parse_size("1.5K", 0) == 1536u);
    BOOST_TEST(parse_size("75%", 1000) == 750u);
    BOOST_CHECK_THROW(parse_size("", 0), std::invalid_argument);
    BOOST_CHECK_THROW(parse_size("6X", 0), std::invalid_argument);
    BOOST_CHECK_THROW(parse_size("-1G", 0), std::invalid_argument);
    BOOST_CHECK_THROW(parse_size("150%", 100), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(cgroup_v1_and_v2_limits) {
    TempDir d;
    // v2: the tightest memory.max on the path wins; "max" means none.
    write(d.path / "a/memory.max", "max\n");
    write(d.path / "a/b/memory.max", "6442450944\n");
    write(d.path / "a/b/c/memory.max", "max\n");
    auto v2 = cgroup_limit("0::/a/b/c\n", d.path.string());
    BOOST_REQUIRE(v2);
    BOOST_TEST(v2->bytes == 6442450944ull);
    BOOST_TEST(v2->source.find("cgroup v2 memory.max") == 0);
    // v1: memory controller line; the huge "unlimited" value means none.
    write(d.path / "memory/x/memory.limit_in_bytes", "9223372036854771712\n");
    write(d.path / "memory/x/y/memory.limit_in_bytes", "1073741824\n");
    auto v1 = cgroup_limit("12:pids:/p\n4:memory:/x/y\n0::/\n", d.path.string());
    BOOST_REQUIRE(v1);
    BOOST_TEST(v1->bytes == 1073741824ull);
    BOOST_TEST(v1->source.find("cgroup v1") == 0);
    BOOST_TEST(!cgroup_limit("4:memory:/x\n", d.path.string()));
    BOOST_TEST(!cgroup_limit("garbage", d.path.string()));
    // The real system answers something, and a configured budget wins.
    BOOST_TEST(system_budget().bytes > 0u);
    BOOST_TEST(resolve_budget("2G").bytes == 2ull << 30);
}

BOOST_AUTO_TEST_CASE(memory_readings_name_the_limit_and_what_others_hold) {
    TempDir d;
    // v1: the binding limit's cgroup, its hierarchical anonymous and shared memory.
    write(d.path / "memory/x/memory.limit_in_bytes", "1073741824\n");
    write(d.path / "memory/x/memory.stat", "cache 999\nrss 5\ntotal_cache 4096\ntotal_rss 314572800\ntotal_shmem 10485760\n");
    const auto v1 = memory_cgroup("4:memory:/x\n", d.path.string());
    BOOST_REQUIRE(v1);
    BOOST_TEST(v1->version == 1);
    BOOST_TEST(v1->dir == (d.path / "memory/x").string());
    MemoryReading r = read_memory(v1, 100ull << 20);
    BOOST_TEST(r.limit == 1073741824ull);
    BOOST_TEST(r.others == (310ull << 20) - (100ull << 20));  // rss + shmem less this process's own
    BOOST_TEST(r.source.find("memory.limit_in_bytes") != std::string::npos);
    // The limit is re-read (lowered while serving); this process holding more than is
    // charged (pages charged elsewhere) leaves others nothing.
    write(d.path / "memory/x/memory.limit_in_bytes", "536870912\n");
    r = read_memory(v1, 1ull << 30);
    BOOST_TEST(r.limit == 536870912ull);
    BOOST_TEST(r.others == 0u);
    // v2: anon + shmem of memory.stat.
    write(d.path / "a/memory.max", "2147483648\n");
    write(d.path / "a/memory.stat", "anon 209715200\nfile 999999\nshmem 0\n");
    const auto v2 = memory_cgroup("0::/a\n", d.path.string());
    BOOST_REQUIRE(v2);
    BOOST_TEST(v2->version == 2);
    BOOST_TEST(read_memory(v2, 0).others == 209715200ull);
    // Without a cgroup: the machine's memory.
    const MemoryReading machine = read_memory(std::nullopt, own_anon_bytes());
    BOOST_TEST(machine.limit > 0u);
    BOOST_TEST(machine.others < machine.limit);
    BOOST_TEST(own_anon_bytes() > 0u);
}

BOOST_AUTO_TEST_CASE(ranges_are_aligned_and_merged) {
    std::vector<gguf::TensorInfo> t = {tensor(10000, 5000), tensor(15008, 100), tensor(1 << 24, 4096)};
    const LayerRanges r = layer_ranges({&t[0], &t[1], &t[2]}, 4096, 1 << 16);
    BOOST_REQUIRE_EQUAL(r.ranges.size(), 2u);
    BOOST_TEST(r.ranges[0].offset == 8192u);
    BOOST_TEST(r.ranges[0].length == 8192u);  // [8192, 16384) holds both small tensors
    BOOST_TEST(r.ranges[1].offset == uint64_t(1 << 24));
    BOOST_TEST(r.tensor_offset[0] == 10000u - 8192u);
    BOOST_TEST(r.tensor_offset[1] == 15008u - 8192u);
    BOOST_TEST(r.tensor_offset[2] == 8192u);
    BOOST_TEST(r.bytes == 8192u + 4096u);
}

BOOST_AUTO_TEST_CASE(planner_decisions) {
    FakeModel m(32, 400 * MiB, 1000 * MiB);
    const Reserve reserve{.kv = 300 * MiB, .working = 100 * MiB, .overhead = 100 * MiB};
    // Everything fits: resident.
    Plan p = make_plan(m.layout, {.budget = 40000 * MiB, .reserve = reserve});
    BOOST_TEST((p.mode == Mode::Resident));
    BOOST_TEST(p.streamed_bytes == 0u);
    // 6 GiB: streamed; the 1000 MiB head stays (so the ring holds 400 MiB layers), and
    // whole blocks fill the rest, spread out.
    p = make_plan(m.layout, {.budget = 6144 * MiB, .reserve = reserve});
    BOOST_TEST((p.mode == Mode::Streamed));
    BOOST_TEST(p.fits);
    BOOST_TEST(p.resident.back());
    BOOST_TEST(p.slot_bytes >= 400 * MiB);
    BOOST_TEST(p.ring_slots >= 2);
    BOOST_TEST(p.total() <= 6144 * MiB);
    const auto kept = std::count(p.resident.begin(), p.resident.end() - 1, true);
    BOOST_TEST(kept == (6144 - 500 - 1000 - 2 * 400) / 400);  // 9 blocks
    BOOST_TEST(p.streamed_bytes == (32 - kept) * 400 * MiB + (32 - kept) * 0);
    BOOST_TEST(!p.resident[1]);  // spread: not the first `kept` blocks in a row
    BOOST_TEST(p.pass_bound(2000.0 * MiB) == 2000.0 / double((32 - kept) * 400), boost::test_tools::tolerance(1e-9));
    BOOST_TEST(p.describe(2e9).find("layers streamed") != std::string::npos);
    // Too small even to stream: says so.
    p = make_plan(m.layout, {.budget = 1000 * MiB, .reserve = reserve});
    BOOST_TEST(!p.fits);
    BOOST_TEST(p.summary().find("does not fit") != std::string::npos);
    // Forced modes.
    BOOST_TEST((make_plan(m.layout, {.budget = 40000 * MiB, .reserve = reserve, .mode = Mode::Streamed}).mode == Mode::Streamed));
    BOOST_TEST((make_plan(m.layout, {.budget = 10 * MiB, .reserve = reserve, .mode = Mode::Resident}).mode == Mode::Resident));
    BOOST_CHECK_THROW(mode_from_name("sometimes"), std::invalid_argument);
}

// A streamed mixture of experts: layers are planned without their expert tensors, and the
// memory left becomes the expert cache.
BOOST_AUTO_TEST_CASE(planner_gives_experts_a_cache) {
    // 4 layers, each a 10 MiB dense tensor and three expert tensors of 8 experts x 1 MiB.
    std::vector<gguf::TensorInfo> tensors;
    tensors.reserve(4 * 4 + 1);
    uint64_t at = 4096;
    Layout layout;
    layout.n_expert = 8;
    layout.n_expert_used = 2;
    for (int l = 0; l < 4; ++l) {
        std::vector<const gguf::TensorInfo*> layer;
        for (uint64_t bytes : {10 * MiB, 8 * MiB, 8 * MiB, 8 * MiB}) {
            tensors.push_back(tensor(at, bytes));
            at += bytes;
            layer.push_back(&tensors.back());
        }
        layout.layers.push_back(layer);
        layout.expert_tensors.push_back({1, 2, 3});
    }
    tensors.push_back(tensor(at, 5 * MiB));
    layout.layers.push_back({&tensors.back()});
    layout.expert_tensors.emplace_back();
    BOOST_TEST(expert_slot_bytes(layout, 4096) == 3 * (MiB + 4096));
    // 100 MiB: the dense layers (45 MiB) stay; the rest, less a sixteenth of the budget
    // left free, holds 16 of the 32 experts.
    Plan p = make_plan(layout, {.budget = 100 * MiB});
    BOOST_TEST((p.mode == Mode::Streamed));
    BOOST_TEST(p.experts_on_demand);
    BOOST_TEST(p.fits);
    BOOST_TEST(p.streamed_bytes == 0u);
    BOOST_TEST(p.resident_bytes == 45 * MiB);
    BOOST_TEST(p.expert_slots == int((55 * MiB - 100 * MiB / 16) / (3 * (MiB + 4096))));
    BOOST_TEST(p.expert_slots == 16);
    BOOST_TEST(p.expert_bytes_per_token == 4 * 2 * 3 * (MiB + 4096));
    BOOST_TEST(p.total() <= 100 * MiB);
    BOOST_TEST(p.describe(0).find("expert cache") != std::string::npos);
    // Plenty of memory but streamed by request: never more slots than experts.
    BOOST_TEST(make_plan(layout, {.budget = 1000 * MiB, .mode = Mode::Streamed}).expert_slots == 32);
    // Too little for the smallest cache: says so.
    BOOST_TEST(!make_plan(layout, {.budget = 20 * MiB}).fits);
    // Resident when all fits: experts are in memory.
    BOOST_TEST(!make_plan(layout, {.budget = 1000 * MiB}).experts_on_demand);
}

BOOST_AUTO_TEST_CASE(streamed_logits_are_bit_identical_to_resident) {
    auto cases = test::golden_cases();
    for (auto& c : test::arch_cases()) cases.push_back(std::move(c));
    for (const auto& c : cases) {
        if (c.tokens.size() < 64) continue;
        auto resident = load(c.model);
        auto streamed = load(c.model, streaming());
        // One batch, then decode steps (65+ passes: the ring cycles across passes).
        BOOST_TEST(test::logits_in_chunks(*streamed, c.tokens, c.tokens.size()) == test::logits_in_chunks(*resident, c.tokens, c.tokens.size()), c.name);
        BOOST_TEST(test::logits_in_chunks(*streamed, c.tokens, 1) == test::logits_in_chunks(*resident, c.tokens, 1), c.name);
    }
    // Keeping some layers in memory (a budget between nothing and everything) too.
    const auto path = test::data_dir() / "golden/models/llama-f16.gguf";
    auto partly = load(path, streaming({}, 3 << 20));
    auto resident = load(path);
    const auto toks = long_tokens();
    BOOST_TEST(test::logits_in_chunks(*partly, toks, 7) == test::logits_in_chunks(*resident, toks, 7));
}

// Mixture of experts, streamed: only the chosen experts are read, into the expert cache
// (either replacement policy); the logits are the same with a cache smaller than one prefill's
// experts (the forward pass takes them in groups) and with one that holds them all: bit for bit
// between the two policies and across passes, within the case's llama.cpp tolerance against
// the mapped file (the plan keeps the layers' dense tensors resident, where Q4_K takes
// Q4_K_R, tensor/repack.h, whose one-token products round differently).
BOOST_AUTO_TEST_CASE(experts_are_read_on_demand_and_cached) {
    int moe_cases = 0;
    for (const auto& c : test::arch_cases()) {
        if (c.tokens.size() < 64) continue;
        auto resident = load(c.model);
        const auto& hp = resident->hparams();
        if (hp.n_expert == 0) continue;
        ++moe_cases;
        const auto expected = test::logits_in_chunks(*resident, c.tokens, 1);
        const uint64_t all_experts = uint64_t(hp.n_layer) * hp.n_expert;
        const auto close = [&](const std::vector<float>& got) {
            const test::Comparison cmp = test::compare_logits(got, expected, c.n_vocab, c.tol_rms_rel);
            return cmp.max_rel <= c.tol_max_rel && cmp.rms_rel <= c.tol_rms_rel;
        };
        // The smallest cache (2 x n_expert_used slots), decode token by token: a token's
        // experts are read or found, never the whole layer's.
        Stats s;
        std::vector<float> first_policy;
        for (ExpertPolicy policy : {ExpertPolicy::Lru, ExpertPolicy::Lfu}) {
            StreamOptions opt;
            opt.expert_policy = policy;
            auto small = load(c.model, streaming(opt));
            const auto got = test::logits_in_chunks(*small, c.tokens, 1);
            BOOST_TEST(close(got), c.name);
            if (first_policy.empty()) first_policy = got;
            BOOST_TEST(got == first_policy, c.name);
            s = small->weight_stats();
            const auto moe_layers = std::count_if(hp.layers.begin(), hp.layers.end(), [](const model::Layer& l) {
                return model::find_block<model::Moe>(l.branches) != nullptr;
            });  // lfm2moe's first FFN is dense; gemma4's experts run beside a dense FFN (a Parallel block)
            const uint64_t requests = uint64_t(moe_layers) * hp.n_expert_used * c.tokens.size();
            BOOST_TEST(s.expert_hits + s.expert_misses == requests, c.name);
            BOOST_TEST(s.expert_misses > 0u);
            // A token reusing one of the last ones, where the cache holds a token's experts
            // (LRU over more layers than that cycles: lfm2moe's three MoE layers of 2).
            if (moe_layers <= 2 || policy == ExpertPolicy::Lfu) BOOST_TEST(s.expert_hits > 0u, c.name);
            BOOST_TEST(s.expert_cache_bytes > 0u);
            BOOST_TEST(s.expert_bytes_read > 0u);
        }
        // A cache as large as every expert: each is read once, then always found.
        auto large = load(c.model, streaming({}, 64 << 20));
        const auto once = test::logits_in_chunks(*large, c.tokens, 1);
        BOOST_TEST(close(once), c.name);
        s = large->weight_stats();
        BOOST_TEST(s.expert_misses <= all_experts, c.name);
        BOOST_TEST(test::logits_in_chunks(*large, c.tokens, 1) == once, c.name);
        BOOST_TEST(large->weight_stats().expert_misses == s.expert_misses, c.name);
    }
    BOOST_TEST(moe_cases >= 3);
}

// MXFP4 experts (17-byte blocks: expert slices start at offsets no alignment divides) read
// through the smallest expert cache and through one that holds them all: bit for bit the same,
// and the resident file's logits within rounding (its dense tensors may take other layouts).
BOOST_AUTO_TEST_CASE(mxfp4_experts_stream_through_the_cache) {
    const auto path = test::data_dir() / "quant/qwen3moe.mxfp4_moe.gguf";
    const std::vector<int32_t> toks = {1, 17, 200, 33, 91, 145, 7};
    auto small = load(path, streaming());
    auto large = load(path, streaming({}, 64 << 20));
    const auto got = test::logits_in_chunks(*small, toks, 1);
    BOOST_TEST(got == test::logits_in_chunks(*large, toks, 1));
    BOOST_TEST(small->weight_stats().expert_misses > 0u);
    const auto expected = test::logits_in_chunks(*load(path), toks, 1);
    const test::Comparison cmp = test::compare_logits(got, expected, static_cast<int32_t>(got.size() / toks.size()), 1e-4);
    BOOST_TEST(cmp.max_rel <= 1e-4);
}

BOOST_AUTO_TEST_CASE(read_errors_are_retried_then_reported_and_recovered_from) {
    const auto path = test::data_dir() / "golden/models/llama-f16.gguf";
    auto resident = load(path);
    const auto toks = long_tokens();
    const auto expected = test::logits_in_chunks(*resident, toks, 16);
    // Errors and short reads within the retry limit: the same logits.
    for (bool short_reads : {false, true}) {
        StreamOptions opt;
        opt.fault_count = 3;
        opt.fault_short = short_reads;
        auto m = load(path, streaming(opt));
        BOOST_TEST(test::logits_in_chunks(*m, toks, 16) == expected);
    }
    // More errors than retries: a clear error, then the next pass reads again and works.
    // One read in flight at a time, so the faults hit the same read one after another.
    StreamOptions opt;
    opt.fault_count = opt.max_retries + 2;
    opt.queue_depth = 1;
    opt.direct = false;  // the buffered path too
    auto m = load(path, streaming(opt));
    auto cache = m->new_cache(64);
    std::vector<float> logits;
    const model::SequenceBatch s{&cache, std::span<const int32_t>(toks.data(), 8), model::Logits::Last};
    try {
        m->forward({&s, 1}, logits);
        BOOST_FAIL("expected a read error");
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        BOOST_TEST(what.find("cannot read") != std::string::npos, what);
        BOOST_TEST(what.find("at byte") != std::string::npos, what);
        BOOST_TEST(what.find("Input/output error") != std::string::npos, what);
    }
    BOOST_TEST(cache.size() == 0);
    BOOST_TEST(test::logits_in_chunks(*m, toks, 16) == expected);
}

// A table read a few rows per token (Gemma 4's per-layer embeddings, Layout::row_tables) is
// never held: the resident plan counts it apart (on_demand_bytes, not resident_bytes), its
// rows are read per pass with io_uring, the logits are the mapped file's bit for bit, and a
// read that keeps failing is an error naming the table, after which the next pass works.
BOOST_AUTO_TEST_CASE(per_layer_rows_are_read_on_demand) {
    const auto path = test::data_dir() / "archs/models/gemma4-e-f16.gguf";
    const auto file = gguf::File::open(path.string());
    const gguf::TensorInfo* table = file->tensor("per_layer_token_embd.weight");
    BOOST_REQUIRE(table);
    auto mapped = load(path);
    auto copied = load(path, resident_copy());
    std::vector<int32_t> toks;
    for (const auto& c : test::arch_cases())
        if (c.name == "gemma4-e-f16.long") toks = c.tokens;
    BOOST_REQUIRE(!toks.empty());
    BOOST_TEST(test::logits_in_chunks(*copied, toks, 16) == test::logits_in_chunks(*mapped, toks, 16));
    const Stats s = copied->weight_stats();
    BOOST_TEST(s.mode == "resident");
    BOOST_TEST(s.table_bytes_read >= toks.size() * table->nbytes / uint64_t(table->rows()));
    Layout layout;
    layout.row_tables.push_back(table);
    const Plan plan = make_plan(layout, {.budget = ~uint64_t(0), .mode = Mode::Resident});
    BOOST_TEST(plan.on_demand_bytes == table->nbytes);
    BOOST_TEST(plan.resident_bytes == 0u);
    BOOST_TEST(plan.describe(0).find("read on demand") != std::string::npos);

    StreamOptions opt;
    opt.fault_count = opt.max_retries + 2;
    opt.queue_depth = 1;
    auto failing = load(path, [opt](std::shared_ptr<const gguf::File> f, Layout l) {
        const Plan p = make_plan(l, {.budget = ~uint64_t(0), .mode = Mode::Resident});
        return load_weights(std::move(f), std::move(l), p, opt);
    });
    auto cache = failing->new_cache(64);
    std::vector<float> logits;
    const model::SequenceBatch one{&cache, std::span<const int32_t>(toks.data(), 8), model::Logits::Last};
    try {
        failing->forward({&one, 1}, logits);
        BOOST_FAIL("expected a read error");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()).find("per_layer_token_embd.weight") != std::string::npos, e.what());
    }
    BOOST_TEST(cache.size() == 0);
    BOOST_TEST(test::logits_in_chunks(*failing, toks, 16) == test::logits_in_chunks(*mapped, toks, 16));
}

BOOST_AUTO_TEST_CASE(resident_copies_match_the_mapping_and_outlive_the_file) {
    TempDir d;
    const auto copy = d.path / "model.gguf";
    fs::copy_file(test::data_dir() / "golden/models/llama-f16.gguf", copy);
    const auto toks = long_tokens();
    auto copied = load(copy, resident_copy());
    BOOST_TEST(copied->weight_stats().mode == "resident");
    auto mapped = load(copy);
    const auto batched = test::logits_in_chunks(*mapped, toks, 16), one_by_one = test::logits_in_chunks(*mapped, toks, 1);
    mapped.reset();
    fs::resize_file(copy, 0);  // would fault a model computing from the mapping (SIGBUS)
    BOOST_TEST(test::logits_in_chunks(*copied, toks, 16) == batched);
    BOOST_TEST(test::logits_in_chunks(*copied, toks, 1) == one_by_one);
}

// The resident plan keeps each tensor in the layout its Layout names (tensor/repack.h; the
// model names kernels::resident_layout's choice, the 8-row layouts where the rows allow,
// else Q4_K_R): the source says so and its bytes are the file's rearranged. A model loaded
// under each variant (AVX2's 8-row lanes, AVX-512's 16-row lanes over two groups) keeps its
// logits within llama.cpp's tolerance token by token and in one batch.
BOOST_AUTO_TEST_CASE(resident_q4_k_takes_the_layout_chosen) {
    int cases = 0;
    for (const auto& c : test::golden_cases()) {
        if (c.weights != "Q4_K_M") continue;
        ++cases;
        const auto file = gguf::File::open(c.model.string());
        Layout one_per_layer;
        for (const auto& t : file->tensors()) {
            if (t.type != DType::Q4_K && t.type != DType::F32) continue;
            const bool r8 = one_per_layer.layers.size() % 2 == 0 && can_keep_as(t.type, DType::Q4_K_R8, t.ne[1]);
            one_per_layer.layers.push_back({&t});
            one_per_layer.resident_types.push_back({t.type == DType::F32 ? t.type : r8 ? DType::Q4_K_R8 : DType::Q4_K_R});
        }
        const Plan plan = make_plan(one_per_layer, {.budget = ~uint64_t(0), .mode = Mode::Resident});
        auto source = load_weights(file, one_per_layer, plan, {});
        std::set<DType> seen;
        for (size_t l = 0; l < one_per_layer.layers.size(); ++l) {
            const gguf::TensorInfo* t = one_per_layer.layers[l][0];
            const DType kept = one_per_layer.resident_type(l, 0);
            seen.insert(kept);
            std::vector<uint8_t> want(t->data, t->data + t->nbytes);
            const size_t row_bytes = dtype_bytes(t->type, t->ne[0]);
            rearrange(t->type, kept, want.data(), static_cast<int64_t>(want.size() / row_bytes), row_bytes);
            const auto ptrs = source->acquire(static_cast<int>(l));
            BOOST_TEST(source->resident_layout(static_cast<int>(l), 0));
            BOOST_TEST(std::memcmp(ptrs[0], want.data(), want.size()) == 0, t->name << " as " << dtype_name(kept));
            source->release(static_cast<int>(l));
        }
        BOOST_TEST(seen.count(DType::Q4_K_R8) == 1);
        BOOST_TEST(seen.count(DType::Q4_K_R) == 1);
        for (kernels::Isa isa : {kernels::Isa::Avx2, kernels::Isa::Avx512}) {
            if (!kernels::isa_supported(isa)) continue;
            const test::UseIsa use(isa);
            auto m = load(c.model, resident_copy());
            for (size_t chunk : {size_t{1}, c.tokens.size()}) {
                const auto cmp = test::compare_logits(test::logits_in_chunks(*m, c.tokens, chunk), c.logits, c.n_vocab, c.tol_rms_rel);
                BOOST_TEST_CONTEXT(c.name << " on " << kernels::isa_name(isa) << " in chunks of " << chunk) {
                    BOOST_TEST(cmp.max_rel <= c.tol_max_rel, "max_rel " << cmp.max_rel);
                    BOOST_TEST(cmp.rms_rel <= c.tol_rms_rel, "rms_rel " << cmp.rms_rel);
                }
            }
        }
    }
    BOOST_TEST(cases > 0);
}

// Prefault runs beside the reads that fill the same memory: bytes written before it starts,
// while it runs and after it stops stay, the rest reads as zeros, and it stops early when
// destroyed at once.
BOOST_AUTO_TEST_CASE(prefaulting_keeps_what_is_written) {
    std::vector<Buffer> bufs;
    for (int i = 0; i < 3; ++i) bufs.emplace_back(uint64_t(70 + i) << 20);  // past a 64 MiB step
    auto fill = [](const Buffer& b, uint8_t v) {
        for (uint64_t at = 0; at < b.size(); at += 4096 * 3) b.data()[at] = v;
    };
    fill(bufs[0], 7);
    {
        const Prefault pf({&bufs[0], &bufs[1], &bufs[2]});
        fill(bufs[1], 9);
    }
    { const Prefault stopped_at_once({&bufs[2]}); }
    for (int i = 0; i < 3; ++i)
        for (uint64_t at = 0; at < bufs[i].size(); at += 4096) {
            const uint8_t want = at % (4096 * 3) == 0 && i < 2 ? (i == 0 ? 7 : 9) : 0;
            if (bufs[i].data()[at] != want) BOOST_FAIL("buffer " << i << " byte " << at << ": " << int(bufs[i].data()[at]) << ", want " << int(want));
        }
}

BOOST_AUTO_TEST_CASE(a_truncated_file_is_a_clear_error) {
    TempDir d;
    const auto copy = d.path / "model.gguf";
    fs::copy_file(test::data_dir() / "golden/models/llama-f16.gguf", copy);
    auto m = load(copy, streaming());
    fs::resize_file(copy, fs::file_size(copy) / 2);
    auto cache = m->new_cache(8);
    std::vector<float> logits;
    const std::vector<int32_t> toks = {1, 2, 3};
    const model::SequenceBatch s{&cache, toks, model::Logits::Last};
    try {
        m->forward({&s, 1}, logits);
        BOOST_FAIL("expected an error");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()).find("was changed on disk since it was loaded") != std::string::npos, e.what());
    }
}

BOOST_AUTO_TEST_CASE(read_speed_is_measured) {
    auto f = gguf::File::open((test::data_dir() / "golden/models/llama-f32.gguf").string());
    BOOST_TEST(measure_read_speed(*f, 4 << 20) > 0);
}

BOOST_AUTO_TEST_SUITE_END()
