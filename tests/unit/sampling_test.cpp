// tests/unit/sampling_test.cpp — the sampler chain stage by stage on constructed
// distributions, against simple full-sort reference versions on large vocabularies, seeded
// reproducibility and empirical frequencies, parameter validation, the stop matcher, and
// log-probabilities (against a double-precision reference softmax).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "sampling/logprobs.h"
#include "sampling/params.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "sampling/stop.h"
#include "test_util.h"

using namespace strata::sampling;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Every stage off, temperature 1: a plain draw from softmax(logits).
SamplingParams plain() {
    SamplingParams p;
    p.temperature = 1;
    p.top_k = 0;
    p.top_p = 1;
    p.min_p = 0;
    p.typical_p = 1;
    return p;
}

std::vector<float> logits_of(std::initializer_list<double> probs) {
    std::vector<float> out;
    for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
    return out;
}

std::vector<float> random_logits(size_t n, uint64_t seed, double scale) {
    Rng rng(seed);
    std::vector<float> out(n);
    for (float& x : out) x = static_cast<float>((rng.uniform() * 2 - 1) * scale);
    return out;
}

std::set<int32_t> kept(const Sampler& s) {
    std::set<int32_t> ids;
    for (const Candidate& c : s.candidates()) ids.insert(c.id);
    return ids;
}

// The candidates one sample() with these parameters keeps.
std::set<int32_t> kept_after(const SamplingParams& p, const std::vector<float>& logits) {
    Sampler s(p, static_cast<int32_t>(logits.size()));
    s.sample(logits);
    return kept(s);
}

// plain() with one field changed.
template <class T>
SamplingParams plain_with(T SamplingParams::*field, T value) {
    SamplingParams p = plain();
    p.*field = value;
    return p;
}

double prob_of(const Sampler& s, int32_t id) {
    for (const Candidate& c : s.candidates())
        if (c.id == id) return c.p;
    return 0;
}

// ---- Reference stages: full sorts, written for clarity ---------------------------------

std::vector<int32_t> ids_by_logit(const std::vector<float>& logits, const std::set<int32_t>& among) {
    std::vector<int32_t> ids(among.begin(), among.end());
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    return ids;
}

std::vector<double> normalized(const std::vector<float>& logits, const std::vector<int32_t>& ids) {
    double max = -kInf, sum = 0;
    for (int32_t id : ids) max = std::max<double>(max, logits[id]);
    std::vector<double> p;
    for (int32_t id : ids) sum += std::exp(logits[id] - max);
    for (int32_t id : ids) p.push_back(std::exp(logits[id] - max) / sum);
    return p;
}

std::set<int32_t> all_ids(size_t n) {
    std::set<int32_t> s;
    for (size_t i = 0; i < n; ++i) s.insert(static_cast<int32_t>(i));
    return s;
}

std::set<int32_t> ref_top_k(const std::vector<float>& l, std::set<int32_t> in, size_t k) {
    auto ids = ids_by_logit(l, in);
    if (k == 0 || k >= ids.size()) return in;
    return {ids.begin(), ids.begin() + static_cast<ptrdiff_t>(k)};
}

std::set<int32_t> ref_top_p(const std::vector<float>& l, std::set<int32_t> in, double top_p) {
    auto ids = ids_by_logit(l, in);
    auto p = normalized(l, ids);
    double mass = 0;
    std::set<int32_t> out;
    for (size_t i = 0; i < ids.size(); ++i) {
        out.insert(ids[i]);
        mass += p[i];
        if (mass >= top_p) break;
    }
    return out;
}

std::set<int32_t> ref_min_p(const std::vector<float>& l, std::set<int32_t> in, float min_p) {
    float max = -kInf;
    for (int32_t id : in) max = std::max(max, l[id]);
    std::set<int32_t> out;
    for (int32_t id : in)
        if (l[id] >= max + std::log(min_p)) out.insert(id);
    return out;
}

std::set<int32_t> ref_typical(const std::vector<float>& l, std::set<int32_t> in, double typical_p) {
    std::vector<int32_t> ids(in.begin(), in.end());
    auto p = normalized(l, ids);
    double h = 0;
    for (double x : p)
        if (x > 0) h -= x * std::log(x);
    std::vector<size_t> order(ids.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::fabs(-std::log(p[a]) - h) < std::fabs(-std::log(p[b]) - h);
    });
    double mass = 0;
    std::set<int32_t> out;
    for (size_t i : order) {
        out.insert(ids[i]);
        mass += p[i];
        if (mass > typical_p) break;
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rng)

BOOST_AUTO_TEST_CASE(xoshiro256starstar_known_answers) {
    // The reference generator's first outputs from the state {1, 2, 3, 4}.
    Rng r(0);
    r.set_state(1, 2, 3, 4);
    const uint64_t expected[] = {11520u, 0u, 1509978240u, 1215971899390074240u, 1216172134540287360u,
                                 607988272756665600u};
    for (uint64_t e : expected) BOOST_TEST(r.next() == e);
}

