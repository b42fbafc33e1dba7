// tests/unit/engine_test.cpp — the engine on the real stories260K model: the known greedy
// text byte for byte, sessions continuing with their KV cache, several requests batched
// together giving the same text as alone, cancellation, every admission limit, chat
// rendering, stop strings, and sessions surviving a restart.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "engine/engine.h"
#include "engine/state_dir.h"
#include "gguf/writer.h"
#include "kv/kv_cache.h"
#include "test_util.h"

using namespace strata;
using namespace strata::engine;

namespace {

// Collects one request's output and lets the test wait for its end.
class Collect : public Sink {
public:
    void on_text(std::string_view piece) override {
        std::lock_guard lk(mu_);
        if (pieces_ == 0) first_text_at_ = std::chrono::steady_clock::now();
        text_ += piece;
        ++pieces_;
    }
    void on_done(const Result& r) override {
        std::lock_guard lk(mu_);
        result_ = r;
        done_at_ = std::chrono::steady_clock::now();
        done_ = true;
        cv_.notify_all();
    }
    void on_error(const EngineError& e) override {
        std::lock_guard lk(mu_);
        error_ = e.code();
        message_ = e.what();
        done_ = true;
        cv_.notify_all();
    }
    // Waits for the end; false on timeout.
    bool wait(int seconds = 60) {
        std::unique_lock lk(mu_);
        return cv_.wait_for(lk, std::chrono::seconds(seconds), [&] { return done_; });
    }
    int pieces() {
        std::lock_guard lk(mu_);
        return pieces_;
    }
    std::string text_;
    Result result_;
    std::optional<Errc> error_;
    std::string message_;
    std::chrono::steady_clock::time_point first_text_at_, done_at_;

private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    int pieces_ = 0;
};

std::string model_path() { return (test::source_dir() / "daemon/models/stories260K.gguf").string(); }

Config config(const std::string& state_dir = "") {
    Config c;
    c.model_path = model_path();
    c.threads = 2;
    c.context = 512;
    c.state_dir = state_dir;
    return c;
}

GenerateRequest greedy(std::string prompt, int max_tokens, std::string session = "", uint32_t uid = 1000) {
    GenerateRequest r;
    r.uid = uid;
    r.session = std::move(session);
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0;
    return r;
}

std::shared_ptr<Collect> run(Engine& e, GenerateRequest r) {
    auto sink = std::make_shared<Collect>();
    e.submit(std::move(r), sink);
    BOOST_REQUIRE(sink->wait());
    return sink;
}

Errc submit_error(Engine& e, GenerateRequest r) {
    try {
        e.submit(std::move(r), std::make_shared<Collect>());
    } catch (const EngineError& err) {
        return err.code();
    }
    BOOST_FAIL("expected submit() to refuse the request");
    return Errc::Internal;
}

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

struct TempDir {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("strata-engine-test-" + std::to_string(::getpid()));
    TempDir() { std::filesystem::create_directories(path); }
    ~TempDir() { std::filesystem::remove_all(path); }
};

// A copy of stories260K in `dir` whose chat template is `jinja`.
std::string model_with_template(const TempDir& dir, const std::string& name, const std::string& jinja) {
    auto src = gguf::File::open(model_path());
    gguf::Writer w(src->alignment());
    for (const auto& [key, value] : src->metadata())
        if (key != "tokenizer.chat_template") w.set_value(key, value);
    for (const auto& t : src->tensors()) w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data);
    w.set_string("tokenizer.chat_template", jinja);
    const std::string path = (dir.path / name).string();
    w.write(path);
    return path;
}

GenerateRequest chat_request(std::vector<Message> messages, int max_tokens) {
    GenerateRequest r;
    r.uid = 1000;
    r.messages = std::move(messages);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0;
    return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engine)

BOOST_AUTO_TEST_CASE(greedy_from_bos_reproduces_the_known_story) {
    Engine e(config());
    auto out = run(e, greedy("", 200));
    BOOST_TEST(!out->error_.has_value());
    const std::string expected = read_file(test::data_dir() / "stories260K/expected-greedy-200steps.txt");
    BOOST_TEST(out->result_.text == expected);
    BOOST_TEST(out->text_ == expected);  // the streamed pieces add up to the result
    BOOST_TEST(out->pieces() > 100);
    BOOST_TEST(out->result_.finish_reason == "length");
    BOOST_TEST(out->result_.usage.completion_tokens == 200);
    BOOST_TEST(out->result_.usage.prompt_tokens == 1);
}

