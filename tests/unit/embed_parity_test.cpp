// tests/unit/embed_parity_test.cpp — the engine's embeddings against llama.cpp's
// (tests/data/embed: pooled, L2-normalised llama_get_embeddings_seq of decoder models with
// mean, last and CLS pooling, F16 and a quantized mix, and of BERT encoders pooled as their
// files say) within each case's cosine and max-abs tolerances; the BERT texts tokenized
// (WordPiece) to llama.cpp's ids; the same vectors when the inputs run through passes of 5
// tokens (encoders refuse inputs longer than a pass), batched in one request, or beside a
// generation; inputs the engine refuses.
#include <boost/json.hpp>
#include <cmath>
#include <condition_variable>
#include <mutex>

#include "engine/engine.h"
#include "test_util.h"

using namespace strata;
using namespace strata::engine;

namespace {

class Wait : public Sink {
public:
    void on_text(std::string_view) override {}
    void on_done(const Result& r) override { end([&] { result = r; }); }
    void on_error(const EngineError& e) override { end([&] { error = e.what(); }); }
    void wait() {
        std::unique_lock lk(mu_);
        BOOST_REQUIRE(cv_.wait_for(lk, std::chrono::seconds(120), [&] { return done_; }));
    }
    Result result;
    std::string error;

private:
    template <class F>
    void end(F f) {
        std::lock_guard lk(mu_);
        f();
        done_ = true;
        cv_.notify_all();
    }
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
};

struct EmbedCase {
    std::string name, model, text;  // text: what `tokens` tokenizes (encoders)
    model::Pooling pooling = model::Pooling::None;
    std::vector<int32_t> tokens;
    std::vector<float> golden;
    double min_cosine = 0, max_abs = 0;
};

model::Pooling pooling_named(const std::string& s) {
    if (s == "mean") return model::Pooling::Mean;
    if (s == "cls") return model::Pooling::Cls;
    if (s == "last") return model::Pooling::Last;
    return model::Pooling::None;
}

std::vector<EmbedCase> cases() {
    const auto dir = test::data_dir() / "embed";
    const auto doc = boost::json::parse(test::read_file(dir / "manifest.json"));
    std::vector<EmbedCase> out;
    for (const auto& jc : doc.at("cases").as_array()) {
        const auto& o = jc.as_object();
        EmbedCase c;
        c.name = o.at("name").as_string().c_str();
        c.model = (dir / o.at("model").as_string().c_str()).string();
        c.pooling = pooling_named(o.at("pooling").as_string().c_str());
        if (const auto* text = o.if_contains("text")) c.text = text->as_string().c_str();
        for (const auto& t : o.at("tokens").as_array()) c.tokens.push_back(static_cast<int32_t>(t.as_int64()));
        const std::string bytes = test::read_file(dir / o.at("embedding").as_string().c_str());
        c.golden.resize(bytes.size() / sizeof(float));
        std::memcpy(c.golden.data(), bytes.data(), c.golden.size() * sizeof(float));
        c.min_cosine = o.at("tolerance").at("min_cosine").to_number<double>();
        c.max_abs = o.at("tolerance").at("max_abs").to_number<double>();
        out.push_back(std::move(c));
    }
    return out;
}

std::unique_ptr<Engine> engine_for(const EmbedCase& c, int32_t batch_tokens = 0) {
    Config cfg;
    cfg.model_path = c.model;
    cfg.threads = 2;
    cfg.context = 256;
    cfg.batch_tokens = batch_tokens;
    cfg.pooling = c.pooling;
    cfg.log = [](int, const std::string&) {};
    return std::make_unique<Engine>(cfg);
}

GenerateRequest embed_request(std::vector<EmbedInput> inputs) {
    GenerateRequest r;
    r.uid = 1000;
    r.embed = std::move(inputs);
    return r;
}

std::vector<std::vector<float>> embed(Engine& e, std::vector<EmbedInput> inputs) {
    auto sink = std::make_shared<Wait>();
    e.submit(embed_request(std::move(inputs)), sink);
    sink->wait();
    BOOST_REQUIRE_MESSAGE(sink->error.empty(), sink->error);
    BOOST_REQUIRE_EQUAL(sink->result.finish_reason, "stop");
    return sink->result.embeddings;
}

// How far one input's vectors from passes of different composition may lie apart.
constexpr double kSameInput = 1e-4;

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    BOOST_REQUIRE_EQUAL(a.size(), b.size());
    double most = 0;
    for (size_t i = 0; i < a.size(); ++i) most = std::max(most, std::abs(double(a[i]) - b[i]));
    return most;
}

void check(const EmbedCase& c, const std::vector<float>& v, const std::string& how) {
    const double max_abs = max_abs_diff(v, c.golden);
    double dot = 0, norm = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        dot += double(v[i]) * c.golden[i];
        norm += double(v[i]) * v[i];
    }
    BOOST_TEST_MESSAGE(c.name << " " << how << ": cosine " << dot << ", max abs diff " << max_abs);
    BOOST_TEST(std::abs(norm - 1.0) < 1e-5, c.name << " " << how << " norm^2 " << norm);
    BOOST_TEST(dot >= c.min_cosine, c.name << " " << how << " cosine " << dot);
    BOOST_TEST(max_abs <= c.max_abs, c.name << " " << how << " max abs diff " << max_abs);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(embed_parity)