BOOST_AUTO_TEST_CASE(seeding_and_uniform_doubles) {
    Rng a(42), b(42), c(43);
    bool differs = false;
    for (int i = 0; i < 100; ++i) {
        const uint64_t x = a.next();
        BOOST_TEST(x == b.next());
        differs |= x != c.next();
    }
    BOOST_TEST(differs);
    Rng u(7);
    double sum = 0;
    constexpr int n = 100000;
    for (int i = 0; i < n; ++i) {
        const double x = u.uniform();
        BOOST_REQUIRE(x >= 0.0);
        BOOST_REQUIRE(x < 1.0);
        sum += x;
    }
    // Mean of U(0,1): sd of the mean is 1/sqrt(12 n) ~ 0.0009; allow 5 sd.
    BOOST_TEST(std::fabs(sum / n - 0.5) < 0.0046);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(stages)

BOOST_AUTO_TEST_CASE(greedy_is_argmax_with_ties_to_the_lowest_id) {
    SamplingParams p = plain();
    p.temperature = 0;
    Sampler s(p, 5);
    BOOST_TEST(s.sample(std::vector<float>{1, 3, 3, 2, -1}) == 1);
    BOOST_TEST(s.sample(std::vector<float>{7, 3, 7, 7, -1}) == 0);
    BOOST_TEST(s.sample(std::vector<float>{-5, -3, -4, -3, -9}) == 1);
    BOOST_TEST(s.candidates().size() == 1u);
    BOOST_TEST(s.candidates()[0].p == 1.0f);
    // The default filters do not change the argmax.
    SamplingParams d;
    d.temperature = 0;
    Sampler sd(d, 5);
    BOOST_TEST(sd.sample(std::vector<float>{1, 3, 3, 2, -1}) == 1);
}

BOOST_AUTO_TEST_CASE(logit_bias_adds_and_bans) {
    SamplingParams p = plain();
    p.temperature = 0;
    p.logit_bias = {{3, 1.5f}, {3, 0.6f}, {1, -kInf}};
    Sampler s(p, 4);
    // token 3: 2 + 2.1 = 4.1 beats token 0 (4); token 1 is banned.
    BOOST_TEST(s.sample(std::vector<float>{4, 9, 1, 2}) == 3);
    p.temperature = 1;
    Sampler r(p, 4);
    for (int i = 0; i < 200; ++i) BOOST_TEST_REQUIRE(r.sample(std::vector<float>{4, 9, 1, 2}) != 1);
    BOOST_TEST(prob_of(r, 1) == 0.0);
}

BOOST_AUTO_TEST_CASE(top_k_keeps_exactly_k) {
    const auto logits = random_logits(1000, 1, 5);
    for (int32_t k : {1, 2, 10, 64, 65, 999}) {
        SamplingParams p = plain();
        p.top_k = k;
        Sampler s(p, 1000);
        s.sample(logits);
        BOOST_TEST_INFO("k = " << k);
        BOOST_TEST(s.candidates().size() == static_cast<size_t>(k));
        BOOST_TEST(kept(s) == ref_top_k(logits, all_ids(1000), static_cast<size_t>(k)));
        const double total = std::accumulate(s.candidates().begin(), s.candidates().end(), 0.0,
                                             [](double a, const Candidate& c) { return a + c.p; });
        BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-5));
    }
    // Ties at the boundary go to the lower ids; k beyond the vocabulary keeps everything.
    const std::vector<float> ties{1, 5, 5, 5};
    BOOST_TEST((kept_after(plain_with(&SamplingParams::top_k, 2), ties) == std::set<int32_t>{1, 2}));
    BOOST_TEST(kept_after(plain_with(&SamplingParams::top_k, 100), ties).size() == 4u);
}