BOOST_AUTO_TEST_CASE(named_session_continues_from_its_cache) {
    Engine e(config());
    auto first = run(e, greedy("Once upon a time", 16, "story"));
    BOOST_TEST(first->result_.usage.cached_tokens == 0);
    auto second = run(e, greedy(" The end", 8, "story"));
    const auto& u = second->result_.usage;
    BOOST_TEST(u.cached_tokens >= first->result_.usage.prompt_tokens + 15);  // the whole first exchange but its last token
    BOOST_TEST(u.prompt_tokens > u.cached_tokens);
    const auto info = e.session_info("story", 1000);
    BOOST_TEST(info.tokens == u.prompt_tokens + 8);
    BOOST_TEST(info.text == "Once upon a time" + first->result_.text + " The end" + second->result_.text);

    // The same conversation replayed in an anonymous session gives the same text.
    auto replay = run(e, greedy("Once upon a time", 16));
    BOOST_TEST(replay->result_.text == first->result_.text);
}

BOOST_AUTO_TEST_CASE(batched_requests_match_requests_alone) {
    Engine e(config());
    const std::vector<std::string> prompts = {"Once upon a time", "Lily saw a cat", "The sun was", "One day, Tom"};
    std::vector<std::string> alone;
    for (const auto& p : prompts) alone.push_back(run(e, greedy(p, 40))->result_.text);
    std::vector<std::shared_ptr<Collect>> sinks;
    for (const auto& p : prompts) {
        sinks.push_back(std::make_shared<Collect>());
        e.submit(greedy(p, 40), sinks.back());
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
        BOOST_REQUIRE(sinks[i]->wait());
        BOOST_TEST(sinks[i]->result_.text == alone[i], "prompt " << i);
    }
    BOOST_TEST(e.status().number("forward_passes") > 0u);
}

