// tests/unit/speculative_test.cpp — speculative decoding (engine.speculative = ngram and
// draft): prompt lookup and the adaptive guess length alone, then the engine on the real
// stories260K model giving exactly the output of decoding without guesses — greedy, sampled
// with each of many seeds, with stop strings, grammars, log-probabilities and sessions —
// while its guesses are accepted and counted; the same with a draft model (stories260K
// quantized to Q4_0), whose sampled tokens also pass a chi-square test of homogeneity against
// decoding without guesses on seeds of their own; drafts with another vocabulary or with
// recurrent layers refused at load, and `draft` refused without a draft model.
#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "engine/engine.h"
#include "engine/guess.h"
#include "grammar/grammar.h"
#include "model/model.h"
#include "model/quantize_model.h"
#include "test_util.h"

using namespace strata;
using namespace strata::engine;

namespace {

class Collect : public Sink {
public:
    void on_text(std::string_view piece) override { text += piece; }
    void on_logprobs(const TokenLogprobs& lp) override { logprobs.push_back(lp.token.logprob); }
    void on_done(const Result& r) override { finish(r, ""); }
    void on_error(const EngineError& e) override { finish({}, e.what()); }
    Result wait() {
        std::unique_lock lk(mu_);
        BOOST_REQUIRE(cv_.wait_for(lk, std::chrono::seconds(120), [&] { return done_; }));
        BOOST_TEST(error.empty(), error);
        return result;
    }
    std::string text, error;
    std::vector<float> logprobs;
    Result result;

private:
    void finish(const Result& r, const std::string& e) {
        std::lock_guard lk(mu_);
        result = r;
        error = e;
        done_ = true;
        cv_.notify_all();
    }
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
};

const std::string kModel = (test::source_dir() / "daemon/models/stories260K.gguf").string();

// The draft of the tests: stories260K quantized to Q4_0 (agrees with it on most tokens), made
// once, removed at exit.
struct TestDraft {
    std::string path = (std::filesystem::temp_directory_path() / ("strata_draft_" + std::to_string(::getpid()) + ".gguf")).string();
    TestDraft() { model::quantize_model(kModel, path, *model::file_type_from_name("Q4_0")); }
    ~TestDraft() { std::filesystem::remove(path); }
};

const std::string& draft_model() {
    static const TestDraft draft;
    return draft.path;
}

Config config(Speculative mode, std::string draft = "") {
    Config c;
    c.model_path = kModel;
    c.draft_path = std::move(draft);
    c.threads = 2;
    c.context = 512;
    c.speculative = mode;
    return c;
}

GenerateRequest request(std::string prompt, int max_tokens, float temperature = 0, uint64_t seed = 0) {
    GenerateRequest r;
    r.uid = 1000;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.sampling.temperature = temperature;
    r.sampling.seed = seed;
    return r;
}

std::shared_ptr<Collect> run(Engine& e, GenerateRequest r) {
    auto sink = std::make_shared<Collect>();
    e.submit(std::move(r), sink);
    sink->wait();
    return sink;
}

// The same request through an engine without speculation and one with guesses (n-grams, or
// the draft model's).
struct Pair {
    explicit Pair(Speculative mode = Speculative::Ngram)
        : ngram(config(mode, mode == Speculative::Draft || mode == Speculative::Auto ? draft_model() : "")) {}
    Engine off{config(Speculative::Off)};
    Engine ngram;
    void same(const GenerateRequest& r, const std::string& what) {
        const auto a = run(off, r), b = run(ngram, r);
        BOOST_TEST(a->result.text == b->result.text, what);
        BOOST_TEST(a->text == b->text, what);
        BOOST_TEST(a->result.finish_reason == b->result.finish_reason, what);
        BOOST_TEST(a->result.usage.completion_tokens == b->result.usage.completion_tokens, what);
        BOOST_TEST(a->logprobs.size() == b->logprobs.size(), what);
        for (size_t i = 0; i < std::min(a->logprobs.size(), b->logprobs.size()); ++i)
            BOOST_TEST(std::abs(a->logprobs[i] - b->logprobs[i]) < 5e-3, what << " logprob " << i);  // a verify pass batches positions
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(speculative)

BOOST_AUTO_TEST_CASE(prompt_lookup_continues_the_latest_longest_match) {
    const std::vector<int32_t> t = {1, 2, 3, 9, 9, 1, 2, 3, 7, 8, 5, 2, 3};
    BOOST_TEST(lookup_ngram(t, 2) == (std::vector<int32_t>{7, 8}));  // "2 3" last seen before "7 8"
    BOOST_TEST(lookup_ngram(t, 8) == (std::vector<int32_t>{7, 8, 5, 2, 3}));
    const std::vector<int32_t> u = {4, 5, 6, 1, 5, 6, 2, 4, 5, 6};
    BOOST_TEST(lookup_ngram(u, 3) == (std::vector<int32_t>{1, 5, 6}));  // "4 5 6" beats the later "5 6"
    BOOST_TEST(lookup_ngram(std::vector<int32_t>{1, 2, 3, 4}, 4).empty());
    BOOST_TEST(lookup_ngram(std::vector<int32_t>{}, 4).empty());
}

BOOST_AUTO_TEST_CASE(guesses_back_off_when_they_fail_and_grow_when_they_pay) {
    const std::vector<int32_t> h = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2};
    const NgramPool pool;
    Speculation s(8);
    BOOST_TEST(s.guess(h, 100, pool).tokens.size() == 8u);  // "1 2" and the 9 tokens after it, at most 8
    s.verified(8, 0);
    BOOST_TEST(s.guess(h, 100, pool).tokens.size() == 4u);
    s.verified(4, 0), s.verified(2, 0);
    BOOST_TEST(s.guess(h, 100, pool).tokens.size() == 1u);
    s.verified(1, 0);  // even one guess fails: a pause
    int paused = 0;
    while (s.guess(h, 100, pool).tokens.empty()) ++paused;
    BOOST_TEST(paused == 8);
    s.verified(1, 1);
    BOOST_TEST(s.guess(h, 100, pool).tokens.size() == 2u);
    BOOST_TEST(s.guess(h, 1, pool).tokens.size() == 1u);  // within the room left
    BOOST_TEST(Speculation(0).guess(h, 100, pool).tokens.empty());
    BOOST_TEST(s.guessed() == 16u);
    BOOST_TEST(s.accepted() == 1u);
}

// The draft is asked when the n-grams have nothing (auto), or alone (draft), for as many
// guesses as the adaptive length and the room allow.
BOOST_AUTO_TEST_CASE(the_draft_is_asked_when_the_ngrams_have_nothing) {
    const std::vector<int32_t> repeats = {1, 2, 3, 4, 1, 2}, fresh = {1, 2, 3, 4, 5, 6};
    const NgramPool pool;
    Speculation both(8, true, true), draft_only(8, false, true), ngram_only(8, true, false);
    BOOST_TEST(both.guess(repeats, 100, pool).tokens == (std::vector<int32_t>{3, 4, 1, 2}));
    BOOST_TEST(both.guess(repeats, 100, pool).draft == 0);
    BOOST_TEST(both.guess(fresh, 100, pool).draft == 8);
    BOOST_TEST(both.guess(fresh, 3, pool).draft == 3);
    BOOST_TEST(draft_only.guess(repeats, 100, pool).tokens.empty());
    BOOST_TEST(draft_only.guess(repeats, 100, pool).draft == 8);
    BOOST_TEST(ngram_only.guess(fresh, 100, pool).draft == 0);
}

BOOST_AUTO_TEST_CASE(the_shared_pool_remembers_what_followed_and_forgets_the_oldest) {
    NgramPool pool(3);
    const std::vector<int32_t> a = {7, 1, 2, 3, 4, 5, 6};
    pool.learn(a, 1);  // runs 1 2 3, 2 3 4, 3 4 5 (4 5 6 has no follower)
    BOOST_TEST(pool.entries() == 3u);
    BOOST_TEST(pool.lookup(std::vector<int32_t>{9, 1, 2, 3}, 8) == (std::vector<int32_t>{4, 5, 6}));
    BOOST_TEST(pool.lookup(std::vector<int32_t>{9, 1, 2, 3}, 1) == (std::vector<int32_t>{4}));
    BOOST_TEST(pool.lookup(std::vector<int32_t>{7, 1, 2}, 8).empty());  // 7 1 2 was before `from`
    pool.learn(std::vector<int32_t>{8, 8, 8, 9}, 0);                     // a fourth run: 1 2 3 goes
    BOOST_TEST(pool.entries() == 3u);
    BOOST_TEST(pool.lookup(std::vector<int32_t>{1, 2, 3}, 8).empty());
    BOOST_TEST(pool.lookup(std::vector<int32_t>{8, 8, 8}, 8) == (std::vector<int32_t>{9}));
    BOOST_TEST(pool.bytes() > 0u);
    // A request whose own tokens have no match guesses from the pool.
    Speculation s(4);
    BOOST_TEST(s.guess(std::vector<int32_t>{5, 2, 3, 4}, 10, pool).tokens == (std::vector<int32_t>{5, 6}));
}

// The recent rates count a decoding pass's tokens as generated, never as prompt, with or
// without guesses: over one request, prompt_tps_recent / generate_tps_recent is its prompt
// tokens over the tokens its decoding passes produced (all but the first).
BOOST_AUTO_TEST_CASE(recent_rates_count_decoding_passes_as_generation) {
    for (const Speculative mode : {Speculative::Off, Speculative::Ngram}) {
        Engine e(config(mode));
        const Result r = run(e, request("Once upon a time, there was a little girl named Lily. Lily", 80))->result;
        const auto st = e.status();
        const double ratio = st.number("prompt_tps_recent") / st.number("generate_tps_recent");
        BOOST_TEST(ratio == double(r.usage.prompt_tokens) / (r.usage.completion_tokens - 1), boost::test_tools::tolerance(1e-9));
    }
}

BOOST_AUTO_TEST_CASE(greedy_output_is_exactly_that_of_decoding_without_guesses) {
    Pair p;
    p.same(request("", 200), "from BOS");
    p.same(request("Once upon a time, there was a little girl named Lily. Lily", 120), "prompt");
    const auto st = p.ngram.status();
    BOOST_TEST(st.number("speculative_passes") > 0u);
    BOOST_TEST(st.number("speculative_accepted") > 0u);
    BOOST_TEST(st.number("speculative_tokens_per_pass") > 1.0);
    BOOST_TEST(p.off.status().number("speculative_passes") == 0u);
    // The engine with guesses ran fewer passes for the same tokens.
    BOOST_TEST(st.number("forward_passes") < p.off.status().number("forward_passes"));
}

BOOST_AUTO_TEST_CASE(sampled_output_is_that_of_decoding_without_guesses_for_every_seed) {
    // The sampler draws each token from the same logits in the same order: a guess is kept
    // exactly when the draw equals it, so the sampled text is the same as without guesses.
    Pair p;
    for (uint64_t seed = 1; seed <= 24; ++seed) {
        GenerateRequest r = request("Lily and Tom", 60, 0.8f, seed);
        r.sampling.top_k = 20;
        r.sampling.top_p = 0.95f;
        r.sampling.min_p = 0.02f;
        p.same(r, "seed " + std::to_string(seed));
    }
    BOOST_TEST(p.ngram.status().number("speculative_accepted") > 0u);
}

// Stop strings, log-probabilities, a grammar and a session's turns give the same with guesses.
void same_with_controls(Pair& p) {
    GenerateRequest stop = request("", 120);
    stop.stop = {"park"};
    p.same(stop, "stop string");
    GenerateRequest lp = request("Lily", 80);
    lp.logprobs = 3;
    p.same(lp, "logprobs");
    GenerateRequest g = request("Lily", 60);
    g.grammar = std::make_shared<const grammar::Grammar>(grammar::Grammar::parse(R"(root ::= ("Lily" | " the" | " park" | "." | " ")+)"));
    p.same(g, "grammar");
    for (const char* turn : {"Once upon a time", " Lily went to the park.", " Then"}) {
        GenerateRequest s = request(turn, 40);
        s.session = "story";
        p.same(s, std::string("session turn ") + turn);
    }
    BOOST_TEST(p.off.session_info("story", 1000).text == p.ngram.session_info("story", 1000).text);
}

BOOST_AUTO_TEST_CASE(stop_strings_grammars_logprobs_and_sessions_behave_as_without_guesses) {
    Pair p;
    same_with_controls(p);
}

BOOST_AUTO_TEST_CASE(batched_requests_speculating_together_match_requests_alone) {
    // 40 tokens, as engine_test's batched test: later, batching alone (without guesses)
    // flips a near tie of this model's greedy choice.
    Engine e(config(Speculative::Ngram));
    Engine off(config(Speculative::Off));
    const std::vector<std::string> prompts = {"Once upon a time", "Lily saw a cat", "The sun was", "One day, Tom"};
    std::vector<std::shared_ptr<Collect>> sinks;
    for (const auto& prompt : prompts) {
        sinks.push_back(std::make_shared<Collect>());
        e.submit(request(prompt, 40), sinks.back());
    }
    for (size_t i = 0; i < prompts.size(); ++i)
        BOOST_TEST(sinks[i]->wait().text == run(off, request(prompts[i], 40))->result.text, "prompt " << i);
}

BOOST_AUTO_TEST_CASE(a_request_may_turn_speculation_off_and_draft_is_refused_without_a_draft_model) {
    Engine e(config(Speculative::Auto));
    GenerateRequest r = request("", 100);
    r.speculative = Speculative::Off;
    run(e, r);
    BOOST_TEST(e.status().number("speculative_passes") == 0u);
    r.speculative = Speculative::Draft;
    try {
        e.submit(r, std::make_shared<Collect>());
        BOOST_FAIL("draft accepted");
    } catch (const EngineError& err) {
        BOOST_TEST(std::string(err.what()).find("model.draft") != std::string::npos);
    }
    BOOST_CHECK_EXCEPTION(Engine(config(Speculative::Draft)), std::runtime_error,
                          [](const std::runtime_error& err) { return std::string(err.what()).find("model.draft") != std::string::npos; });
}

BOOST_AUTO_TEST_CASE(a_draft_model_gives_exactly_the_output_of_decoding_without_guesses) {
    Pair p(Speculative::Draft);
    p.same(request("", 200), "from BOS");
    p.same(request("Once upon a time, there was a little girl named Lily. Lily", 120), "prompt");
    for (uint64_t seed = 1; seed <= 8; ++seed) p.same(request("Lily and Tom", 60, 0.8f, seed), "seed " + std::to_string(seed));
    same_with_controls(p);
    const auto st = p.ngram.status();
    BOOST_TEST(st.text("draft_model") == draft_model());
    BOOST_TEST(st.number("draft_passes") > 0u);
    BOOST_TEST(st.number("speculative_accept_rate") > 0.5);  // a quantized copy agrees most of the time
    BOOST_TEST(st.number("speculative_tokens_per_pass") > 2.0);
    BOOST_TEST(st.number("forward_passes") < p.off.status().number("forward_passes"));
    Pair autos(Speculative::Auto);
    autos.same(request("Lily and Tom", 80), "auto");
    BOOST_TEST(autos.ngram.status().number("draft_passes") > 0u);
}

// Sampled tokens with the draft's guesses, on seeds of their own, are distributed as those of
// decoding without guesses: a chi-square test of homogeneity of the 4th generated token over
// 400 seeds each (tokens seen fewer than 10 times together pooled into one bin), at p = 0.001.
BOOST_AUTO_TEST_CASE(sampled_tokens_with_a_draft_are_distributed_as_without_guesses) {
    Pair p(Speculative::Draft);
    constexpr int kSeeds = 400;
    std::map<std::string, std::array<double, 2>> counts;
    for (int seed = 0; seed < kSeeds; ++seed) {
        for (int which = 0; which < 2; ++which) {
            GenerateRequest r = request("Lily and Tom", 4, 1.0f, uint64_t(seed + 1 + which * kSeeds));
            r.logprobs = 0;
            const auto sink = run(which ? p.ngram : p.off, r);
            BOOST_REQUIRE(sink->result.logprobs.size() == 4u);
            counts[sink->result.logprobs[3].token.bytes][size_t(which)] += 1;
        }
    }
    std::vector<std::array<double, 2>> bins(1, {0, 0});
    for (const auto& [token, c] : counts) {
        if (c[0] + c[1] >= 10) bins.push_back(c);
        else bins[0][0] += c[0], bins[0][1] += c[1];
    }
    double chi2 = 0;
    for (const auto& b : bins) {
        const double expected = (b[0] + b[1]) / 2;
        if (expected > 0) chi2 += (b[0] - expected) * (b[0] - expected) / expected + (b[1] - expected) * (b[1] - expected) / expected;
    }
    const double df = double(bins.size() - 1);
    // The 0.999 quantile of chi-square(df), Wilson-Hilferty: df (1 - 2/(9 df) + z sqrt(2/(9 df)))^3, z = 3.09.
    const double critical = df * std::pow(1 - 2 / (9 * df) + 3.09 * std::sqrt(2 / (9 * df)), 3);
    BOOST_TEST_MESSAGE("chi-square " << chi2 << " on " << df << " degrees of freedom, critical " << critical);
    BOOST_TEST(df >= 5);
    BOOST_TEST(chi2 < critical);
    BOOST_TEST(p.ngram.status().number("speculative_accepted") > 0u);
}

// Every architecture's test model (random weights: flat distributions, near ties) decodes
// greedily to the same tokens with guesses: the model as its own draft (every guess kept) and
// n-grams from a prompt that repeats itself (kept and refused); the hybrid recurrent models
// (which cannot be their own draft) with n-grams, their state taken back to its snapshot
// before the pass when a guess is refused. The verify passes batch the positions, so two runs
// may part only at a near tie of the model's choice (its two most likely tokens within 0.02
// in log-probability).
BOOST_AUTO_TEST_CASE(every_architecture_decodes_the_same_with_guesses) {
    double recurrent_refused = 0;  // guesses the recurrent models refused: their states went back
    for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "tests/data/archs/models")) {
        const std::string path = entry.path().string(), name = entry.path().filename().string();
        if (!name.ends_with("-f16.gguf")) continue;
        const bool recurrent = !model::kv_shape(model::HParams::from_gguf(*gguf::File::open(path))).state.empty();
        Config off_config = config(Speculative::Off);
        off_config.model_path = path;
        Engine off(off_config);
        GenerateRequest r = request("Once upon a time there was a girl. Once upon a time there was a", 40);
        r.logprobs = 2;
        r.ignore_eos = true;
        const Result a = run(off, r)->result;
        for (const Speculative mode : {Speculative::Draft, Speculative::Ngram}) {
            if (mode == Speculative::Draft && recurrent) continue;  // a recurrent draft is refused
            Config c = config(mode, mode == Speculative::Draft ? path : "");
            c.model_path = path;
            c.draft_p_min = 0;  // random weights: every distribution is flat
            Engine guessing(c);
            const Result b = run(guessing, r)->result;
            const std::string what = name + (mode == Speculative::Draft ? " draft" : " ngram");
            BOOST_TEST_REQUIRE(a.logprobs.size() == b.logprobs.size(), what);
            size_t same = 0;
            while (same < a.logprobs.size() && a.logprobs[same].token.id == b.logprobs[same].token.id) ++same;
            if (same < a.logprobs.size()) {
                const auto& top = a.logprobs[same].top;
                BOOST_TEST_REQUIRE(top.size() >= 2u, what);
                BOOST_TEST(top[0].logprob - top[1].logprob < 0.02, what << " parts at token " << same << ", not a near tie");
            }
            const auto st = guessing.status();
            if (mode == Speculative::Draft) BOOST_TEST(st.number("speculative_accepted") > 0u, what);
            if (recurrent) recurrent_refused += st.number("speculative_guessed") - st.number("speculative_accepted");
            BOOST_TEST_MESSAGE(what << ": the same " << same << " of " << a.logprobs.size() << " tokens, "
                                    << st.number("speculative_accepted") << " of " << st.number("speculative_guessed")
                                    << " guesses kept");
        }
    }
    BOOST_TEST(recurrent_refused > 0);
}

BOOST_AUTO_TEST_CASE(drafts_with_another_vocabulary_or_recurrent_layers_are_refused) {
    const auto archs = test::source_dir() / "tests/data/archs/models";
    auto refused = [](Config c, const std::string& words) {
        try {
            Engine e(std::move(c));
            BOOST_FAIL("the draft was accepted");
        } catch (const std::runtime_error& e) {
            BOOST_TEST(std::string(e.what()).find(words) != std::string::npos, e.what());
        }
    };
    refused(config(Speculative::Draft, (archs / "qwen3-f16.gguf").string()), "a draft must have the target's vocabulary");
    Config recurrent = config(Speculative::Draft, (archs / "qwen35-f16.gguf").string());
    recurrent.model_path = (archs / "qwen3-f16.gguf").string();
    refused(recurrent, "recurrent layers");
}

BOOST_AUTO_TEST_SUITE_END()