BOOST_AUTO_TEST_CASE(top_p_keeps_the_smallest_prefix_reaching_p) {
    // ids 0..3 hold 0.1, 0.4, 0.2, 0.3: by probability 1 (0.4), 3 (0.3), 2 (0.2), 0 (0.1).
    const auto logits = logits_of({0.1, 0.4, 0.2, 0.3});
    const std::pair<float, std::set<int32_t>> cases[] = {
        {0.0f, {1}}, {0.35f, {1}}, {0.65f, {1, 3}}, {0.75f, {1, 3, 2}}, {0.95f, {0, 1, 2, 3}}};
    for (const auto& [top_p, want] : cases) {
        BOOST_TEST_INFO("top_p = " << top_p);
        BOOST_TEST(kept_after(plain_with(&SamplingParams::top_p, top_p), logits) == want);
    }
    // Reaching p exactly is enough (>=, as llama.cpp): two equal tokens, p = 0.5 keeps one.
    BOOST_TEST(kept_after(plain_with(&SamplingParams::top_p, 0.5f), {0, 0}).size() == 1u);
    // The kept tokens are renormalised: 0.4 and 0.3 become 4/7 and 3/7.
    Sampler s(plain_with(&SamplingParams::top_p, 0.65f), 4);
    s.sample(logits);
    BOOST_TEST(prob_of(s, 1) == 4.0 / 7, boost::test_tools::tolerance(1e-5));
    BOOST_TEST(prob_of(s, 3) == 3.0 / 7, boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(min_p_threshold_is_relative_to_the_most_likely) {
    // 0.5, 0.2, 0.05, 0.04, 0.21: min_p 0.09 keeps p >= 0.045, min_p 0.3 keeps p >= 0.15.
    const auto logits = logits_of({0.5, 0.2, 0.05, 0.04, 0.21});
    const auto with = [](float min_p) { return plain_with(&SamplingParams::min_p, min_p); };
    BOOST_TEST((kept_after(with(0.09f), logits) == std::set<int32_t>{0, 1, 2, 4}));
    BOOST_TEST((kept_after(with(0.3f), logits) == std::set<int32_t>{0, 1, 4}));
    BOOST_TEST((kept_after(with(1.0f), logits) == std::set<int32_t>{0}));
}

BOOST_AUTO_TEST_CASE(typical_sampling_on_a_hand_computed_entropy) {
    // p = (0.4, 0.3, 0.3). Entropy H = -(0.4 ln 0.4 + 2 * 0.3 ln 0.3) = 0.36652 + 0.72238 = 1.08890.
    // Surprisals: -ln 0.4 = 0.91629 (distance 0.17261), -ln 0.3 = 1.20397 (distance 0.11507),
    // so the typical order is token 1, token 2 (tie, lower id first), then token 0.
    const auto logits = logits_of({0.4, 0.3, 0.3});
    const std::pair<float, std::set<int32_t>> cases[] = {
        {0.2f, {1}}, {0.5f, {1, 2}}, {0.61f, {0, 1, 2}}};
    for (const auto& [typical_p, want] : cases) {
        BOOST_TEST_INFO("typical_p = " << typical_p);
        BOOST_TEST(kept_after(plain_with(&SamplingParams::typical_p, typical_p), logits) == want);
    }
    // Typical needs the mass to exceed p (>, as llama.cpp): four equal tokens are equally
    // typical (ties in id order), and p = 0.5 keeps three of them, not two.
    BOOST_TEST((kept_after(plain_with(&SamplingParams::typical_p, 0.5f), {1, 1, 1, 1}) == std::set<int32_t>{0, 1, 2}));
    // With typical_p 0.5 the most likely token is not typical, so even greedy skips it.
    SamplingParams p = plain();
    p.typical_p = 0.5f;
    p.temperature = 0;
    Sampler g(p, 3);
    BOOST_TEST(g.sample(logits) == 1);
}

BOOST_AUTO_TEST_CASE(temperature_scales_logits_after_the_filters) {
    const std::vector<float> logits{2.0f, 1.0f, 0.0f, -1.0f};
    for (float t : {0.5f, 1.0f, 2.0f, 10.0f}) {
        SamplingParams p = plain();
        p.temperature = t;
        Sampler s(p, 4);
        s.sample(logits);
        BOOST_TEST_INFO("T = " << t);
        for (int32_t i = 1; i < 4; ++i)
            BOOST_TEST(prob_of(s, i) / prob_of(s, 0) == std::exp((logits[i] - logits[0]) / t),
                       boost::test_tools::tolerance(1e-5));
    }
    // min_p judges the untempered distribution: exp(-5) < 0.3 is dropped even at T = 100,
    // where the tempered probabilities would all pass.
    SamplingParams p = plain();
    p.min_p = 0.3f;
    p.temperature = 100;
    Sampler s(p, 3);
    s.sample(std::vector<float>{0, -1, -5});
    BOOST_TEST((kept(s) == std::set<int32_t>{0, 1}));
    BOOST_TEST(prob_of(s, 1) / prob_of(s, 0) == std::exp(-1.0 / 100), boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(penalties_on_known_counts) {
    SamplingParams p = plain();
    p.repeat_penalty = 2;
    p.frequency_penalty = 0.5f;
    p.presence_penalty = 0.25f;
    p.penalty_last_n = 3;
    Sampler s(p, 5);
    for (int32_t t : {1, 1, 2}) s.accept(t);
    s.sample(std::vector<float>{0.5f, 2.0f, -2.0f, 1.0f, 0.0f});
    const auto logit = [&](int32_t id) {
        for (const Candidate& c : s.candidates())
            if (c.id == id) return c.logit;
        return std::numeric_limits<float>::quiet_NaN();
    };
    BOOST_TEST(logit(0) == 0.5f);                     // not in the window
    BOOST_TEST(logit(1) == 2.0f / 2 - (2 * 0.5f + 0.25f));  // count 2, positive: divided
    BOOST_TEST(logit(2) == -2.0f * 2 - (0.5f + 0.25f));     // count 1, negative: multiplied
    BOOST_TEST(logit(3) == 1.0f);
    // The window holds the last 3 tokens: after 3, 4, 4 token 1 is no longer penalised.
    for (int32_t t : {3, 4, 4}) s.accept(t);
    s.sample(std::vector<float>{0.5f, 2.0f, -2.0f, 1.0f, 0.0f});
    BOOST_TEST(logit(1) == 2.0f);
    BOOST_TEST(logit(3) == 1.0f / 2 - (0.5f + 0.25f));
    BOOST_TEST(logit(4) == 0.0f * 2 - (2 * 0.5f + 0.25f));  // zero counts as non-positive
    // reset() empties the window.
    s.reset();
    s.sample(std::vector<float>{0.5f, 2.0f, -2.0f, 1.0f, 0.0f});
    BOOST_TEST(logit(4) == 0.0f);
    // Greedy sees the penalties: the repeated argmax loses.
    SamplingParams g = plain();
    g.temperature = 0;
    g.repeat_penalty = 3;
    Sampler gs(g, 3);
    gs.accept(0);
    BOOST_TEST(gs.sample(std::vector<float>{3.0f, 2.0f, 1.0f}) == 1);
}

BOOST_AUTO_TEST_CASE(min_keep_overrides_the_filters) {
    const auto logits = logits_of({0.1, 0.4, 0.2, 0.3});
    SamplingParams p = plain_with(&SamplingParams::top_p, 0.0f);
    p.min_keep = 3;
    BOOST_TEST((kept_after(p, logits) == std::set<int32_t>{1, 3, 2}));
    p = plain_with(&SamplingParams::min_p, 1.0f);
    p.min_keep = 2;
    BOOST_TEST((kept_after(p, logits) == std::set<int32_t>{1, 3}));
}

BOOST_AUTO_TEST_CASE(large_vocabulary_matches_full_sort_references) {
    // 151936 tokens (Qwen2's vocabulary size); sharp and flat distributions, so that the lazily
    // sorted prefix grows from one chunk to the whole vocabulary.
    constexpr size_t n = 151936;
    for (double scale : {30.0, 3.0, 0.01}) {
        const auto logits = random_logits(n, static_cast<uint64_t>(scale * 100), scale);
        const auto everything = all_ids(n);
        for (float top_p : {0.1f, 0.5f, 0.9f, 0.999f}) {
            BOOST_TEST_INFO("scale " << scale << " top_p " << top_p);
            BOOST_TEST((kept_after(plain_with(&SamplingParams::top_p, top_p), logits) ==
                        ref_top_p(logits, everything, top_p)));
        }
        for (float min_p : {0.01f, 0.5f}) {
            BOOST_TEST_INFO("scale " << scale << " min_p " << min_p);
            BOOST_TEST((kept_after(plain_with(&SamplingParams::min_p, min_p), logits) ==
                        ref_min_p(logits, everything, min_p)));
        }
        BOOST_TEST_INFO("scale " << scale << " typical");
        BOOST_TEST((kept_after(plain_with(&SamplingParams::typical_p, 0.7f), logits) ==
                    ref_typical(logits, everything, 0.7)));
        // The whole default-order chain.
        SamplingParams c = plain();
        c.top_k = 5000;
        c.typical_p = 0.95f;
        c.top_p = 0.9f;
        c.min_p = 0.02f;
        auto want = ref_min_p(logits, ref_top_p(logits, ref_typical(logits, ref_top_k(logits, everything, 5000), 0.95), 0.9), 0.02f);
        BOOST_TEST_INFO("scale " << scale << " chain");
        BOOST_TEST((kept_after(c, logits) == want));
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(draws)

BOOST_AUTO_TEST_CASE(seeded_draws_reproduce) {
    const auto logits = random_logits(32000, 5, 4);
    SamplingParams p;  // defaults: the whole chain
    p.top_k = 0;
    p.min_p = 0.01f;
    p.temperature = 1.5f;
    p.seed = 1234;
    p.repeat_penalty = 1.1f;
    Sampler a(p, 32000), b(p, 32000);
    std::vector<int32_t> first;
    for (int i = 0; i < 50; ++i) {
        const int32_t x = a.sample(logits), y = b.sample(logits);
        BOOST_TEST_REQUIRE(x == y);
        a.accept(x);
        b.accept(y);
        first.push_back(x);
    }
    BOOST_TEST(std::set<int32_t>(first.begin(), first.end()).size() > 10u);
    a.reset();
    for (int i = 0; i < 50; ++i) {
        BOOST_TEST_REQUIRE(a.sample(logits) == first[static_cast<size_t>(i)]);
        a.accept(first[static_cast<size_t>(i)]);
    }
    p.seed = 1235;
    Sampler c(p, 32000);
    size_t same = 0;
    for (int i = 0; i < 50; ++i) same += c.sample(logits) == first[static_cast<size_t>(i)];
    BOOST_TEST(same < 10u);
}

BOOST_AUTO_TEST_CASE(fixed_seed_gives_the_same_sequence_on_every_platform) {
    // Pins the generator, the uniform conversion and the walk over candidates: a change in
    // any of them changes what a given seed produces.
    SamplingParams p = plain();
    p.seed = 2024;
    Sampler s(p, 5);
    std::vector<int32_t> got;
    for (int i = 0; i < 16; ++i) got.push_back(s.sample(logits_of({0.1, 0.2, 0.3, 0.25, 0.15})));
    // Recomputed independently: uniform u from xoshiro256** seeded by splitmix64(2024),
    // token = first i with cumulative(p)[i] > u * total.
    Rng r(2024);
    const double probs[] = {0.1, 0.2, 0.3, 0.25, 0.15};
    for (int i = 0; i < 16; ++i) {
        const double u = r.uniform();
        double cum = 0;
        int32_t want = 4;
        for (int32_t t = 0; t < 5; ++t) {
            cum += probs[t];
            if (cum > u) {
                want = t;
                break;
            }
        }
        BOOST_TEST(got[static_cast<size_t>(i)] == want);
    }
}

BOOST_AUTO_TEST_CASE(empirical_frequencies_match_the_distribution) {
    const double probs[] = {0.5, 0.25, 0.15, 0.07, 0.03};
    const auto logits = logits_of({0.5, 0.25, 0.15, 0.07, 0.03});
    constexpr int n = 200000;
    SamplingParams p = plain();
    p.seed = 99;
    Sampler s(p, 5);
    std::vector<int> counts(5);
    for (int i = 0; i < n; ++i) ++counts[static_cast<size_t>(s.sample(logits))];
    for (size_t t = 0; t < 5; ++t) {
        const double f = static_cast<double>(counts[t]) / n;
        const double sd = std::sqrt(probs[t] * (1 - probs[t]) / n);
        BOOST_TEST_INFO("token " << t << " frequency " << f);
        BOOST_TEST(std::fabs(f - probs[t]) < 5 * sd);
    }
    // top-k 2 then temperature 2: p ~ (0.5^(1/2), 0.25^(1/2)) normalised.
    p.top_k = 2;
    p.temperature = 2;
    Sampler k(p, 5);
    std::vector<int> kc(5);
    for (int i = 0; i < n; ++i) ++kc[static_cast<size_t>(k.sample(logits))];
    const double p0 = std::sqrt(0.5) / (std::sqrt(0.5) + std::sqrt(0.25));
    BOOST_TEST(kc[2] + kc[3] + kc[4] == 0);
    BOOST_TEST(std::fabs(static_cast<double>(kc[0]) / n - p0) < 5 * std::sqrt(p0 * (1 - p0) / n));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(bad_input)

void expect_field(const SamplingParams& p, const std::string& field) {
    try {
        Sampler s(p, 100);
        BOOST_ERROR("no error for " << field);
    } catch (const SamplingError& e) {
        BOOST_TEST(e.field() == field);
        BOOST_TEST(std::string(e.what()).find(field) != std::string::npos, e.what());
    }
}

BOOST_AUTO_TEST_CASE(parameters_out_of_range_name_the_field) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::pair<std::function<void(SamplingParams&)>, std::string> cases[] = {
        {[&](SamplingParams& p) { p.temperature = nan; }, "temperature"},
        {[](SamplingParams& p) { p.temperature = -0.1f; }, "temperature"},
        {[](SamplingParams& p) { p.temperature = 1e30f; }, "temperature"},
        {[](SamplingParams& p) { p.temperature = kInf; }, "temperature"},
        {[](SamplingParams& p) { p.top_k = -1; }, "top_k"},
        {[](SamplingParams& p) { p.top_p = 1.5f; }, "top_p"},
        {[](SamplingParams& p) { p.top_p = -0.01f; }, "top_p"},
        {[&](SamplingParams& p) { p.min_p = nan; }, "min_p"},
        {[](SamplingParams& p) { p.typical_p = 2; }, "typical_p"},
        {[](SamplingParams& p) { p.repeat_penalty = 0; }, "repeat_penalty"},
        {[](SamplingParams& p) { p.repeat_penalty = -1; }, "repeat_penalty"},
        {[](SamplingParams& p) { p.frequency_penalty = 1e9f; }, "frequency_penalty"},
        {[](SamplingParams& p) { p.presence_penalty = -kInf; }, "presence_penalty"},
        {[](SamplingParams& p) { p.penalty_last_n = -1; }, "penalty_last_n"},
        {[](SamplingParams& p) { p.penalty_last_n = 1 << 30; }, "penalty_last_n"},
        {[](SamplingParams& p) { p.min_keep = -5; }, "min_keep"},
        {[](SamplingParams& p) { p.logit_bias = {{5, 1}, {100, 1}}; }, "logit_bias[1].token"},
        {[](SamplingParams& p) { p.logit_bias = {{-1, 1}}; }, "logit_bias[0].token"},
        {[&](SamplingParams& p) { p.logit_bias = {{1, nan}}; }, "logit_bias[0].bias"},
        {[](SamplingParams& p) { p.logit_bias = {{1, kInf}}; }, "logit_bias[0].bias"},
        {[](SamplingParams& p) { p.logit_bias = {{1, 5000}}; }, "logit_bias[0].bias"},
        // Every token of the vocabulary (100 here) banned: nothing could be sampled.
        {[](SamplingParams& p) { for (int32_t t = 99; t >= 0; --t) p.logit_bias.push_back({t, -kInf}); }, "logit_bias"},
    };
    for (const auto& [set, field] : cases) {
        SamplingParams p;
        set(p);
        expect_field(p, field);
    }
    BOOST_CHECK_THROW(Sampler(SamplingParams{}, 0), SamplingError);
    // The message quotes the value and the accepted range.
    SamplingParams p;
    p.top_p = 1.5f;
    BOOST_CHECK_EXCEPTION(validate(p, 10), SamplingError, [](const SamplingError& e) {
        return std::string(e.what()) == "sampling parameter top_p = 1.5 is out of range: expected a number in [0, 1]";
    });
    // Edges that are allowed.
    SamplingParams ok;
    ok.temperature = kMaxTemperature;
    ok.top_k = std::numeric_limits<int32_t>::max();
    ok.top_p = 0;
    ok.logit_bias = {{99, -kInf}, {0, -kMaxAbsLogitBias}};
    BOOST_CHECK_NO_THROW(Sampler(ok, 100));
}

BOOST_AUTO_TEST_CASE(bad_logits_and_tokens) {
    Sampler s(plain(), 4);
    BOOST_CHECK_THROW(s.sample(std::vector<float>{1, 2, 3}), std::invalid_argument);
    BOOST_CHECK_THROW(s.accept(4), std::invalid_argument);
    BOOST_CHECK_THROW(s.accept(-1), std::invalid_argument);
    BOOST_CHECK_THROW(s.sample(std::vector<float>{-kInf, -kInf, std::nanf(""), -kInf}), NoCandidateError);
    // NaN is never drawn; +inf wins.
    for (int i = 0; i < 100; ++i) BOOST_TEST_REQUIRE(s.sample(std::vector<float>{std::nanf(""), 0, 0, -kInf}) != 0);
    SamplingParams g = plain();
    g.temperature = 0;
    Sampler gs(g, 3);
    BOOST_TEST(gs.sample(std::vector<float>{1, kInf, 2}) == 1);
    Sampler hot(plain(), 3);
    BOOST_TEST(hot.sample(std::vector<float>{1, kInf, kInf}) != 0);
    // Banning every token through logit_bias is refused up front (an invalid parameter);
    // logits with no candidate at all are reported, not a crash.
    SamplingParams ban = plain();
    ban.logit_bias = {{0, -kInf}, {1, -kInf}};
    BOOST_CHECK_THROW(Sampler(ban, 2), SamplingError);
    Sampler b(plain(), 2);
    BOOST_CHECK_THROW(b.sample(std::vector<float>{-kInf, -kInf}), NoCandidateError);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(stop_strings)

// Feeds the pieces and returns everything emitted (including finish() unless stopped).
std::pair<std::string, std::optional<size_t>> run(StopMatcher m, const std::vector<std::string>& pieces) {
    std::string out;
    for (const std::string& piece : pieces) out += m.feed(piece).text;
    if (!m.stopped()) out += m.finish();
    return {out, m.stopped()};
}

BOOST_AUTO_TEST_CASE(match_inside_one_piece_truncates_before_it) {
    StopMatcher m({"\nUser:"});
    auto step = m.feed("Hello there\nUser: more");
    BOOST_TEST(step.text == "Hello there");
    BOOST_TEST(step.stop.value_or(99) == 0u);
    BOOST_TEST(m.finish().empty());
    // Later pieces are ignored.
    BOOST_TEST(m.feed("ignored").text.empty());
}

BOOST_AUTO_TEST_CASE(match_across_pieces_holds_back_the_possible_start) {
    StopMatcher m({"</answer>"});
    auto a = m.feed("The result is 4</");
    BOOST_TEST(a.text == "The result is 4");
    BOOST_TEST(m.held() == "</");
    auto b = m.feed("ans");
    BOOST_TEST(b.text.empty());
    auto c = m.feed("wer> trailing");
    BOOST_TEST(c.text.empty());
    BOOST_TEST(c.stop.value_or(99) == 0u);
}

BOOST_AUTO_TEST_CASE(false_starts_are_released) {
    StopMatcher m({"abc"});
    BOOST_TEST(m.feed("xab").text == "x");
    BOOST_TEST(m.feed("d").text == "abd");
    BOOST_TEST(m.feed("aab").text == "a");  // "ab" may still start "abc"
    BOOST_TEST(m.held() == "ab");
    BOOST_TEST(m.finish() == "ab");
    // Overlapping self-prefix: "aab" inside "aaab" fed byte by byte.
    auto [text, stop] = run(StopMatcher({"aab"}), {"a", "a", "a", "b", "c"});
    BOOST_TEST(text == "a");
    BOOST_TEST(stop.value_or(99) == 0u);
}

BOOST_AUTO_TEST_CASE(first_ending_match_wins_whatever_the_piece_boundaries) {
    // In "abcd", "c" ends before "bcd" does, so the output is "ab" however the text is cut.
    const std::vector<std::string> stops{"bcd", "c"};
    const std::string text = "xxabcdyy";
    for (size_t cut1 = 0; cut1 <= text.size(); ++cut1)
        for (size_t cut2 = cut1; cut2 <= text.size(); ++cut2) {
            auto [out, stop] = run(StopMatcher(stops), {text.substr(0, cut1), text.substr(cut1, cut2 - cut1),
                                                       text.substr(cut2)});
            BOOST_TEST_INFO("cuts " << cut1 << ", " << cut2);
            BOOST_TEST(out == "xxab");
            BOOST_TEST(stop.value_or(99) == 1u);
        }
    // Two stops ending at the same byte: the longer one (earlier start) is cut.
    auto [out, stop] = run(StopMatcher({"d", "cd"}), {"abcde"});
    BOOST_TEST(out == "ab");
    BOOST_TEST(stop.value_or(99) == 1u);
}

// The reference: cut the whole text before the stop that ends first (longest at equal ends).
std::pair<std::string, std::optional<size_t>> reference_stop(const std::string& text,
                                                              const std::vector<std::string>& stops) {
    for (size_t end = 1; end <= text.size(); ++end) {
        std::optional<size_t> best;
        for (size_t i = 0; i < stops.size(); ++i)
            if (stops[i].size() <= end && text.compare(end - stops[i].size(), stops[i].size(), stops[i]) == 0 &&
                (!best || stops[i].size() > stops[*best].size()))
                best = i;
        if (best) return {text.substr(0, end - stops[*best].size()), best};
    }
    return {text, std::nullopt};
}

BOOST_AUTO_TEST_CASE(random_texts_and_cuts_match_the_reference) {
    Rng rng(11);
    const auto below = [&](size_t n) { return static_cast<size_t>(rng.uniform() * static_cast<double>(n)); };
    const auto random_text = [&](size_t len) {
        std::string t;
        for (size_t i = 0; i < len; ++i) t += "abc"[below(3)];
        return t;
    };
    for (int round = 0; round < 2000; ++round) {
        std::vector<std::string> stops;
        for (size_t i = 0, n = 1 + below(3); i < n; ++i) stops.push_back(random_text(1 + below(4)));
        const std::string text = random_text(below(30));
        std::vector<std::string> pieces;
        for (size_t at = 0; at < text.size();) {
            const size_t len = std::min(text.size() - at, 1 + below(5));
            pieces.push_back(text.substr(at, len));
            at += len;
        }
        const auto [out, stop] = run(StopMatcher(stops), pieces);
        const auto [want, want_stop] = reference_stop(text, stops);
        BOOST_TEST_INFO("text " << text << " stop[0] " << stops[0]);
        BOOST_TEST_REQUIRE(out == want);
        BOOST_TEST_REQUIRE(stop.value_or(99) == want_stop.value_or(99));
    }
}

BOOST_AUTO_TEST_CASE(utf8_is_never_split) {
    // "é" is C3 A9; fed one byte at a time, nothing is emitted until it is complete.
    StopMatcher m({});
    BOOST_TEST(m.feed("caf\xc3").text == "caf");
    BOOST_TEST(m.feed("\xa9!").text == "\xc3\xa9!");
    // A 4-byte emoji split 1 + 2 + 1, and a multi-byte stop string fed byte by byte.
    const std::string emoji = "\xf0\x9f\x99\x82";
    StopMatcher e({});
    BOOST_TEST(e.feed(emoji.substr(0, 1)).text.empty());
    BOOST_TEST(e.feed(emoji.substr(1, 2)).text.empty());
    BOOST_TEST(e.feed(emoji.substr(3)).text == emoji);
    const std::string stop = "\xe3\x80\x82";  // "。"
    const std::string text = "\xe6\x97\xa5\xe6\x9c\xac" + stop + "rest";
    std::vector<std::string> bytes;
    for (char c : text) bytes.emplace_back(1, c);
    auto [out, which] = run(StopMatcher({stop}), bytes);
    BOOST_TEST(out == "\xe6\x97\xa5\xe6\x9c\xac");
    BOOST_TEST(which.value_or(99) == 0u);
    // Invalid bytes are passed on rather than held forever, and finish() releases a cut-off tail.
    StopMatcher bad({});
    BOOST_TEST(bad.feed("a\x80\x80").text == "a\x80\x80");
    BOOST_TEST(bad.feed("b\xe2\x82").text == "b");
    BOOST_TEST(bad.finish() == "\xe2\x82");
}

BOOST_AUTO_TEST_CASE(invalid_stop_strings) {
    BOOST_CHECK_EXCEPTION(StopMatcher({"ok", ""}), SamplingError,
                          [](const SamplingError& e) { return e.field() == "stop[1]"; });
    BOOST_CHECK_EXCEPTION(StopMatcher({std::string(kMaxStopLength + 1, 'x')}), SamplingError,
                          [](const SamplingError& e) { return e.field() == "stop[0]"; });
    BOOST_CHECK_EXCEPTION(StopMatcher({"a", "\xc3("}), SamplingError,
                          [](const SamplingError& e) { return e.field() == "stop[1]"; });
    BOOST_CHECK_EXCEPTION(StopMatcher({"\xed\xa0\x80"}), SamplingError,  // a UTF-16 surrogate
                          [](const SamplingError& e) { return e.field() == "stop[0]"; });
    BOOST_CHECK_EXCEPTION(StopMatcher(std::vector<std::string>(kMaxStopStrings + 1, "x")), SamplingError,
                          [](const SamplingError& e) { return e.field() == "stop"; });
    BOOST_CHECK_NO_THROW(StopMatcher({std::string(kMaxStopLength, 'x')}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(log_probabilities)

BOOST_AUTO_TEST_CASE(logprobs_are_the_log_softmax_of_the_logits) {
    std::mt19937 gen(7);
    std::normal_distribution<float> d(0, 3);
    std::vector<float> logits(5000);
    for (auto& x : logits) x = d(gen);
    logits[17] = logits[23] = 20;  // a tie at the top: the lower id first
    double z = 0;
    for (float x : logits) z += std::exp(double(x) - 20);
    const double log_z = 20 + std::log(z);
    const Logprobs lp = logprobs_of(logits, 4000, 5);
    BOOST_TEST(lp.chosen.id == 4000);
    BOOST_TEST(lp.chosen.logprob == logits[4000] - log_z, boost::test_tools::tolerance(1e-5));
    BOOST_REQUIRE(lp.top.size() == 5u);
    BOOST_TEST(lp.top[0].id == 17);
    BOOST_TEST(lp.top[1].id == 23);
    std::vector<int32_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    for (size_t i = 0; i < 5; ++i) {
        BOOST_TEST(lp.top[i].id == order[i]);
        BOOST_TEST(lp.top[i].logprob == logits[order[i]] - log_z, boost::test_tools::tolerance(1e-5));
    }
    double mass = 0;  // the distribution sums to one
    for (int32_t id = 0; id < 5000; ++id) mass += std::exp(double(logprobs_of(logits, id, 0).chosen.logprob));
    BOOST_TEST(mass == 1.0, boost::test_tools::tolerance(1e-4));
    BOOST_TEST(logprobs_of(logits, 0, 0).top.empty());
}

BOOST_AUTO_TEST_CASE(banned_and_nan_logits_have_no_probability) {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> logits = {0.0f, -inf, std::nanf(""), 0.0f};
    const Logprobs lp = logprobs_of(logits, 1, 4);
    BOOST_TEST(std::isinf(lp.chosen.logprob));
    BOOST_TEST(lp.chosen.logprob < 0);
    BOOST_TEST(std::isinf(logprobs_of(logits, 2, 0).chosen.logprob));
    BOOST_TEST(lp.top[0].logprob == std::log(0.5f), boost::test_tools::tolerance(1e-6f));
    BOOST_TEST(lp.top[0].id == 0);
    BOOST_TEST(lp.top[1].id == 3);
    BOOST_CHECK_THROW(logprobs_of(logits, 4, 0), std::invalid_argument);
    BOOST_CHECK_THROW(logprobs_of(logits, -1, 0), std::invalid_argument);
    BOOST_CHECK_THROW(logprobs_of(logits, 0, kMaxTopLogprobs + 1), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
