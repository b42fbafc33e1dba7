// tests/unit/speculative_test.cpp — speculative decoding (engine.speculative = ngram): prompt
// lookup and the adaptive guess length alone, then the engine on the real stories260K model
// giving exactly the output of decoding without guesses — greedy, sampled with each of many
// seeds, with stop strings, grammars, log-probabilities and sessions — while its guesses are
// accepted and counted, and `draft` refused without a draft model.
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "engine/engine.h"
#include "engine/guess.h"
#include "grammar/grammar.h"
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

Config config(Speculative mode) {
    Config c;
    c.model_path = (test::source_dir() / "daemon/models/stories260K.gguf").string();
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

// The same request through an engine without speculation and one with n-gram guesses.
struct Pair {
    Engine off{config(Speculative::Off)}, ngram{config(Speculative::Ngram)};
    void same(const GenerateRequest& r, const std::string& what) {
        const auto a = run(off, r), b = run(ngram, r);
        BOOST_TEST(a->result.text == b->result.text, what);
        BOOST_TEST(a->text == b->text, what);
        BOOST_TEST(a->result.finish_reason == b->result.finish_reason, what);
        BOOST_TEST(a->result.usage.completion_tokens == b->result.usage.completion_tokens, what);
        BOOST_TEST(a->logprobs.size() == b->logprobs.size(), what);
        for (size_t i = 0; i < std::min(a->logprobs.size(), b->logprobs.size()); ++i)
            BOOST_TEST(std::abs(a->logprobs[i] - b->logprobs[i]) < 2e-3, what << " logprob " << i);
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
    BOOST_TEST(s.guess(h, 100, pool).size() == 8u);  // "1 2" and the 9 tokens after it, at most 8
    s.verified(8, 0);
    BOOST_TEST(s.guess(h, 100, pool).size() == 4u);
    s.verified(4, 0), s.verified(2, 0);
    BOOST_TEST(s.guess(h, 100, pool).size() == 1u);
    s.verified(1, 0);  // even one guess fails: a pause
    int paused = 0;
    while (s.guess(h, 100, pool).empty()) ++paused;
    BOOST_TEST(paused == 8);
    s.verified(1, 1);
    BOOST_TEST(s.guess(h, 100, pool).size() == 2u);
    BOOST_TEST(s.guess(h, 1, pool).size() == 1u);  // within the room left
    BOOST_TEST(Speculation(0).guess(h, 100, pool).empty());
    BOOST_TEST(s.guessed() == 16u);
    BOOST_TEST(s.accepted() == 1u);
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
    BOOST_TEST(s.guess(std::vector<int32_t>{5, 2, 3, 4}, 10, pool) == (std::vector<int32_t>{5, 6}));
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

BOOST_AUTO_TEST_CASE(stop_strings_grammars_logprobs_and_sessions_behave_as_without_guesses) {
    Pair p;
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

BOOST_AUTO_TEST_SUITE_END()