BOOST_AUTO_TEST_CASE(cancel_ends_a_request_with_its_text_so_far) {
    Engine e(config());
    auto sink = std::make_shared<Collect>();
    const uint64_t h = e.submit(greedy("Once upon a time", 400), sink);
    while (sink->pieces() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    e.cancel(h);
    BOOST_REQUIRE(sink->wait());
    BOOST_TEST(sink->result_.finish_reason == "cancelled");
    BOOST_TEST(sink->result_.usage.completion_tokens < 400);
    BOOST_TEST(sink->result_.text == sink->text_);
}

BOOST_AUTO_TEST_CASE(admission_limits) {
    Config c = config();
    c.limits.max_queued = 2;
    c.limits.max_sessions_per_user = 1;
    c.limits.max_tokens = 100;
    c.limits.max_prompt_tokens = 20;
    Engine e(c);
    BOOST_TEST((submit_error(e, greedy("x", 101)) == Errc::InvalidParams));
    BOOST_TEST((submit_error(e, greedy("x", 0)) == Errc::InvalidParams));
    GenerateRequest both = greedy("x", 4);
    both.messages.push_back({"user", "hi"});
    BOOST_TEST((submit_error(e, both) == Errc::InvalidParams));
    GenerateRequest bad_sampling = greedy("x", 4);
    bad_sampling.sampling.top_p = 2;
    BOOST_TEST((submit_error(e, bad_sampling) == Errc::InvalidParams));
    BOOST_TEST((submit_error(e, greedy("x", 4, "bad/name")) == Errc::InvalidParams));

    // Per-user session names, busy sessions, the per-user session limit and the queue limit.
    auto long_run = std::make_shared<Collect>();
    e.submit(greedy("Once", 100, "mine"), long_run);
    BOOST_TEST((submit_error(e, greedy("x", 4, "mine")) == Errc::Busy));
    BOOST_TEST((submit_error(e, greedy("x", 4, "second")) == Errc::Busy));  // one session per user
    auto theirs = std::make_shared<Collect>();
    e.submit(greedy("Once", 100, "mine", 1001), theirs);  // uid 1001's own "mine"
    BOOST_TEST((submit_error(e, greedy("x", 4)) == Errc::Busy));  // queue of 2 is full
    BOOST_REQUIRE(long_run->wait());
    BOOST_REQUIRE(theirs->wait());

    // Too long a prompt is refused on the engine thread, after tokenizing.
    auto too_long = run(e, greedy(std::string(200, 'a') + " b c d e f g h i j k l m n o p q r s t u v w x y z", 4));
    BOOST_TEST((too_long->error_ == Errc::InvalidParams));
    BOOST_TEST(too_long->message_.find("limit is 20") != std::string::npos);
    // Root's "mine" is root's own; root lists everyone's.
    BOOST_TEST(run(e, greedy(" The", 4, "mine", 0))->result_.usage.completion_tokens == 4);
    BOOST_TEST(e.session_info("mine", 1001).tokens != e.session_info("mine", 0).tokens);
    BOOST_CHECK_THROW(e.session_info("nothing", 1001), EngineError);
    BOOST_TEST(e.list_sessions(1001).size() == 1u);
    BOOST_TEST(e.list_sessions(0).size() == 3u);
}

// A user over limits.max_running_per_user waits in the queue instead of being refused.
BOOST_AUTO_TEST_CASE(requests_over_the_per_user_limit_wait_their_turn) {
    Config c = config();
    c.limits.max_running_per_user = 1;
    Engine e(c);
    auto first = std::make_shared<Collect>(), second = std::make_shared<Collect>();
    GenerateRequest long_one = greedy("Once upon a time", 400);
    long_one.ignore_eos = true;
    e.submit(long_one, first);
    e.submit(greedy("Once", 4), second);
    while (e.status().number("requests_running") == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    BOOST_TEST(e.status().number("requests_running") == 1);
    BOOST_TEST(e.status().number("requests_queued") == 1);
    BOOST_REQUIRE(first->wait());
    BOOST_REQUIRE(second->wait());
    BOOST_TEST(second->result_.usage.completion_tokens == 4);
    // It waited for the first to end (the sink's timestamps: comparing its queued_ms with
    // the first's generate_ms was racy, since the first's first token can come before the
    // second is submitted).
    BOOST_TEST((second->first_text_at_ >= first->done_at_), "the second request ran beside the first");
}

BOOST_AUTO_TEST_CASE(context_full_is_reported) {
    Config c = config();
    c.context = 32;
    Engine e(c);
    const std::string story = "Once upon a time there was a little girl named Lily who loved to play in the park with her dog";
    BOOST_REQUIRE_GT(e.tokenize(story + story, true, false).size(), 32u);
    auto out = run(e, greedy(story + story, 4));
    BOOST_TEST((out->error_ == Errc::ContextFull));
    auto fits = run(e, greedy("Once upon a time", 100));
    BOOST_TEST(fits->result_.finish_reason == "length");
    // The cache holds 32 positions; the last sampled token is text, never fed back.
    BOOST_TEST(fits->result_.usage.prompt_tokens + fits->result_.usage.completion_tokens == 33);
}

// A long prompt of plain story words (hundreds of tokens in stories260K's small vocabulary).
std::string long_story(int sentences) {
    std::string text;
    for (int i = 0; i < sentences; ++i) text += " Once upon a time there was a little girl named Lily who loved to play in the park.";
    return text;
}

BOOST_AUTO_TEST_CASE(a_request_sharing_a_prefix_computes_only_the_rest_and_gets_the_same_answer) {
    const std::string shared = long_story(8);
    Engine e(config());
    auto first = run(e, greedy(shared + " The dog ran", 12));
    BOOST_TEST(first->result_.usage.cached_tokens == 0);
    auto second = run(e, greedy(shared + " Then the sun came out", 12));
    const auto& u = second->result_.usage;
    const int32_t shared_tokens = static_cast<int32_t>(e.tokenize(shared, true, false).size());
    BOOST_TEST_REQUIRE(shared_tokens > 100);
    // Every block of the shared part but the one it ends in is reused.
    BOOST_TEST(u.cached_tokens >= shared_tokens / strata::kv::kBlockTokens * strata::kv::kBlockTokens - strata::kv::kBlockTokens);
    BOOST_TEST(u.prompt_tokens - u.cached_tokens < 2 * strata::kv::kBlockTokens + 8);
    const Status st = e.status();
    BOOST_TEST(st.number("prefix_cache_hits") >= 1u);
    BOOST_TEST(st.number("prefix_cache_blocks") > 0u);

    // Greedy text is what an engine without any cached prefix gives.
    Engine fresh(config());
    BOOST_TEST(run(fresh, greedy(shared + " Then the sun came out", 12))->result_.text == second->result_.text);
    // The same prompt again is served from the cache but for its last block.
    auto again = run(e, greedy(shared + " The dog ran", 12));
    BOOST_TEST(again->result_.text == first->result_.text);
    BOOST_TEST(again->result_.usage.prompt_tokens - again->result_.usage.cached_tokens <= strata::kv::kBlockTokens);
}

BOOST_AUTO_TEST_CASE(sessions_sharing_a_system_prompt_share_its_kv) {
    Config c = config();
    c.memory.kv_bytes = 64ull << 20;  // room for all: nothing is evicted
    Engine e(c);
    const std::string system = long_story(10);
    run(e, greedy(system + " Session 0 asks", 4, "s0"));
    const double one = e.status().number("kv_bytes");
    for (int i = 1; i < 8; ++i) {
        auto out = run(e, greedy(system + " Session " + std::to_string(i) + " asks", 4, "s" + std::to_string(i)));
        BOOST_TEST(out->result_.usage.cached_tokens > 100);
    }
    const Status st = e.status();
    BOOST_TEST(st.number("kv_bytes") < 2 * one, st.number("kv_bytes") << " bytes for 8 sessions, " << one << " for one");
    BOOST_TEST(st.number("kv_bytes_idle") > 0u);
    BOOST_TEST(st.number("kv_mapped_bytes") >= st.number("kv_bytes"));  // one 2 MiB chunk holds these small blocks
    BOOST_TEST(st.number("kv_mapped_bytes") <= st.number("kv_bytes") + (2u << 20));
}

BOOST_AUTO_TEST_CASE(a_tiny_kv_budget_evicts_but_loses_no_session) {
    Config tiny = config();
    tiny.memory.kv_bytes = 128u << 10;  // about 200 positions of stories260K: two of the sessions
    Engine small(tiny);
    Engine roomy(config());
    const std::string story = long_story(3);
    for (int round = 0; round < 2; ++round)
        for (int i = 0; i < 3; ++i) {
            const std::string name = "s" + std::to_string(i);
            auto request = greedy(round == 0 ? story + " Tale " + std::to_string(i) : " And then", 16, name);
            const std::string got = run(small, request)->result_.text;
            BOOST_TEST(got == run(roomy, request)->result_.text, name << " round " << round);
        }
    const Status st = small.status();
    BOOST_TEST(st.number("kv_evictions") > 0u);
    BOOST_TEST(st.number("kv_bytes") <= st.number("kv_budget_bytes"));
    for (int i = 0; i < 3; ++i) BOOST_TEST(small.session_info("s" + std::to_string(i), 1000).tokens > 100);
}

// Two requests whose KV fits the budget alone but not together: the second waits for the
// first to end (queued, counted as such), then runs and gives its own answer.
BOOST_AUTO_TEST_CASE(a_request_whose_kv_does_not_fit_beside_the_running_ones_waits) {
    Config tiny = config();
    tiny.memory.kv_bytes = 128u << 10;  // about 200 positions of stories260K
    Engine e(tiny);
    Engine roomy(config());
    auto first = std::make_shared<Collect>(), second = std::make_shared<Collect>();
    e.submit(greedy("Tale one." + long_story(4), 8), first);  // 7 blocks of 16 positions each
    e.submit(greedy("Tale two." + long_story(4), 8), second);
    BOOST_REQUIRE(first->wait());
    BOOST_REQUIRE(second->wait());
    BOOST_TEST(!first->error_.has_value());
    BOOST_TEST(!second->error_.has_value(), second->message_);
    BOOST_TEST((second->first_text_at_ >= first->done_at_), "the second request ran beside the first");
    BOOST_TEST(second->result_.text == run(roomy, greedy("Tale two." + long_story(4), 8))->result_.text);
    // Within the budget but for the generated tokens' last block.
    BOOST_TEST(e.status().number("kv_bytes") <= e.status().number("kv_budget_bytes") + 16 * 640);
}

BOOST_AUTO_TEST_CASE(a_prompt_larger_than_the_kv_budget_is_refused_naming_it) {
    Config tiny = config();
    tiny.memory.kv_bytes = 128u << 10;
    Engine e(tiny);
    auto out = run(e, greedy(long_story(10), 4));
    BOOST_TEST((out->error_ == Errc::ContextFull));
    BOOST_TEST(out->message_.find("memory.kv_budget") != std::string::npos, out->message_);
}

BOOST_AUTO_TEST_CASE(stop_strings_end_the_text_before_them) {
    Engine e(config());
    const std::string full = run(e, greedy("", 60))->result_.text;
    const auto at = full.find("Lily");
    BOOST_REQUIRE(at != std::string::npos);
    GenerateRequest r = greedy("", 60);
    r.stop = {"Lily"};
    auto out = run(e, r);
    BOOST_TEST(out->result_.text == full.substr(0, at));
    BOOST_TEST(out->result_.finish_reason == "stop");
}

BOOST_AUTO_TEST_CASE(chat_messages_use_the_chosen_template) {
    Engine e(config());
    GenerateRequest r;
    r.uid = 1000;
    r.session = "chat";
    r.messages = {{"user", "Tell me a story"}};
    r.max_tokens = 8;
    r.sampling.temperature = 0;
    // A built-in family chosen by name overrides the model's own template.
    r.chat_template = "plain";
    auto first = run(e, r);
    BOOST_TEST(!first->error_.has_value());
    r.messages = {{"user", "Another one"}};
    auto second = run(e, r);
    BOOST_TEST(second->result_.usage.cached_tokens > 0);
    const auto info = e.session_info("chat", 1000);
    BOOST_REQUIRE_EQUAL(info.conversation.size(), 4u);
    BOOST_TEST(info.conversation[1].role == "assistant");
    BOOST_TEST(info.conversation[1].content == first->result_.text);
    // A chat session does not take raw prompts.
    BOOST_TEST((run(e, greedy("x", 4, "chat"))->error_ == Errc::InvalidParams));
}

BOOST_AUTO_TEST_CASE(sessions_survive_a_restart) {
    TempDir dir;
    std::string first_text, continued;
    const mode_t umask_before = ::umask(0);  // the most careless admin
    {
        Engine e(config(dir.path.string()));
        first_text = run(e, greedy("Once upon a time", 12, "kept"))->result_.text;
        e.shutdown(1000);
    }
    ::umask(umask_before);
    namespace fs = std::filesystem;
    BOOST_TEST(fs::exists(dir.path / "1000-kept.session"));
    BOOST_TEST(fs::exists(dir.path / "1000-kept.kv"));
    // Private whatever the umask: the directory 0700, the files 0600.
    auto mode = [](const fs::path& p) { return static_cast<unsigned>(fs::status(p).permissions() & fs::perms::all); };
    BOOST_TEST(mode(dir.path) == 0700u);
    for (const char* name : {"1000-kept.session", "1000-kept.kv", ".lock"})
        BOOST_TEST(mode(dir.path / name) == 0600u, name);
    {
        Engine e(config(dir.path.string()));
        const auto list = e.list_sessions(1000);
        BOOST_REQUIRE_EQUAL(list.size(), 1u);
        BOOST_TEST(list[0].name == "kept");
        BOOST_TEST(e.session_info("kept", 1000).text == "Once upon a time" + first_text);
        auto next = run(e, greedy(" The", 4, "kept"));
        BOOST_TEST(next->result_.usage.cached_tokens > 0);  // the saved KV cache came back
        continued = next->result_.text;
        e.delete_session("kept", 1000);
        BOOST_TEST(!std::filesystem::exists(dir.path / "1000-kept.session"));
    }
    // Without the saved KV cache the continuation is the same (rebuilt from history).
    Engine fresh(config());
    run(fresh, greedy("Once upon a time", 12, "kept"));
    BOOST_TEST(run(fresh, greedy(" The", 4, "kept"))->result_.text == continued);
}

// Gemma 3 (a window of 8 positions on 5 of its 6 layers): a long session's window layers
// hold about one window, so its cache takes little more than its one full-attention layer;
// the same prompt again reuses the prefix kept at its end and answers the same; the
// session's cache comes back after a restart and continues as one rebuilt from history.
BOOST_AUTO_TEST_CASE(sliding_window_layers_keep_only_their_window) {
    TempDir dir;
    Config c = config(dir.path.string());
    c.model_path = (test::source_dir() / "tests/data/archs/models/gemma3-f16.gguf").string();
    const std::string prompt = long_story(2);
    auto request = [&](std::string text, int n, std::string session) {
        GenerateRequest r = greedy(std::move(text), n, std::move(session));
        r.ignore_eos = true;
        return r;
    };
    std::string continued;
    {
        Engine e(c);
        const auto first = run(e, request(prompt, 100, "w"));
        const int32_t positions = e.session_info("w", 1000).tokens;
        BOOST_TEST_REQUIRE(positions > 250);
        const strata::kv::Shape all{6, 32};  // the model's KV geometry without its window
        const uint64_t everything = strata::kv::KvCache(all, 4096).bytes_for(positions);
        const Status st = e.status();
        BOOST_TEST(st.number("kv_bytes_idle") < everything / 3, st.number("kv_bytes_idle") << " of " << everything);
        const auto again = run(e, request(prompt, 100, ""));
        BOOST_TEST(again->result_.text == first->result_.text);
        BOOST_TEST(again->result_.usage.prompt_tokens - again->result_.usage.cached_tokens <= strata::kv::kBlockTokens);
        e.shutdown(1000);
    }
    {
        Engine e(c);
        const auto next = run(e, request(" The end.", 20, "w"));
        BOOST_TEST(next->result_.usage.cached_tokens > 250);  // the saved cache came back
        continued = next->result_.text;
    }
    Config stateless = c;
    stateless.state_dir.clear();
    Engine fresh(stateless);
    run(fresh, request(prompt, 100, "w"));
    BOOST_TEST(run(fresh, request(" The end.", 20, "w"))->result_.text == continued);
}

// The smallest budget that runs the model streamed: everything but the reserves is streamed.
std::unique_ptr<Engine> smallest_streaming_engine() {
    for (int kib = 128 << 10; kib < (192 << 10); kib += 256) {
        Config c = config();
        c.memory.mode = "streamed";
        c.memory.budget = std::to_string(kib) + "K";
        try {
            return std::make_unique<Engine>(c);
        } catch (const std::runtime_error&) {
        }
    }
    BOOST_FAIL("no budget between 128 and 192 MiB runs the model streamed");
    return nullptr;
}

BOOST_AUTO_TEST_CASE(streamed_weights_give_the_same_story) {
    auto engine = smallest_streaming_engine();
    Engine& e = *engine;
    const Status st = e.status();
    BOOST_TEST(st.text("weights_mode") == "streamed");
    BOOST_TEST(st.number("streamed_bytes_per_pass") > 0u);
    BOOST_TEST(st.text("memory_plan").find("streamed") == 0);
    BOOST_TEST(st.number("batch_tokens") >= 512);
    auto out = run(e, greedy("", 200));
    BOOST_TEST(out->result_.text == read_file(test::data_dir() / "stories260K/expected-greedy-200steps.txt"));
    const Status after = e.status();
    // 200 passes; the range at the end of the file reads short of its aligned length.
    BOOST_TEST(after.number("weights_bytes_read") >= 199 * after.number("streamed_bytes_per_pass"));
    BOOST_TEST(after.number("read_bytes_per_s") > 0);

    // With room to spare, streaming takes larger passes (each pass reads the weights once).
    Config roomy = config();
    roomy.memory.mode = "streamed";
    roomy.memory.budget = "1G";
    BOOST_TEST(Engine(roomy).status().number("batch_tokens") == 2048);

    Config tiny = config();
    tiny.memory.budget = "1M";
    try {
        Engine small(tiny);
        BOOST_FAIL("expected the budget to be refused");
    } catch (const std::runtime_error& err) {
        BOOST_TEST(std::string(err.what()).find("cannot run within the memory budget") != std::string::npos, err.what());
    }
}

BOOST_AUTO_TEST_CASE(shutdown_cancels_what_does_not_finish_in_time) {
    Engine e(config());
    auto sink = std::make_shared<Collect>();
    e.submit(greedy("Once upon a time", 400), sink);
    while (sink->pieces() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    e.shutdown(0);
    BOOST_REQUIRE(sink->wait(1));
    BOOST_TEST(sink->result_.finish_reason == "cancelled");
    BOOST_TEST((submit_error(e, greedy("x", 4)) == Errc::ShuttingDown));
}

BOOST_AUTO_TEST_SUITE_END()

// One daemon per state directory: the second is refused, naming the holder's pid; a
// failed write leaves the old file whole.
BOOST_AUTO_TEST_CASE(the_state_directory_is_locked_and_written_durably) {
    TempDir dir;
    const std::string path = (dir.path / "state").string();
    StateDir held(path);
    try {
        StateDir second(path);
        BOOST_FAIL("a second StateDir on the same directory was allowed");
    } catch (const StateDirError& e) {
        BOOST_TEST(std::string(e.what()).find("pid " + std::to_string(::getpid())) != std::string::npos, e.what());
    }
    held.write_file("f", [](std::FILE* out) { std::fputs("old", out); });
    BOOST_CHECK_THROW(held.write_file("f", [](std::FILE* out) {
        std::fputs("new", out);
        throw std::runtime_error("disk full");
    }), std::runtime_error);
    std::ifstream in(path + "/f");
    BOOST_TEST(std::string(std::istreambuf_iterator<char>(in), {}) == "old");
    BOOST_TEST(!std::filesystem::exists(path + "/f.tmp"));
    held = StateDir();  // released: another may take it
    BOOST_CHECK_NO_THROW(StateDir{path});
}

BOOST_AUTO_TEST_CASE(the_models_own_template_renders_chats) {
    Engine e(config());
    BOOST_TEST(e.model_info().chat_template == "jinja");
    // The bundled template writes BOS, then each turn as a line: the same tokens as that raw prompt.
    auto chat = run(e, chat_request({{"system", "Tell a story."}, {"user", "Once upon a time"}}, 12));
    BOOST_REQUIRE(!chat->error_.has_value());
    auto raw = run(e, greedy("Tell a story.\nOnce upon a time\n", 12));
    BOOST_TEST(chat->result_.usage.prompt_tokens == raw->result_.usage.prompt_tokens);
    BOOST_TEST(chat->result_.text == raw->result_.text);
}

BOOST_AUTO_TEST_CASE(a_failing_template_fails_only_that_request) {
    TempDir dir;
    {
        Config c = config();
        c.model_path = model_with_template(dir, "raising.gguf", "{{ raise_exception('Roles must alternate user/assistant') }}");
        Engine e(c);
        auto out = run(e, chat_request({{"user", "Hi"}}, 4));
        BOOST_TEST((out->error_ == Errc::InvalidParams));
        BOOST_TEST(out->message_.find("Roles must alternate user/assistant") != std::string::npos, out->message_);
        BOOST_TEST(!run(e, greedy("Once", 4))->error_.has_value());
    }
    {
        // A loop that would run for ever against the render's step bound. Its body is one
        // test of many expressions, so that the bound is reached after few iterations (a
        // loop iteration costs far more than an expression step: nested empty loops took
        // 43 s to reach it under ASan, where the wait below gives a request 60).
        std::string endless = "i < 0";
        for (int k = 0; k < 63; ++k) endless += " or i < 0";
        Config c = config();
        c.model_path = model_with_template(dir, "looping.gguf", "{% for i in range(100000) %}{% if " + endless + " %}x{% endif %}{% endfor %}");
        Engine e(c);
        auto out = run(e, chat_request({{"user", "Hi"}}, 4));
        BOOST_TEST((out->error_ == Errc::InvalidParams));
        BOOST_TEST(out->message_.find("steps") != std::string::npos, out->message_);
        BOOST_TEST(!run(e, greedy("Once", 4))->error_.has_value());
    }
    {
        Config c = config();
        c.model_path = model_with_template(dir, "broken.gguf", "{% if messages %}unclosed");
        Engine e(c);
        BOOST_TEST(e.model_info().chat_template == "");
        BOOST_TEST((submit_error(e, chat_request({{"user", "Hi"}}, 4)) == Errc::InvalidParams));
        auto plain = chat_request({{"user", "Hi"}}, 4);
        plain.chat_template = "plain";
        BOOST_TEST(!run(e, plain)->error_.has_value());
    }
}
