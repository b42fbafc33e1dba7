// tests/unit/kv_test.cpp — KV blocks (growth, copy-on-write, sharing, the ledger, the file
// form, version 1 files), recurrent layers' state (counted, copied on write, never cut back
// to a shorter prefix, saved, kept out of the prefix cache), the pool of huge-page chunks they live in, and the prefix cache's index (lookup
// along a chain, deduplication, LRU order).
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <cmath>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <unistd.h>

#include "kv/block_pool.h"
#include "kv/kv_cache.h"
#include "kv/prefix_cache.h"
#include "tensor/fp16.h"

using namespace strata::kv;

namespace {

constexpr int32_t kLayers = 3, kDim = 8;

// Position p of layer l holds the value `tag + p + d` in element d of its key and
// `tag + p + d + 1000` in its value (integers below 2048: exact in F16).
void fill(KvCache& c, int32_t from, int32_t n, uint16_t tag) {
    c.reserve_append(n);
    float k[kDim], v[kDim];
    for (int32_t p = from; p < from + n; ++p)
        for (int32_t l = 0; l < kLayers; ++l) {
            if (!c.has_kv(l)) continue;
            for (int32_t d = 0; d < kDim; ++d) {
                k[d] = float(tag + p + d);
                v[d] = float(tag + p + d + 1000);
            }
            c.store(l, p, k, v);
        }
    c.commit(n);
}

// Checks fill()'s values at positions [from, from + n) of every layer (of a sliding-window
// layer, those its next position's window reaches).
bool holds(const KvCache& c, int32_t from, int32_t n, uint16_t tag) {
    float k[kDim], v[kDim];
    for (int32_t l = 0; l < kLayers; ++l)
        for (int32_t p = c.sliding(l) ? std::max(from, c.window_start(c.size())) : from; c.has_kv(l) && p < from + n; ++p) {
            c.load(l, p, k, v);
            for (int32_t d = 0; d < kDim; ++d)
                if (k[d] != float(tag + p + d) || v[d] != float(tag + p + d + 1000)) return false;
            // The attention view: keys transposed per block, values as rows.
            const auto* kt = reinterpret_cast<const uint16_t*>(c.k_block(l, p));
            const auto* vr = reinterpret_cast<const uint16_t*>(c.v(l, p));
            if (strata::fp16_to_fp32(kt[(kDim - 1) * kBlockTokens + p % kBlockTokens]) != k[kDim - 1] || strata::fp16_to_fp32(vr[0]) != v[0])
                return false;
        }
    return true;
}

std::vector<int32_t> tokens(int32_t n, int32_t first = 1) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    std::iota(t.begin(), t.end(), first);
    return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kv_cache)