BOOST_AUTO_TEST_CASE(every_case_matches_llama_cpp) {
    const auto all = cases();
    BOOST_REQUIRE_EQUAL(all.size(), 12u);
    for (const auto& c : all) {
        auto e = engine_for(c);
        check(c, embed(*e, {c.tokens}).at(0), "one pass");
        if (c.text.empty()) continue;
        BOOST_TEST(e->tokenize(c.text, true, true) == c.tokens, c.name << ": WordPiece ids differ from llama.cpp's");
        check(c, embed(*e, {c.text}).at(0), "from text");
    }
}

// Decoders: an input through passes of 5 tokens gives the same vector. Encoders take an
// input whole in one pass, so a longer one is refused naming engine.batch_tokens.
BOOST_AUTO_TEST_CASE(passes_of_five_tokens) {
    for (const auto& c : cases()) {
        if (c.tokens.size() < 64) continue;
        auto e = engine_for(c, 5);
        if (c.text.empty()) {
            check(c, embed(*e, {c.tokens}).at(0), "passes of 5");
            continue;
        }
        auto sink = std::make_shared<Wait>();
        e->submit(embed_request({c.tokens}), sink);
        sink->wait();
        BOOST_TEST(sink->error.find("engine.batch_tokens") != std::string::npos, sink->error);
    }
}

// An encoder computes embeddings only: a generation is refused at once.
BOOST_AUTO_TEST_CASE(an_encoder_refuses_to_generate) {
    const auto all = cases();
    const EmbedCase& c = *std::find_if(all.begin(), all.end(), [](const EmbedCase& x) { return !x.text.empty(); });
    auto e = engine_for(c);
    GenerateRequest gen;
    gen.prompt = "hello";
    try {
        e->submit(gen, std::make_shared<Wait>());
        BOOST_FAIL("accepted");
    } catch (const EngineError& err) {
        BOOST_TEST(err.field() == "prompt");
        BOOST_TEST(std::string(err.what()).find("embeddings only") != std::string::npos);
    }
}

// Several inputs in one request, and an embedding beside a generation on the same engine:
// each input's vector is the one it gets alone, up to the last bits. Which tokens share a
// pass depends on when the generation's steps fall, and a pass's size picks the products'
// paths and how a token's attention is split over the threads: the same input computed in
// passes of 16, 7 or 1 tokens differed by up to 1e-9, 1e-9 and 3e-5 (2026-11-27), so exact
// equality here failed now and then on a loaded machine.
BOOST_AUTO_TEST_CASE(batched_inputs_and_a_concurrent_generation) {
    const auto all = cases();
    const EmbedCase& c = *std::find_if(all.begin(), all.end(), [](const EmbedCase& x) { return x.name == "qwen3-f16.mean.long"; });
    auto e = engine_for(c, 16);
    GenerateRequest gen;
    gen.uid = 1000;
    gen.prompt = "hello";
    gen.max_tokens = 20;
    gen.ignore_eos = true;
    gen.sampling.temperature = 0;
    auto g = std::make_shared<Wait>();
    e->submit(gen, g);
    const std::vector<int32_t> shorter(c.tokens.begin(), c.tokens.begin() + 7);
    const auto both = embed(*e, {c.tokens, shorter, c.tokens});
    g->wait();
    BOOST_TEST(g->error.empty());
    BOOST_REQUIRE_EQUAL(both.size(), 3u);
    check(c, both[0], "first of three");
    check(c, both[2], "third of three");
    BOOST_TEST(max_abs_diff(both[0], both[2]) <= kSameInput);
    BOOST_TEST(max_abs_diff(both[1], embed(*e, {shorter}).at(0)) <= kSameInput);
}

BOOST_AUTO_TEST_CASE(refused_inputs_name_the_field) {
    const auto all = cases();
    auto e = engine_for(all.front());
    auto refused = [&](std::vector<EmbedInput> inputs, const std::string& field) {
        try {
            e->submit(embed_request(std::move(inputs)), std::make_shared<Wait>());
            BOOST_FAIL("accepted");
        } catch (const EngineError& err) {
            BOOST_TEST(errc_name(err.code()) == "invalid_params");
            BOOST_TEST(err.field() == field);
        }
    };
    refused({std::string()}, "input[0]");
    refused({std::vector<int32_t>{1, 2}, std::vector<int32_t>{}}, "input[1]");
    refused({std::vector<int32_t>{1, 99999}}, "input[0][1]");
    GenerateRequest with_session = embed_request({std::vector<int32_t>{1}});
    with_session.session = "s";
    BOOST_CHECK_THROW(e->submit(with_session, std::make_shared<Wait>()), EngineError);
    // Longer than the context (256): refused once tokenized, on the engine thread.
    auto sink = std::make_shared<Wait>();
    e->submit(embed_request({std::vector<int32_t>(300, 5)}), sink);
    sink->wait();
    BOOST_TEST(sink->error.find("300 tokens") != std::string::npos, sink->error);
}

BOOST_AUTO_TEST_SUITE_END()
