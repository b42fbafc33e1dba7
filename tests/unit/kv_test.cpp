// tests/unit/kv_test.cpp — KV blocks (growth, copy-on-write, sharing, the ledger, the file
// form) and the prefix cache's index (lookup along a chain, deduplication, LRU order).
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <numeric>

#include "kv/kv_cache.h"
#include "kv/prefix_cache.h"

using namespace strata::kv;

namespace {

constexpr int32_t kLayers = 3, kDim = 8;

// Position p of layer l holds the value `tag + p + d` in element d of its key and
// `tag + p + d + 1000` in its value.
void fill(KvCache& c, int32_t from, int32_t n, uint16_t tag) {
    c.reserve_append(n);
    uint16_t k[kDim], v[kDim];
    for (int32_t p = from; p < from + n; ++p)
        for (int32_t l = 0; l < kLayers; ++l) {
            for (int32_t d = 0; d < kDim; ++d) {
                k[d] = static_cast<uint16_t>(tag + p + d);
                v[d] = static_cast<uint16_t>(tag + p + d + 1000);
            }
            c.store(l, p, k, v);
        }
    c.commit(n);
}

bool holds(const KvCache& c, int32_t from, int32_t n, uint16_t tag) {
    uint16_t k[kDim], v[kDim];
    for (int32_t p = from; p < from + n; ++p)
        for (int32_t l = 0; l < kLayers; ++l) {
            c.load(l, p, k, v);
            for (int32_t d = 0; d < kDim; ++d)
                if (k[d] != static_cast<uint16_t>(tag + p + d) || v[d] != static_cast<uint16_t>(tag + p + d + 1000)) return false;
            // The attention view: keys transposed per block, values as rows.
            if (c.k_block(l, p)[(kDim - 1) * kBlockTokens + p % kBlockTokens] != k[kDim - 1] || c.v(l, p)[0] != v[0]) return false;
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
    KvCache c(kLayers, kDim, 100, ledger);
    fill(c, 0, 20, 0);
    BOOST_TEST(c.size() == 20);
    BOOST_TEST(ledger->blocks() == 2u);
    BOOST_TEST(ledger->bytes() == 2 * c.block_bytes());
    BOOST_TEST(c.bytes_per_position() == uint64_t(kLayers) * 2 * kDim * 2);
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
    KvCache a(kLayers, kDim, 64, ledger), b(kLayers, kDim, 64, ledger);
    fill(a, 0, 32, 0);
    b.adopt(a.block(0));
    b.adopt(a.block(1));
    BOOST_TEST(ledger->blocks() == 2u);  // shared, not copied
    BOOST_TEST(holds(b, 0, 32, 0));
    // b rewrites from position 20 on: its second block becomes its own, a's stays intact.
    b.truncate(20);
    fill(b, 20, 12, 500);
    BOOST_TEST(ledger->blocks() == 3u);
    BOOST_TEST(b.block(0) == a.block(0));
    BOOST_TEST(b.block(1) != a.block(1));
    BOOST_TEST(holds(a, 0, 32, 0));
    BOOST_TEST(holds(b, 0, 20, 0));
    BOOST_TEST(holds(b, 20, 12, 500));
}

BOOST_AUTO_TEST_CASE(adopt_needs_a_block_boundary) {
    KvCache a(kLayers, kDim, 64), b(kLayers, kDim, 64);
    fill(a, 0, 16, 0);
    fill(b, 0, 3, 0);
    BOOST_CHECK_THROW(b.adopt(a.block(0)), std::logic_error);
}

BOOST_AUTO_TEST_CASE(the_file_form_round_trips_across_blocks) {
    const auto path = std::filesystem::temp_directory_path() / ("strata-kv-test-" + std::to_string(::getpid()));
    KvCache c(kLayers, kDim, 64);
    fill(c, 0, 37, 3);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    c.write(f, 42);
    std::fclose(f);
    auto back = KvCache::load(path.string(), 42, kLayers, kDim, 64);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST(back->size() == 37);
    BOOST_TEST(holds(*back, 0, 37, 3));
    BOOST_TEST(!KvCache::load(path.string(), 43, kLayers, kDim, 64).has_value());  // another model
    BOOST_TEST(!KvCache::load(path.string(), 42, kLayers, kDim, 16).has_value());  // over capacity
    std::filesystem::remove(path);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(prefix_cache)

BOOST_AUTO_TEST_CASE(a_later_sequence_shares_the_blocks_of_its_prefix) {
    auto ledger = std::make_shared<Ledger>();
    PrefixCache pc;
    KvCache a(kLayers, kDim, 256, ledger);
    const auto ta = tokens(50);
    fill(a, 0, 50, 0);
    pc.insert(ta, a, 1);
    BOOST_TEST(pc.entries() == 3u);  // full blocks only

    // Same first 40 tokens, then different ones: two blocks are shared.
    auto tb = tokens(60);
    tb[40] = 999;
    KvCache b(kLayers, kDim, 256, ledger);
    BOOST_TEST(pc.extend(tb, b, 59, 2) == 32);
    BOOST_TEST(b.block(0) == a.block(0));
    BOOST_TEST(b.block(1) == a.block(1));
    BOOST_TEST(holds(b, 0, 32, 0));
    BOOST_TEST(pc.stats().hits == 1u);
    BOOST_TEST(pc.stats().blocks_reused == 2u);

    // The limit keeps the last token to compute: a prompt of exactly 48 known tokens reuses 32.
    KvCache c(kLayers, kDim, 256, ledger);
    BOOST_TEST(pc.extend(tokens(48), c, 47, 3) == 32);
    // A different first token shares nothing, and neither does a cache off a block boundary.
    KvCache d(kLayers, kDim, 256, ledger);
    BOOST_TEST(pc.extend(tokens(48, 2), d, 47, 4) == 0);
    fill(d, 0, 3, 0);
    BOOST_TEST(pc.extend(ta, d, 49, 5) == 0);
    BOOST_TEST(pc.stats().lookups == 4u);
}

BOOST_AUTO_TEST_CASE(equal_prefixes_computed_twice_are_stored_once) {
    auto ledger = std::make_shared<Ledger>();
    PrefixCache pc;
    KvCache a(kLayers, kDim, 64, ledger), b(kLayers, kDim, 64, ledger);
    fill(a, 0, 32, 0);
    fill(b, 0, 40, 0);
    pc.insert(tokens(32), a, 1);
    BOOST_TEST(ledger->blocks() == 5u);
    pc.insert(tokens(40), b, 2);  // b's two full blocks are a's: b now shares them
    BOOST_TEST(b.block(0) == a.block(0));
    BOOST_TEST(b.block(1) == a.block(1));
    BOOST_TEST(ledger->blocks() == 3u);
    BOOST_TEST(holds(b, 0, 40, 0));
    BOOST_TEST(pc.bytes_held_alone() == 0u);
}

BOOST_AUTO_TEST_CASE(eviction_is_least_recent_first_and_trims_prefixes_from_their_ends) {
    auto ledger = std::make_shared<Ledger>();
    PrefixCache pc;
    {
        KvCache a(kLayers, kDim, 64, ledger), b(kLayers, kDim, 64, ledger);
        fill(a, 0, 48, 0);
        fill(b, 0, 16, 100);
        pc.insert(tokens(48), a, 1);       // three blocks at tick 1
        pc.insert(tokens(16, 500), b, 2);  // one block at tick 2
    }
    BOOST_TEST(pc.bytes_held_alone() == ledger->bytes());
    BOOST_TEST(pc.oldest_tick() == 1u);
    pc.evict_oldest();  // a's third block goes first: the first two still serve a prefix
    KvCache c(kLayers, kDim, 64, ledger);
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