BOOST_AUTO_TEST_CASE(blocks_grow_truncate_and_count_in_the_ledger) {
    auto ledger = std::make_shared<Ledger>();
    KvCache c({kLayers, kDim}, 100, ledger);
    fill(c, 0, 20, 0);
    BOOST_TEST(c.size() == 20);
    BOOST_TEST(ledger->blocks() == 2u);
    BOOST_TEST(ledger->bytes() == c.bytes());
    BOOST_TEST(c.bytes_for(kBlockTokens) == uint64_t(kLayers) * 2 * kDim * 2 * kBlockTokens);
    BOOST_TEST(holds(c, 0, 20, 0));
    BOOST_TEST(KvCache::run(0) == kBlockTokens);
    BOOST_TEST(KvCache::run(20) == 2 * kBlockTokens - 20);
    c.truncate(16);
    BOOST_TEST(ledger->blocks() == 1u);
    fill(c, 16, 84, 7);
    BOOST_TEST(holds(c, 0, 16, 0));
    BOOST_TEST(holds(c, 16, 84, 7));
    BOOST_CHECK_THROW(c.reserve_append(1), std::length_error);
    c.truncate(0);
    BOOST_TEST(ledger->bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(a_shared_block_is_copied_before_it_is_written) {
    auto ledger = std::make_shared<Ledger>();
    KvCache a({kLayers, kDim}, 64, ledger), b({kLayers, kDim}, 64, ledger);
    fill(a, 0, 32, 0);
    b.adopt(a.block(0));
    b.adopt(a.block(1));
    BOOST_TEST(ledger->blocks() == 2u);  // shared, not copied
    BOOST_TEST(holds(b, 0, 32, 0));
    // b rewrites from position 20 on: its second block becomes its own, a's stays intact.
    b.truncate(20);
    fill(b, 20, 12, 500);
    BOOST_TEST(ledger->blocks() == 3u);
    BOOST_TEST(b.block(0).full == a.block(0).full);
    BOOST_TEST(b.block(1).full != a.block(1).full);
    BOOST_TEST(holds(a, 0, 32, 0));
    BOOST_TEST(holds(b, 0, 20, 0));
    BOOST_TEST(holds(b, 20, 12, 500));
}

BOOST_AUTO_TEST_CASE(adopt_needs_a_block_boundary) {
    KvCache a({kLayers, kDim}, 64), b({kLayers, kDim}, 64);
    fill(a, 0, 16, 0);
    fill(b, 0, 3, 0);
    BOOST_CHECK_THROW(b.adopt(a.block(0)), std::logic_error);
}

BOOST_AUTO_TEST_CASE(the_file_form_round_trips_across_blocks) {
    const auto path = std::filesystem::temp_directory_path() / ("strata-kv-test-" + std::to_string(::getpid()));
    KvCache c({kLayers, kDim}, 64);
    fill(c, 0, 37, 3);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    c.write(f, 42);
    std::fclose(f);
    auto back = KvCache::load(path.string(), 42, {kLayers, kDim}, 64);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST(back->size() == 37);
    BOOST_TEST(holds(*back, 0, 37, 3));
    BOOST_TEST(!KvCache::load(path.string(), 43, {kLayers, kDim}, 64).has_value());  // another model
    BOOST_TEST(!KvCache::load(path.string(), 42, {kLayers, kDim}, 16).has_value());  // over capacity
    std::filesystem::remove(path);
}

// A file of version 1 (every layer's keys and values, no state) still loads.
BOOST_AUTO_TEST_CASE(a_version_1_file_still_loads) {
    const auto path = std::filesystem::temp_directory_path() / ("strata-kv-test-v1-" + std::to_string(::getpid()));
    KvCache c({kLayers, kDim}, 64);
    fill(c, 0, 21, 5);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    c.write(f, 42);
    std::fclose(f);
    // Version 2 without recurrent layers is version 1 followed by a count of 0 state floats.
    const auto size = std::filesystem::file_size(path);
    std::filesystem::resize_file(path, size - sizeof(uint64_t));
    f = std::fopen(path.c_str(), "r+b");
    const uint32_t v1 = 1;
    std::fseek(f, 8, SEEK_SET);
    std::fwrite(&v1, sizeof v1, 1, f);
    std::fclose(f);
    auto back = KvCache::load(path.string(), 42, {kLayers, kDim}, 64);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST(back->size() == 21);
    BOOST_TEST(holds(*back, 0, 21, 5));
    BOOST_TEST(!KvCache::load(path.string(), 42, {kLayers, kDim, 0, {}, {0, 10, 0}}, 64).has_value());  // no state in it
    std::filesystem::remove(path);
}

// Layer 1 keeps 10 floats of state instead of keys and values.
BOOST_AUTO_TEST_CASE(a_recurrent_state_is_counted_copied_on_write_and_never_cut_back) {
    const Shape shape{kLayers, kDim, 0, {}, {0, 10, 0}};
    auto ledger = std::make_shared<Ledger>();
    KvCache c(shape, 64, ledger);
    BOOST_TEST(c.recurrent());
    BOOST_TEST(!c.has_kv(1));
    BOOST_TEST(c.state(0) == nullptr);
    BOOST_TEST(ledger->bytes() == 40u);
    fill(c, 0, 20, 7);
    const uint64_t layer_bytes = c.format(0).layer_bytes();
    BOOST_TEST(c.bytes() == 2 * 2 * layer_bytes + 40);  // 2 blocks of 2 KV layers
    BOOST_TEST(c.bytes_for(20) == c.bytes());
    std::iota(c.state(1), c.state(1) + 10, 1.0f);
    KvCache copy = c;  // shares the state until a pass writes it
    BOOST_TEST(ledger->bytes() == c.bytes());
    copy.reserve_append(1);
    BOOST_TEST(copy.state(1) != c.state(1));
    BOOST_TEST(std::equal(c.state(1), c.state(1) + 10, copy.state(1)));
    copy.state(1)[0] = 99;
    BOOST_TEST(c.state(1)[0] == 1.0f);
    BOOST_TEST(c.truncate(20) == 20);  // where the state is: kept
    BOOST_TEST(c.state(1)[9] == 10.0f);
    BOOST_TEST(c.truncate(19) == 0);  // before it: gone, the state zero
    BOOST_TEST(std::all_of(c.state(1), c.state(1) + 10, [](float x) { return x == 0.0f; }));
    // The prefix cache gives a recurrent cache nothing without a snapshot of its state.
    PrefixCache prefixes;
    prefixes.insert(tokens(20), copy, 1);
    KvCache empty(shape, 64, ledger);
    BOOST_TEST(prefixes.extend(tokens(20), empty, 20, 2) == 0);
    BOOST_CHECK_THROW(empty.adopt(copy.block(0)), std::logic_error);
}

// A snapshot at position 20 (a full block and 4 positions): an empty cache along the same
// tokens continues from it (the blocks, the partial block, the state), sharing them until
// it writes; other tokens get nothing; the snapshot is stored once and counts as held alone.
BOOST_AUTO_TEST_CASE(a_recurrent_snapshot_is_continued_from) {
    const Shape shape{kLayers, kDim, 0, {}, {0, 10, 0}};
    auto ledger = std::make_shared<Ledger>();
    PrefixCache prefixes;
    {
        KvCache c(shape, 64, ledger);
        fill(c, 0, 20, 4);
        std::iota(c.state(1), c.state(1) + 10, 3.0f);
        const Snapshot snap = c.snapshot();
        prefixes.insert(tokens(21), c, 1, &snap);
        prefixes.insert(tokens(21), c, 2, &snap);  // the same position again: stored once
        fill(c, 20, 5, 9);                           // the live cache moves on (copy-on-write)
        c.state(1)[0] = -1;
    }
    BOOST_TEST(prefixes.entries() == 1u);
    BOOST_TEST(prefixes.bytes_held_alone() > 40u);
    KvCache again(shape, 64, ledger);
    BOOST_TEST(prefixes.extend(tokens(24), again, 23, 3) == 20);
    BOOST_TEST(again.size() == 20);
    BOOST_TEST(holds(again, 0, 20, 4));
    BOOST_TEST(again.state(1)[0] == 3.0f);
    BOOST_TEST(again.state(1)[9] == 12.0f);
    KvCache short_limit(shape, 64, ledger), other(shape, 64, ledger);
    BOOST_TEST(prefixes.extend(tokens(24), short_limit, 19, 4) == 0);
    BOOST_TEST(prefixes.extend(tokens(24, 2), other, 23, 4) == 0);
    fill(again, 20, 2, 4);  // writing copies the shared partial block and state first
    BOOST_TEST(again.state_ref().use_count() == 1);
}

BOOST_AUTO_TEST_CASE(a_recurrent_state_round_trips_through_the_file) {
    const auto path = std::filesystem::temp_directory_path() / ("strata-kv-test-state-" + std::to_string(::getpid()));
    const Shape shape{kLayers, kDim, 0, {}, {0, 10, 0}};
    KvCache c(shape, 64);
    fill(c, 0, 19, 2);
    std::iota(c.state(1), c.state(1) + 10, 0.5f);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    c.write(f, 42);
    std::fclose(f);
    auto back = KvCache::load(path.string(), 42, shape, 64);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST(back->size() == 19);
    BOOST_TEST(holds(*back, 0, 19, 2));
    BOOST_TEST(std::equal(c.state(1), c.state(1) + 10, back->state(1)));
    BOOST_TEST(!KvCache::load(path.string(), 42, {kLayers, kDim, 0, {}, {0, 12, 0}}, 64).has_value());  // another state size
    BOOST_TEST(!KvCache::load(path.string(), 42, {kLayers, kDim}, 64).has_value());                      // no recurrent layer
    std::filesystem::remove(path);
}

// Q8_0: about half the bytes; every value within half a quantization step (max / 254) of
// what was stored, plus the rounding of the step to F16 (values are rounded with the float
// step, read back with the F16 one, as GGML does: up to 127 * 2^-11 of a step), in the
// cache and after the file round trip; geometry it cannot hold is refused.
BOOST_AUTO_TEST_CASE(q8_0_blocks_round_to_half_a_step) {
    constexpr int32_t dim = 64;
    KvCache f16({2, dim}, 64), q8({2, dim}, 64, nullptr, KvType::Q8_0);
    BOOST_TEST(q8.bytes_for(64) * 100 < f16.bytes_for(64) * 54);
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> k(size_t(dim) * 40), v(size_t(dim) * 40);
    for (auto& x : k) x = normal(rng);
    for (auto& x : v) x = normal(rng);
    q8.reserve_append(40);
    for (int32_t p = 0; p < 40; ++p)
        for (int32_t l = 0; l < 2; ++l) q8.store(l, p, k.data() + size_t(p) * dim, v.data() + size_t(p) * dim);
    q8.commit(40);
    auto within = [&](const KvCache& c) {
        std::vector<float> kb(dim), vb(dim);
        for (int32_t p = 0; p < 40; ++p) {
            c.load(1, p, kb.data(), vb.data());
            for (int32_t c32 = 0; c32 < dim / 32; ++c32) {
                float kmax = 0, vmax = 0;
                for (int i = 0; i < 32; ++i) {
                    kmax = std::max(kmax, std::fabs(k[size_t(p) * dim + c32 * 32 + i]));
                    vmax = std::max(vmax, std::fabs(v[size_t(p) * dim + c32 * 32 + i]));
                }
                for (int i = 0; i < 32; ++i) {
                    const size_t e = size_t(p) * dim + c32 * 32 + i;
                    if (std::fabs(kb[c32 * 32 + i] - k[e]) > kmax / 254 * 1.13f || std::fabs(vb[c32 * 32 + i] - v[e]) > vmax / 254 * 1.13f)
                        return false;
                }
            }
        }
        return true;
    };
    BOOST_TEST(within(q8));
    const auto path = std::filesystem::temp_directory_path() / ("strata-kv-q8-" + std::to_string(::getpid()));
    std::FILE* out = std::fopen(path.c_str(), "wb");
    q8.write(out, 7);
    std::fclose(out);
    auto back = KvCache::load(path.string(), 7, {2, dim}, 64, nullptr, KvType::Q8_0);
    std::filesystem::remove(path);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST(within(*back));
    BOOST_CHECK_THROW(KvCache({2, 48}, 64, nullptr, KvType::Q8_0), std::invalid_argument);
    BOOST_TEST(kv_type_name(KvType::Q8_0) == "q8_0");
    BOOST_TEST((kv_type_from_name("f16") == KvType::F16));
    BOOST_TEST(!kv_type_from_name("q4_0").has_value());
}

// Layers 0 and 2 attend to a window of 20 positions (layer 1 to all): grown one position at
// a time to 100, they keep the window and one block of slack (positions 65..99: blocks 4
// to 6), layer 1 every block; a step back within the slack keeps the cache, one behind it
// empties it; the file form round-trips what is kept, and loading it holds no more.
BOOST_AUTO_TEST_CASE(sliding_window_layers_keep_only_the_window) {
    const Shape shape{kLayers, kDim, 20, {true, false, true}};
    auto ledger = std::make_shared<Ledger>();
    KvCache c(shape, 128, ledger);
    for (int32_t p = 0; p < 100; ++p) fill(c, p, 1, 0);
    BOOST_TEST(c.window_start(100) == 81);
    BOOST_TEST(!c.block(3).window);
    BOOST_TEST(bool(c.block(4).window));
    BOOST_TEST(ledger->blocks() == 7u + 3u);  // 7 full-layer parts, 3 window parts
    BOOST_TEST(c.bytes() == ledger->bytes());
    BOOST_TEST(c.bytes() <= c.bytes_for(100));
    BOOST_TEST(c.bytes_for(100) == (7u + 2u * 4u) * c.format(0).layer_bytes());  // at most 4 window blocks
    BOOST_TEST(KvCache({kLayers, kDim}, 128).bytes_for(100) == 3u * 7u * c.format(0).layer_bytes());
    BOOST_TEST(holds(c, 0, 100, 0));
    // A prompt fed in one pass holds its window layers' blocks until it is committed.
    KvCache whole(shape, 128);
    whole.reserve_ahead(100);
    BOOST_TEST(!whole.block(6).window);
    fill(whole, 0, 100, 0);
    BOOST_TEST(whole.bytes() == c.bytes());
    BOOST_TEST(holds(whole, 0, 100, 0));

    const auto path = std::filesystem::temp_directory_path() / ("strata-kv-window-" + std::to_string(::getpid()));
    std::FILE* f = std::fopen(path.c_str(), "wb");
    c.write(f, 9);
    std::fclose(f);
    auto back = KvCache::load(path.string(), 9, shape, 128, ledger);
    std::filesystem::remove(path);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST(back->size() == 100);
    BOOST_TEST(holds(*back, 0, 100, 0));
    BOOST_TEST(back->bytes() == c.bytes());

    BOOST_TEST(c.truncate(90) == 90);  // window_start(90) = 71: block 4 on, still kept
    BOOST_TEST(holds(c, 0, 90, 0));
    fill(c, 90, 10, 0);
    BOOST_TEST(c.truncate(80) == 0);   // window_start(80) = 61: block 3 was let go
    BOOST_TEST(ledger->bytes() == back->bytes());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(prefix_cache)

BOOST_AUTO_TEST_CASE(a_later_sequence_shares_the_blocks_of_its_prefix) {
    auto ledger = std::make_shared<Ledger>();
    PrefixCache pc;
    KvCache a({kLayers, kDim}, 256, ledger);
    const auto ta = tokens(50);
    fill(a, 0, 50, 0);
    pc.insert(ta, a, 1);
    BOOST_TEST(pc.entries() == 3u);  // full blocks only

    // Same first 40 tokens, then different ones: two blocks are shared.
    auto tb = tokens(60);
    tb[40] = 999;
    KvCache b({kLayers, kDim}, 256, ledger);
    BOOST_TEST(pc.extend(tb, b, 59, 2) == 32);
    BOOST_TEST(b.block(0).full == a.block(0).full);
    BOOST_TEST(b.block(1).full == a.block(1).full);
    BOOST_TEST(holds(b, 0, 32, 0));
    BOOST_TEST(pc.stats().hits == 1u);
    BOOST_TEST(pc.stats().blocks_reused == 2u);

    // The limit keeps the last token to compute: a prompt of exactly 48 known tokens reuses 32.
    KvCache c({kLayers, kDim}, 256, ledger);
    BOOST_TEST(pc.extend(tokens(48), c, 47, 3) == 32);
    // A different first token shares nothing, and neither does a cache off a block boundary.
    KvCache d({kLayers, kDim}, 256, ledger);
    BOOST_TEST(pc.extend(tokens(48, 2), d, 47, 4) == 0);
    fill(d, 0, 3, 0);
    BOOST_TEST(pc.extend(ta, d, 49, 5) == 0);
    BOOST_TEST(pc.stats().lookups == 4u);
}

BOOST_AUTO_TEST_CASE(equal_prefixes_computed_twice_are_stored_once) {
    auto ledger = std::make_shared<Ledger>();
    PrefixCache pc;
    KvCache a({kLayers, kDim}, 64, ledger), b({kLayers, kDim}, 64, ledger);
    fill(a, 0, 32, 0);
    fill(b, 0, 40, 0);
    pc.insert(tokens(32), a, 1);
    BOOST_TEST(ledger->blocks() == 5u);
    pc.insert(tokens(40), b, 2);  // b's two full blocks are a's: b now shares them
    BOOST_TEST(b.block(0).full == a.block(0).full);
    BOOST_TEST(b.block(1).full == a.block(1).full);
    BOOST_TEST(ledger->blocks() == 3u);
    BOOST_TEST(holds(b, 0, 40, 0));
    BOOST_TEST(pc.bytes_held_alone() == 0u);
}

// With sliding-window layers a prefix is reused up to where the cached blocks still hold
// the window: a sequence remembered at 40 and again at 100 positions gives its first 32
// (window parts kept from the first time) and its first 96, not 48 or 64 (let go).
BOOST_AUTO_TEST_CASE(a_prefix_is_reused_where_its_window_was_kept) {
    const Shape shape{kLayers, kDim, 20, {true, false, true}};
    auto ledger = std::make_shared<Ledger>();
    PrefixCache pc;
    KvCache a(shape, 128, ledger);
    const auto t = tokens(100);
    for (int32_t p = 0; p < 100; ++p) {
        fill(a, p, 1, 0);
        if (p + 1 == 40 || p + 1 == 100) pc.insert(t, a, 1);
    }
    const auto reused = [&](int32_t limit) {
        KvCache b(shape, 128, ledger);
        const int32_t n = pc.extend(t, b, limit, 2);
        BOOST_TEST(holds(b, 0, n, 0));
        return n;
    };
    BOOST_TEST(reused(99) == 96);
    BOOST_TEST(reused(70) == 32);  // 64 would need blocks 2 and 3's window parts
    BOOST_TEST(reused(47) == 32);
    BOOST_TEST(reused(31) == 16);
}

BOOST_AUTO_TEST_CASE(eviction_is_least_recent_first_and_trims_prefixes_from_their_ends) {
    auto ledger = std::make_shared<Ledger>();
    PrefixCache pc;
    {
        KvCache a({kLayers, kDim}, 64, ledger), b({kLayers, kDim}, 64, ledger);
        fill(a, 0, 48, 0);
        fill(b, 0, 16, 100);
        pc.insert(tokens(48), a, 1);       // three blocks at tick 1
        pc.insert(tokens(16, 500), b, 2);  // one block at tick 2
    }
    BOOST_TEST(pc.bytes_held_alone() == ledger->bytes());
    BOOST_TEST(pc.oldest_tick() == 1u);
    pc.evict_oldest();  // a's third block goes first: the first two still serve a prefix
    KvCache c({kLayers, kDim}, 64, ledger);
    BOOST_TEST(pc.extend(tokens(48), c, 48, 3) == 32);
    BOOST_TEST(pc.oldest_tick() == 2u);  // the extend made a's blocks recent
    pc.evict_oldest();
    BOOST_TEST(pc.entries() == 2u);
    BOOST_TEST(pc.stats().evictions == 2u);
    c.truncate(0);
    pc.clear();
    BOOST_TEST(ledger->bytes() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(block_pool)

constexpr uint64_t kHuge = 2ull << 20;

BOOST_AUTO_TEST_CASE(a_chunk_spans_the_fewest_huge_pages_that_waste_at_most_a_sixteenth) {
    BOOST_TEST(BlockPool::chunk_pages(512 << 10) == 1u);     // a 1B model's F16 block: 4 to a page
    BOOST_TEST(BlockPool::chunk_pages(kHuge) == 1u);         // an 8B model's
    BOOST_TEST(BlockPool::chunk_pages(3 * kHuge / 2) == 3u);  // 2 pages hold 2 slots and waste a quarter
    BOOST_TEST(BlockPool::chunk_pages(1114112) == 5u);       // an 8B model's Q8_0 block (1.06 MiB): 9 slots
    BOOST_TEST(BlockPool::chunk_pages(1000) == 1u);
}

BOOST_AUTO_TEST_CASE(slots_are_reused_zeroed_and_chunks_mapped_only_when_all_are_taken) {
    BlockPool pool;
    const size_t slot = 512 << 10;  // 4 to a chunk
    std::vector<uint8_t*> taken;
    for (int i = 0; i < 4; ++i) taken.push_back(pool.take(slot));
    BOOST_TEST(reinterpret_cast<uintptr_t>(taken[0]) % kHuge == 0u);  // a chunk starts on a huge page
    BOOST_TEST(pool.mapped_bytes() == kHuge);
    const auto at = [](const uint8_t* p) { return reinterpret_cast<uintptr_t>(p); };
    for (int i = 1; i < 4; ++i) BOOST_TEST(at(taken[size_t(i)]) == at(taken[0] + i * slot));
    taken.push_back(pool.take(slot));
    BOOST_TEST(pool.mapped_bytes() == 2 * kHuge);
    std::memset(taken[1], 0xab, slot);
    pool.give(taken[1], slot);
    uint8_t* again = pool.take(slot);
    BOOST_TEST(at(again) == at(taken[1]));  // the fuller chunk's free slot, before the emptier's
    BOOST_TEST(std::all_of(again, again + slot, [](uint8_t b) { return b == 0; }));
    BOOST_TEST(pool.mapped_bytes() == 2 * kHuge);
    for (uint8_t* p : taken) pool.give(p, slot);
    BOOST_TEST(pool.mapped_bytes() == kHuge);  // one empty chunk is kept for the next block
    // Another size has chunks of its own.
    uint8_t* other = pool.take(3 * kHuge / 2);
    BOOST_TEST(pool.mapped_bytes() == 4 * kHuge);
    pool.give(other, 3 * kHuge / 2);
    BOOST_TEST(at(pool.take(slot)) - at(taken[0]) < kHuge);  // the first chunk to empty is the one kept
}

BOOST_AUTO_TEST_CASE(blocks_may_be_taken_and_given_on_several_threads) {
    BlockPool pool;
    const size_t slot = 256 << 10;  // 8 to a chunk
    std::atomic<bool> intact{true};
    const auto churn = [&](uint8_t tag) {
        std::vector<uint8_t*> mine;
        for (int round = 0; round < 50; ++round) {
            for (int i = 0; i < 8; ++i) {
                mine.push_back(pool.take(slot));
                std::memset(mine.back(), tag, slot);
            }
            for (uint8_t* p : mine)
                if (p[0] != tag || p[slot - 1] != tag) intact = false;
            for (uint8_t* p : mine) pool.give(p, slot);
            mine.clear();
        }
    };
    std::thread a(churn, uint8_t(1)), b(churn, uint8_t(2));
    a.join();
    b.join();
    BOOST_TEST(intact.load());
    BOOST_TEST(pool.mapped_bytes() == kHuge);  // at most 16 slots were taken at once: 2 chunks, one kept
}

BOOST_AUTO_TEST_CASE(the_ledger_maps_what_its_blocks_need) {
    auto ledger = std::make_shared<Ledger>();
    {
        KvCache c({kLayers, kDim}, 1000, ledger);
        fill(c, 0, 1000, 0);
        BOOST_TEST(holds(c, 0, 1000, 0));
        BOOST_TEST(ledger->mapped_bytes() >= ledger->bytes());
        BOOST_TEST(ledger->mapped_bytes() < ledger->bytes() + kHuge);
    }
    BOOST_TEST(ledger->bytes() == 0u);
    BOOST_TEST(ledger->mapped_bytes() == kHuge);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(a_layer_reading_an_earlier_layers_kv_takes_no_room) {
    auto ledger = std::make_shared<Ledger>();
    // Layer 1 is twice as wide; layer 2 reads layer 0's keys and values.
    KvCache c(Shape{.n_layer = 3, .dim = 16, .dims = {8, 16, 8}, .source = {0, 1, 0}}, 64, ledger);
    BOOST_TEST(c.has_kv(0));
    BOOST_TEST(c.has_kv(1));
    BOOST_TEST(!c.has_kv(2));
    BOOST_TEST(c.dim(1) == 16);
    c.reserve_append(1);
    float k[16], v[16];
    for (int d = 0; d < 16; ++d) k[d] = float(d), v[d] = float(d + 100);
    c.store(0, 0, k, v);
    c.store(1, 0, k, v);
    c.commit(1);
    float k2[8], v2[8];
    c.load(2, 0, k2, v2);
    for (int d = 0; d < 8; ++d) BOOST_TEST((k2[d] == float(d) && v2[d] == float(d + 100)));
    BOOST_TEST(c.bytes() == c.format(0).layer_bytes() + c.format(1).layer_bytes());  // one block, layers 0 and 1
    BOOST_TEST(ledger->bytes() == c.bytes());
}
