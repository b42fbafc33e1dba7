// tests/unit/generation_test.cpp — a request's Generation without a model, on the bundled
// model's tokenizer and made-up logits: what each token means (go on, stop at EOS or a stop
// string, length), the output handed out once, and rolling a generation back by assigning
// an earlier copy (the same tokens, text and random draws again).
#include <boost/test/unit_test.hpp>

#include <random>

#include "engine/generation.h"
#include "gguf/gguf.h"
#include "test_util.h"

using namespace strata;
using namespace strata::engine;

namespace {

struct Fixture {
    std::shared_ptr<const gguf::File> file = gguf::File::open((test::source_dir() / "daemon/models/stories260K.gguf").string());
    std::unique_ptr<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_gguf(*file);
    int32_t n_vocab = tok->n_vocab();

    Generation make(GenerateRequest r, int32_t context = 64) const {
        return Generation(*tok, r, nullptr, n_vocab, context, {tok->bos()});
    }
    // Logits that make `token` the greedy choice.
    std::vector<float> pick(int32_t token) const {
        std::vector<float> l(size_t(n_vocab), 0.0f);
        l[size_t(token)] = 10.0f;
        return l;
    }
    std::vector<float> noise(std::mt19937& rng) const {
        std::normal_distribution<float> d;
        std::vector<float> l(static_cast<size_t>(n_vocab));
        for (float& v : l) v = d(rng);
        return l;
    }
};

GenerateRequest request(int32_t max_tokens, std::vector<std::string> stop = {}) {
    GenerateRequest r;
    r.max_tokens = max_tokens;
    r.stop = std::move(stop);
    r.sampling.temperature = 0;
    return r;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(generation, Fixture)

BOOST_AUTO_TEST_CASE(tokens_go_on_until_max_tokens) {
    const auto ids = tok->encode(" Once upon a", false, false);
    Generation g = make(request(static_cast<int32_t>(ids.size())));
    for (size_t i = 0; i < ids.size(); ++i) {
        const auto logits = pick(ids[i]);
        const int32_t t = g.sample(logits);
        BOOST_TEST(t == ids[i]);
        const auto outcome = g.accept(t, logits);
        BOOST_TEST((outcome == (i + 1 < ids.size() ? Generation::Outcome::Continue : Generation::Outcome::Length)));
    }
    g.finish();
    BOOST_TEST(g.take_output().text == g.text());
    BOOST_TEST(g.take_output().text.empty(), "output is handed out once");
    BOOST_TEST(g.text().ends_with("Once upon a"));
    BOOST_TEST(g.generated() == static_cast<int32_t>(ids.size()));
    BOOST_TEST(g.history().size() == ids.size() + 1);
}

BOOST_AUTO_TEST_CASE(the_context_ends_a_generation_with_length) {
    Generation g = make(request(100), 3);  // BOS and two more positions
    const int32_t id = tok->encode(" Once", false, false).front();
    BOOST_TEST((g.accept(id, pick(id)) == Generation::Outcome::Continue));
    BOOST_TEST((g.accept(id, pick(id)) == Generation::Outcome::Continue));
    BOOST_TEST((g.accept(id, pick(id)) == Generation::Outcome::Length));
}

BOOST_AUTO_TEST_CASE(eos_and_stop_strings_stop_it) {
    Generation eos = make(request(10));
    BOOST_TEST((eos.accept(tok->eos(), pick(tok->eos())) == Generation::Outcome::Stop));
    BOOST_TEST(eos.generated() == 0);

    Generation g = make(request(10, {"upon"}));
    auto outcome = Generation::Outcome::Continue;
    for (const int32_t id : tok->encode(" Once upon a", false, false))
        if ((outcome = g.accept(id, pick(id))) != Generation::Outcome::Continue) break;
    BOOST_TEST((outcome == Generation::Outcome::Stop));
    g.finish();
    BOOST_TEST(g.text().ends_with("Once "), "the stop string is not part of the text: " << g.text());
}

BOOST_AUTO_TEST_CASE(assigning_a_copy_rolls_it_back) {
    GenerateRequest r = request(50);
    r.sampling.temperature = 1.0f;
    r.sampling.seed = 7;
    r.logprobs = 2;
    Generation g = make(r);
    std::mt19937 rng(1);
    std::vector<std::vector<float>> logits;
    for (int i = 0; i < 20; ++i) logits.push_back(noise(rng));
    auto run = [&](Generation& gen) {
        std::vector<int32_t> tokens;
        for (const auto& l : logits) {
            const int32_t t = gen.sample(l);
            tokens.push_back(t);
            if (gen.accept(t, l) != Generation::Outcome::Continue) break;
        }
        return tokens;
    };
    const Generation snapshot = g;
    const auto first = run(g);
    const std::string text = g.text();
    g = snapshot;
    g.take_output();
    BOOST_TEST(g.generated() == 0);
    const auto again = run(g);
    BOOST_TEST(again == first, "the same random draws after the roll-back");
    BOOST_TEST(g.text() == text);
    const Result result = g.result({}, Clock::now(), Clock::now(), "length");
    BOOST_TEST(result.logprobs.size() == first.size());
    BOOST_TEST(result.usage.completion_tokens == static_cast<int32_t>(first.size()));
}

BOOST_AUTO_TEST_SUITE_END()
