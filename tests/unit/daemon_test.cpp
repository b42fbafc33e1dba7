// tests/unit/daemon_test.cpp — the daemon's parsing that needs no running engine:
// strata.conf syntax and keys, command-line overrides, SIGHUP change classification,
// protocol sniffing, the JSON-RPC envelope, request field validation (native and
// OpenAI), tool calling (formats of real chat templates, parsing calls back, the forced-call
// grammars), and the latency histograms (buckets, the recent window, percentiles, the
// Prometheus text). The daemon's behaviour on a socket is tested in tests/integration/.
#include <unistd.h>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "host/ini.h"
#include "host/latency.h"
#include "host/metrics.h"
#include "host/pressure.h"
#include "host/settings.h"
#include "openai/openai.h"
#include "protocol/tool_calls.h"
#include "grammar/automaton.h"
#include "protocol/generate_params.h"
#include "protocol/json_schema.h"
#include "responses/responses.h"
#include "responses/responses_stream.h"
#include "rpc/jsonrpc.h"
#include "transport/api_keys.h"
#include "transport/sniff.h"
#include "test_util.h"

namespace json = boost::json;
using namespace strata::daemon;

namespace {

// A strata.conf in a temporary directory, removed afterwards.
struct ConfigFile {
    std::filesystem::path path;
    explicit ConfigFile(const std::string& text) {
        path = std::filesystem::temp_directory_path() / ("strata-daemon-test-" + std::to_string(getpid()) + ".conf");
        std::ofstream(path) << text;
    }
    ~ConfigFile() { std::filesystem::remove(path); }
};

std::string config_error(const std::string& text, const std::vector<Override>& overrides = {}) {
    ConfigFile file(text);
    try {
        load_settings(file.path, true, overrides);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

RequestContext context() {
    RequestContext c;
    c.uid = 1000;
    c.limits.max_tokens = 1000;
    c.limits.default_max_tokens = 100;
    return c;
}

// The field an invalid_params error names, or "" when the params are accepted.
std::string bad_field(const std::string& params_json) {
    try {
        parse_generate(json::parse(params_json).as_object(), context());
    } catch (const ApiError& error) {
        BOOST_TEST((error.kind() == ErrorKind::InvalidParams));
        return error.field();
    }
    return "";
}

std::string bad_openai_field(OpenAiKind kind, const std::string& body_json) {
    try {
        parse_openai(kind, json::parse(body_json).as_object(), context());
    } catch (const ApiError& error) {
        BOOST_TEST((error.kind() == ErrorKind::InvalidParams));
        return error.field();
    }
    return "";
}

ErrorKind request_error(const std::string& line, json::value* id = nullptr) {
    try {
        parse_request(line, 8);
    } catch (const BadRequest& error) {
        if (id)
            *id = error.id();
        return error.kind();
    }
    return ErrorKind::Internal;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ini)

BOOST_AUTO_TEST_CASE(sections_keys_comments_and_quotes) {
    const auto entries = parse_ini("# comment\n; also\n\n[model]\npath = \"/m/a b.gguf\"  \n[server]\n socket=/s\n", "f");
    BOOST_TEST_REQUIRE(entries.size() == 2u);
    BOOST_TEST(entries[0].section == "model");
    BOOST_TEST(entries[0].key == "path");
    BOOST_TEST(entries[0].value == "/m/a b.gguf");
    BOOST_TEST(entries[0].line == 5);
    BOOST_TEST(entries[1].value == "/s");
    BOOST_TEST(entries[1].line == 7);
}

BOOST_AUTO_TEST_CASE(syntax_errors_name_file_and_line) {
    auto message = [](const std::string& text) {
        try {
            parse_ini(text, "/etc/x.conf");
        } catch (const ConfigError& error) {
            return std::string(error.what());
        }
        return std::string();
    };
    BOOST_TEST(contains(message("key = 1\n"), "/etc/x.conf:1: key 'key' comes before any [section]"));
    BOOST_TEST(contains(message("[a]\n[b\n"), "/etc/x.conf:2: malformed section header"));
    BOOST_TEST(contains(message("[a]\njust words\n"), "/etc/x.conf:2: expected 'key = value'"));
    BOOST_TEST(contains(message("[a]\nk = 1\nk = 2\n"), "/etc/x.conf:3: [a] k is set twice (first on line 2)"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(settings)

BOOST_AUTO_TEST_CASE(values_of_every_syntax) {
    ConfigFile file(
        "[model]\npath = /m.gguf\n[server]\nsocket = /tmp/s.sock\nmax_output_buffer = 64K\nshutdown_grace = 1500ms\n"
        "[memory]\nbudget = 6G\nmode = streamed\nlock = yes\n[limits]\nmax_tokens = 512\nsession_idle_timeout = 7d\n"
        "context_overflow = truncate_middle\n[log]\nlevel = debug\n");
    const Settings s = load_settings(file.path, true, {});
    BOOST_TEST(s.engine.model_path == "/m.gguf");
    BOOST_TEST(s.server.socket == "/tmp/s.sock");
    BOOST_TEST(s.server.max_output_buffer == 64u * 1024);
    BOOST_TEST(s.server.shutdown_grace_ms == 1500u);
    BOOST_TEST(s.engine.memory.budget == "6G");
    BOOST_TEST(s.engine.memory.mode == "streamed");
    BOOST_TEST(s.engine.memory.lock);
    BOOST_TEST(s.engine.limits.max_tokens == 512);
    BOOST_TEST(s.engine.limits.session_idle_timeout_s == 7 * 86400);
    BOOST_TEST((s.engine.limits.context_overflow == strata::engine::ContextOverflow::TruncateMiddle));
    BOOST_TEST((s.log_level == strata::daemon::log::Level::Debug));
}

BOOST_AUTO_TEST_CASE(defaults_and_overrides) {
    ConfigFile file("[model]\npath = /m.gguf\n[engine]\nthreads = 2\n");
    const Settings s = load_settings(file.path, true, {{"engine.threads", "3", "--threads"}});
    BOOST_TEST(s.engine.threads == 3);
    BOOST_TEST(s.engine.draft_p_min == 0.1f);
    BOOST_TEST(load_settings(file.path, true, {{"engine.draft_p_min", "0.25", "--set engine.draft_p_min=0.25"}}).engine.draft_p_min == 0.25f);
    BOOST_TEST(s.server.shutdown_grace_ms == 10000u);
    BOOST_TEST(s.engine.limits.session_idle_timeout_s == 30 * 86400);
    BOOST_TEST((s.engine.limits.context_overflow == strata::engine::ContextOverflow::Error));
    BOOST_TEST(!s.server.socket.empty());
    const Settings missing_file = load_settings("/nonexistent/strata.conf", false, {{"model.path", "/x", "--model"}});
    BOOST_TEST(missing_file.engine.model_path == "/x");
    BOOST_CHECK_THROW(load_settings("/nonexistent/strata.conf", true, {{"model.path", "/x", "--model"}}), ConfigError);
}

BOOST_AUTO_TEST_CASE(errors_name_where_and_which_key) {
    const std::string unknown = config_error("[model]\npath = /m\n[limits]\nmax_token = 5\n");
    BOOST_TEST(contains(unknown, ".conf:4: unknown key 'max_token' in [limits] (did you mean [limits] max_tokens"));
    BOOST_TEST(contains(unknown, "known: max_prompt_tokens, max_tokens"));
    // Typos point to the key meant: a prefix, the key in another section, a letter off.
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[memory]\nkv = 1G\n"), "did you mean [memory] kv_budget"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[server]\nmax_tokens = 5\n"), "did you mean [limits] max_tokens"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[engine]\nthreds = 2\n"), "did you mean [engine] threads"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[sesions]\nstate_dir = /x\n"), "did you mean [sessions] state_dir"));
    BOOST_TEST(!contains(config_error("[model]\npath = /m\n[engine]\nzzzzzz = 2\n"), "did you mean"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[nope]\nx = 1\n"), ".conf:4: unknown section [nope]"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[engine]\nthreads = -1\n"),
                        ".conf:4: engine.threads = \"-1\": out of range, expected an integer from 0 to 1024"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[engine]\ncontext = lots\n"), "engine.context = \"lots\""));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[memory]\nbudget = 6Q\n"), "unknown unit 'Q'"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[server]\nshutdown_grace = 2w\n"), "unknown duration unit"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[server]\nshutdown_grace = 2d\n"), "expected at most 1h"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[limits]\nsession_idle_timeout = 1500ms\n"), "whole seconds"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[limits]\ncontext_overflow = shift\n"),
                        "expected error or truncate_middle"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[memory]\nlock = perhaps\n"), "expected yes or no"));
    for (const char* bad : {"1.5", "-0.1", "lots", "0.2x", "nan"})
        BOOST_TEST(contains(config_error(std::string("[model]\npath = /m\n[engine]\ndraft_p_min = ") + bad + "\n"),
                            "expected a probability from 0 to 1"), bad);
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[server]\nmax_request_bytes = 99999999999999999999\n"),
                        "number too large"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n", {{"limits.max_tokens", "x", "--set limits.max_tokens=x"}}),
                        "--set limits.max_tokens=x: limits.max_tokens"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[limits]\nmax_tokens = 10\ndefault_max_tokens = 20\n"),
                        "limits.default_max_tokens (20) is larger than limits.max_tokens (10)"));
    BOOST_TEST(contains(config_error("[server]\nsocket = /s\n"), "no model"));
}

BOOST_AUTO_TEST_CASE(tcp_listener_addresses_and_the_keys_it_needs) {
    const auto v4 = parse_listen_address("127.0.0.1:8080");
    BOOST_TEST(v4.host == "127.0.0.1");
    BOOST_TEST(v4.port == 8080);
    const auto v6 = parse_listen_address("[::1]:0");
    BOOST_TEST(v6.host == "::1");
    BOOST_TEST(v6.show() == "[::1]:0");
    BOOST_TEST(parse_listen_address("[::]:443").show() == "[::]:443");
    BOOST_TEST(parse_listen_address("").host.empty());
    BOOST_TEST(parse_listen_address("off").show().empty());
    for (const char* bad : {"8080", "localhost:8080", "::1:8080", "127.0.0.1:65536", "127.0.0.1:http", "1.2.3:80"})
        BOOST_CHECK_THROW(parse_listen_address(bad), std::invalid_argument);
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[server]\nlisten = ::1:80\n"), "goes in brackets: [::1]:PORT"));
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[server]\nlisten = example.org:80\n"), "host names are not resolved"));
    // TCP without keys is refused unless the insecure option says so.
    const std::string no_keys = config_error("[model]\npath = /m\n[server]\nlisten = 127.0.0.1:8080\n");
    BOOST_TEST(contains(no_keys, "server.listen = 127.0.0.1:8080 needs server.api_keys_file"));
    BOOST_TEST(contains(no_keys, "server.tcp_without_api_keys = yes"));
    BOOST_TEST(config_error("[model]\npath = /m\n[server]\nlisten = 127.0.0.1:8080\ntcp_without_api_keys = yes\n").empty());
    BOOST_TEST(config_error("[model]\npath = /m\n[server]\nlisten = 127.0.0.1:8080\napi_keys_file = /k\n").empty());
    ConfigFile file("[model]\npath = /m\n[limits]\nrequest_timeout = 90s\n");
    BOOST_TEST(load_settings(file.path, true, {}).engine.limits.request_timeout_ms == 90000);
    BOOST_TEST(contains(config_error("[model]\npath = /m\n[limits]\nrequest_timeout = 31d\n"), "expected at most 30d"));
}

BOOST_AUTO_TEST_CASE(reload_sorts_live_from_restart_keys) {
    ConfigFile file("[model]\npath = /a.gguf\n[limits]\nmax_tokens = 1000\n");
    const Settings before = load_settings(file.path, true, {});
    std::ofstream(file.path) << "[model]\npath = /b.gguf\n[limits]\nmax_tokens = 500\n[log]\nlevel = debug\n";
    const Settings after = load_settings(file.path, true, {});
    const SettingsChange change = compare(before, after);
    BOOST_TEST(change.live.size() == 2u);
    BOOST_TEST(contains(change.live[0], "limits.max_tokens: 1000 -> 500"));
    BOOST_TEST_REQUIRE(change.restart.size() == 1u);
    BOOST_TEST(change.restart[0] == "model.path: /a.gguf -> /b.gguf");
    const Settings merged = merge_live(before, after);
    BOOST_TEST(merged.engine.model_path == "/a.gguf");
    BOOST_TEST(merged.engine.limits.max_tokens == 500);
    BOOST_TEST((merged.log_level == strata::daemon::log::Level::Debug));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(sniffing) {
    BOOST_TEST((sniff("GET /health HTTP/1.1\r\nHost: x\r\n") == Protocol::Http));
    BOOST_TEST((sniff("POST /v1/completions HTTP/1.0\n") == Protocol::Http));
    BOOST_TEST((sniff("{\"jsonrpc\":\"2.0\"}\n") == Protocol::Native));
    BOOST_TEST((sniff("  {") == Protocol::Native));
    BOOST_TEST((sniff("") == Protocol::NeedMore));
    BOOST_TEST((sniff("PO") == Protocol::NeedMore));
    BOOST_TEST((sniff("POST /v1/completions HTT") == Protocol::NeedMore));
    BOOST_TEST((sniff("GET nothing\n") == Protocol::Native));
    BOOST_TEST((sniff("GET / HTTP/2.0\r\n") == Protocol::Native));
    BOOST_TEST((sniff("GETTY") == Protocol::Native));
}

BOOST_AUTO_TEST_SUITE(memory_pressure)

using strata::daemon::BudgetPolicy;
constexpr uint64_t MiB = 1ull << 20;

strata::weights::MemoryReading reading(uint64_t limit_mib, uint64_t others_mib) { return {limit_mib * MiB, others_mib * MiB, "test"}; }

BOOST_AUTO_TEST_CASE(budget_follows_what_others_take_and_comes_back_after_a_quiet_time) {
    using namespace std::chrono_literals;
    const auto t0 = BudgetPolicy::Clock::time_point{} + 1h;
    BudgetPolicy p(BudgetPolicy::kNoCap, 1024 * MiB, 30s);
    BOOST_TEST(BudgetPolicy::margin(1024 * MiB) == 64 * MiB);
    BOOST_TEST(!p.update(t0, reading(1024, 0)));
    BOOST_TEST(!p.update(t0, reading(1024, 60)));  // within the margin: nothing
    auto b = p.update(t0 + 1s, reading(1024, 100));
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == (1024 - 100 - 64) * MiB);  // what they leave, less the margin
    BOOST_TEST(!p.update(t0 + 2s, reading(1024, 150)));  // their next step fits the margin
    b = p.update(t0 + 3s, reading(1024, 400));
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == (1024 - 400 - 64) * MiB);
    BOOST_TEST(!p.update(t0 + 4s, reading(1024, 0)));   // gone, but not for long enough
    BOOST_TEST(!p.update(t0 + 32s, reading(1024, 0)));
    b = p.update(t0 + 33s, reading(1024, 0));
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == 1024 * MiB);
    // A limit lowered under stratad (set-property, the cgroup's file) applies at once.
    b = p.update(t0 + 40s, reading(512, 0));
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == (512 - 32) * MiB);
    BOOST_TEST(!p.update(t0 + 41s, reading(2048, 0)));  // raised: after the quiet time
    b = p.update(t0 + 71s, reading(2048, 0));
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == 2048 * MiB);
}

BOOST_AUTO_TEST_CASE(a_configured_budget_caps_it_and_a_reload_applies_both_ways) {
    using namespace std::chrono_literals;
    const auto t0 = BudgetPolicy::Clock::time_point{} + 1h;
    BudgetPolicy p(800 * MiB, 800 * MiB, 30s);
    BOOST_TEST(!p.update(t0, reading(4096, 0)));  // the limit leaves more than memory.budget
    p.reconfigure(600 * MiB, 30s);
    auto b = p.update(t0 + 1s, reading(4096, 0));
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == 600 * MiB);
    p.reconfigure(1000 * MiB, 30s);  // raised on reload: no quiet time to wait
    b = p.update(t0 + 2s, reading(4096, 0));
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == 1000 * MiB);
    p.reconfigure(BudgetPolicy::kNoCap, 30s);  // auto: the limit
    b = p.update(t0 + 3s, reading(4096, 96));
    BOOST_REQUIRE(b);
    BOOST_TEST(*b == 4000 * MiB);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(jsonrpc)

BOOST_AUTO_TEST_CASE(envelope) {
    const RpcRequest r = parse_request(R"({"jsonrpc":"2.0","id":"a","method":"status"})", 8);
    BOOST_TEST(r.method == "status");
    BOOST_TEST(r.id->as_string() == "a");
    BOOST_TEST(r.params.empty());
    BOOST_TEST(!parse_request(R"({"jsonrpc":"2.0","method":"cancel","params":{"id":1}})", 8).id.has_value());
}

BOOST_AUTO_TEST_CASE(bad_lines) {
    json::value id;
    BOOST_TEST((request_error("{not json", &id) == ErrorKind::ParseError));
    BOOST_TEST(id.is_null());
    BOOST_TEST((request_error(R"({"a":[[[[[[[[[[1]]]]]]]]]]})") == ErrorKind::InvalidRequest));
    BOOST_TEST((request_error("[1]") == ErrorKind::InvalidRequest));
    BOOST_TEST((request_error(R"({"id":7,"method":"status"})", &id) == ErrorKind::InvalidRequest));
    BOOST_TEST(id.as_int64() == 7);
    BOOST_TEST((request_error(R"({"jsonrpc":"2.0","id":{},"method":"status"})") == ErrorKind::InvalidRequest));
    BOOST_TEST((request_error(R"({"jsonrpc":"2.0","id":1,"method":5})") == ErrorKind::InvalidRequest));
    BOOST_TEST((request_error(R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})") == ErrorKind::InvalidParams));
    BOOST_TEST((request_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}") == ErrorKind::ParseError));
}

BOOST_AUTO_TEST_CASE(error_line_shape) {
    const json::value line = json::parse(error_line(3, ApiError(ErrorKind::Busy, "full", "x")));
    BOOST_TEST(line.at("id").as_int64() == 3);
    BOOST_TEST(line.at("error").at("code").as_int64() == -32003);
    BOOST_TEST(line.at("error").at("data").at("type").as_string() == "busy");
    BOOST_TEST(line.at("error").at("data").at("field").as_string() == "x");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(generate_params)

BOOST_AUTO_TEST_CASE(a_full_request) {
    const GenerateCall call = parse_generate(
        json::parse(R"({"session":"notes.1","prompt":"Hi","stream":false,"max_tokens":64,"temperature":0,
                        "top_k":5,"seed":18446744073709551615,"stop":["\n\n","END"],
                        "logit_bias":{"3":-1.5,"7":false},"ignore_eos":true})")
            .as_object(),
        context());
    BOOST_TEST(call.request.uid == 1000u);
    BOOST_TEST(call.request.session == "notes.1");
    BOOST_TEST(*call.request.prompt == "Hi");
    BOOST_TEST(!call.stream);
    BOOST_TEST(call.request.max_tokens == 64);
    BOOST_TEST(call.request.sampling.temperature == 0.0f);
    BOOST_TEST(call.request.sampling.top_k == 5);
    BOOST_TEST(call.request.sampling.seed == UINT64_MAX);
    BOOST_TEST(call.request.stop.size() == 2u);
    BOOST_TEST_REQUIRE(call.request.sampling.logit_bias.size() == 2u);
    BOOST_TEST(call.request.sampling.logit_bias[0].token == 3);
    BOOST_TEST(std::isinf(call.request.sampling.logit_bias[1].bias));
    BOOST_TEST(call.request.ignore_eos);
}

BOOST_AUTO_TEST_CASE(defaults) {
    const GenerateCall call = parse_generate(json::parse(R"({"messages":[{"role":"user","content":"x"}]})").as_object(),
                                             context());
    BOOST_TEST(call.stream);
    BOOST_TEST(call.request.max_tokens == 100);
    BOOST_TEST(!call.request.prompt.has_value());
    BOOST_TEST(call.request.messages.size() == 1u);
    BOOST_TEST(call.request.session.empty());
}

// The message of an invalid_params error.
std::string bad_message(const std::string& params_json) {
    try {
        parse_generate(json::parse(params_json).as_object(), context());
    } catch (const ApiError& error) {
        return error.what();
    }
    return "";
}

// Numbers written with an exponent are whole numbers too: 1e12 is too large, not "fractional".
BOOST_AUTO_TEST_CASE(numbers_with_an_exponent_are_judged_by_their_value) {
    const std::string huge = bad_message(R"({"prompt":"a","max_tokens":1e12})");
    BOOST_TEST(huge.find("1000000000000 is out of range") != std::string::npos, huge);
    BOOST_TEST(bad_message(R"({"prompt":"a","max_tokens":12.5})").find("got 12.5") != std::string::npos);
    BOOST_TEST(bad_field(R"({"prompt":"a","max_tokens":1e2})") == "");
    BOOST_TEST(bad_message(R"({"prompt":"a","seed":1.5})").find("got 1.5") != std::string::npos);
}

// Types are checked here; ranges and limits by Engine::submit (tests/integration/).
BOOST_AUTO_TEST_CASE(every_mistyped_field_is_named) {
    BOOST_TEST(bad_field(R"({"prompt":"a","max_tokens":1e300})") == "max_tokens");
    BOOST_TEST(bad_field(R"({"prompt":"a","max_tokens":99999999999999999999})") == "max_tokens");
    BOOST_TEST(bad_field(R"({"prompt":"a","max_tokens":4294967296})") == "max_tokens");
    BOOST_TEST(bad_field(R"({"prompt":"a","max_tokens":"12"})") == "max_tokens");
    BOOST_TEST(bad_field(R"({"prompt":"a","max_tokens":12.5})") == "max_tokens");
    BOOST_TEST(bad_field(R"({"prompt":"a","max_tokens":true})") == "max_tokens");
    BOOST_TEST(bad_field(R"({"prompt":"a","temperature":"NaN"})") == "temperature");
    BOOST_TEST(bad_field(R"({"prompt":"a","temperature":1e999})") == "temperature");
    BOOST_TEST(bad_field(R"({"prompt":"a","top_k":4294967296})") == "top_k");
    BOOST_TEST(bad_field(R"({"prompt":"a","top_k":[1]})") == "top_k");
    BOOST_TEST(bad_field(R"({"prompt":"a","seed":-1})") == "seed");
    BOOST_TEST(bad_field(R"({"prompt":"a","seed":1.5})") == "seed");
    BOOST_TEST(bad_field(R"({"prompt":"a","logit_bias":{"x":1}})") == "logit_bias.x");
    BOOST_TEST(bad_field(R"({"prompt":"a","logit_bias":[[1,"big"]]})") == "logit_bias[0][1]");
    BOOST_TEST(bad_field(R"({"prompt":"a","logit_bias":[[1]]})") == "logit_bias[0]");
    BOOST_TEST(bad_field(R"({"prompt":"a","stop":[3]})") == "stop[0]");
    BOOST_TEST(bad_field(R"({"prompt":"a","stop":5})") == "stop");
    BOOST_TEST(bad_field(R"({"prompt":"a","session":7})") == "session");
    BOOST_TEST(bad_field(R"({"prompt":"a","stream":"yes"})") == "stream");
    BOOST_TEST(bad_field(R"({"prompt":"a","max_token":5})") == "max_token");
    BOOST_TEST(bad_field(R"({"prompt":"a","messages":[]})") == "prompt");
    BOOST_TEST(bad_field(R"({})") == "prompt");
    BOOST_TEST(bad_field(R"({"messages":[]})") == "messages");
    BOOST_TEST(bad_field(R"({"messages":[{"role":1,"content":"x"}]})") == "messages[0].role");
    BOOST_TEST(bad_field(R"({"messages":[{"role":"user"}]})") == "messages[0].content");
    BOOST_TEST(bad_field(R"({"messages":[{"role":"user","content":"x"}, 3]})") == "messages[1]");
}

BOOST_AUTO_TEST_CASE(openai_requests) {
    const OpenAiCall chat = parse_openai(
        OpenAiKind::Chat,
        json::parse(R"({"model":"gpt-4o","messages":[{"role":"developer","content":"be brief"},
                        {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
                        "max_completion_tokens":7,"stream":true,"stream_options":{"include_usage":true},
                        "n":1,"logprobs":false,"user":"ignored","session":"s"})")
            .as_object(),
        context());
    BOOST_TEST(chat.stream);
    BOOST_TEST(chat.include_usage);
    BOOST_TEST(chat.request.max_tokens == 7);
    BOOST_TEST(chat.request.session == "s");
    BOOST_TEST_REQUIRE(chat.request.messages.size() == 2u);
    BOOST_TEST(chat.request.messages[0].role == "system");
    BOOST_TEST(chat.request.messages[1].content == "ab");
    const OpenAiCall completion =
        parse_openai(OpenAiKind::Completion, json::parse(R"({"prompt":["once"],"max_tokens":3})").as_object(), context());
    BOOST_TEST(*completion.request.prompt == "once");
    BOOST_TEST(!completion.stream);
    BOOST_TEST(bad_openai_field(OpenAiKind::Completion, R"({"prompt":"a","n":9})") == "n");
    BOOST_TEST(bad_openai_field(OpenAiKind::Completion, R"({"prompt":"a","best_of":2})") == "best_of");
    BOOST_TEST(bad_openai_field(OpenAiKind::Completion, R"({"prompt":"a","echo":true})") == "echo");
    BOOST_TEST(bad_openai_field(OpenAiKind::Completion, R"({"prompt":["a","b"]})") == "prompt");
    BOOST_TEST(bad_openai_field(OpenAiKind::Completion, R"({"max_tokens":3})") == "prompt");
    BOOST_TEST(bad_openai_field(OpenAiKind::Chat, R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})") ==
               "messages[0].content[0].type");
    BOOST_TEST(bad_openai_field(OpenAiKind::Chat, R"({"messages":[{"role":"user","content":"x"}],"tools":[{}]})") ==
               "tools[0].function");
    BOOST_TEST(bad_openai_field(OpenAiKind::Chat, R"({"messages":[{"role":"user","content":"x"}],"max_tokens":"9"})") ==
               "max_tokens");
}

BOOST_AUTO_TEST_SUITE_END()

// JSON Schema to grammar: documents the schema allows are sentences of the grammar, documents
// it forbids are not, and keywords outside the subset are refused by name.
BOOST_AUTO_TEST_SUITE(json_schema)

namespace {

bool schema_accepts(const char* schema, std::string_view document) {
    const auto g = compile_grammar(schema_grammar(json::parse(schema), "json_schema"), "json_schema");
    strata::grammar::Matcher m(g);
    return m.accept_bytes(document) && m.can_end();
}

std::string schema_error(const char* schema) {
    try {
        schema_grammar(json::parse(schema), "json_schema");
    } catch (const ApiError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(objects_required_and_optional_members) {
    const char* s = R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},
                        "c":{"type":"boolean"}},"required":["b"]})";
    BOOST_TEST(schema_accepts(s, R"({"b":"x"})"));
    BOOST_TEST(schema_accepts(s, R"({"a":-3, "b":"x", "c":true})"));
    BOOST_TEST(schema_accepts(s, R"({"a":1,"b":""})"));
    BOOST_TEST(!schema_accepts(s, R"({"a":1})"));
    BOOST_TEST(!schema_accepts(s, R"({"b":"x","d":1})"));
    BOOST_TEST(!schema_accepts(s, R"({"a":1.5,"b":"x"})"));
    BOOST_TEST(!schema_accepts(s, R"({"b":"x",})"));
}

BOOST_AUTO_TEST_CASE(arrays_enums_refs_and_formats) {
    const char* s = R"({"type":"array","minItems":1,"maxItems":2,"items":{"$ref":"#/$defs/e"},
                        "$defs":{"e":{"enum":["x",null,2]}}})";
    BOOST_TEST(schema_accepts(s, R"(["x"])"));
    BOOST_TEST(schema_accepts(s, R"([null, 2])"));
    BOOST_TEST(!schema_accepts(s, R"([])"));
    BOOST_TEST(!schema_accepts(s, R"(["x","x","x"])"));
    BOOST_TEST(!schema_accepts(s, R"(["y"])"));
    BOOST_TEST(schema_accepts(R"({"type":"string","format":"date"})", R"("2024-02-29")"));
    BOOST_TEST(!schema_accepts(R"({"type":"string","format":"date"})", R"("2024-13-01")"));
    BOOST_TEST(schema_accepts(R"({"type":"string","format":"uuid"})", R"("123e4567-e89b-12d3-a456-426614174000")"));
    BOOST_TEST(schema_accepts(R"({"type":"string","minLength":2,"maxLength":3})", R"("ab")"));
    BOOST_TEST(!schema_accepts(R"({"type":"string","minLength":2,"maxLength":3})", R"("abcd")"));
    BOOST_TEST(schema_accepts(R"({"anyOf":[{"type":"null"},{"const":{"k":[1]}}]})", R"({"k":[1]})"));
    const char* tree = R"({"$ref":"#/definitions/n","definitions":{"n":{"type":"object",
        "properties":{"kids":{"type":"array","items":{"$ref":"#/definitions/n"}}},"required":["kids"]}}})";
    BOOST_TEST(schema_accepts(tree, R"({"kids":[{"kids":[]},{"kids":[{"kids":[]}]}]})"));
}

// enum and const narrow a type: the document is one of the values that are of that type.
BOOST_AUTO_TEST_CASE(enum_and_const_combine_with_type) {
    const char* weather = R"({"type":"object","properties":{"location":{"type":"string"},
        "unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"d"}},"required":["location"]})";
    BOOST_TEST(schema_accepts(weather, R"({"location":"Paris","unit":"celsius"})"));
    BOOST_TEST(schema_accepts(weather, R"({"location":"Paris"})"));
    BOOST_TEST(!schema_accepts(weather, R"({"location":"Paris","unit":"kelvin"})"));
    const char* mixed = R"({"type":["integer","null"],"enum":[1,2.5,"3",null,true]})";
    BOOST_TEST(schema_accepts(mixed, "1"));
    BOOST_TEST(schema_accepts(mixed, "null"));
    BOOST_TEST(!schema_accepts(mixed, "2.5"));
    BOOST_TEST(!schema_accepts(mixed, R"("3")"));
    BOOST_TEST(!schema_accepts(mixed, "true"));
    BOOST_TEST(schema_accepts(R"({"const":"a","type":"string","title":"t"})", R"("a")"));
    BOOST_TEST(schema_accepts(R"({"enum":["a","b"],"const":"b"})", R"("b")"));
    BOOST_TEST(!schema_accepts(R"({"enum":["a","b"],"const":"b"})", R"("a")"));
    BOOST_TEST(schema_error(R"({"type":"string","const":1})") == "json_schema: no value of 'const' is admitted by the other keywords");
}

// Schema grammars share json_object's bounded whitespace (grammar/json.h): one space, or a
// newline and up to 20 spaces or tabs, between tokens; nothing after the document.
BOOST_AUTO_TEST_CASE(whitespace_between_tokens_is_bounded) {
    const char* s = R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"]})";
    BOOST_TEST(schema_accepts(s, "{\n  \"a\": [ 1,\n" + std::string(20, ' ') + "2 ]\n}"));
    BOOST_TEST(!schema_accepts(s, "{\n" + std::string(21, ' ') + "\"a\": []}"));
    BOOST_TEST(!schema_accepts(s, "{  \"a\": []}"));
    BOOST_TEST(!schema_accepts(s, "{\"a\": []\n\n}"));
    BOOST_TEST(!schema_accepts(s, "{\"a\": [] } "));
}

BOOST_AUTO_TEST_CASE(unsupported_keywords_are_named) {
    BOOST_TEST(schema_error(R"({"type":"integer","minimum":3})") == "json_schema: unsupported keyword 'minimum'");
    BOOST_TEST(schema_error(R"({"type":"string","format":"email"})").find("unsupported format \"email\"") != std::string::npos);
    BOOST_TEST(schema_error(R"({"$ref":"http://x/y"})").find("only local references") != std::string::npos);
    BOOST_TEST(schema_error(R"({"type":"string","minLength":2,"enum":["ab"]})") == "json_schema: 'enum' combined with 'minLength' is not supported");
    BOOST_TEST(schema_error(R"({"anyOf":[{"type":"null"}],"type":"null"})") == "json_schema: 'anyOf' combined with 'type' is not supported");
    BOOST_TEST(schema_error(R"({"type":"integer","enum":["a",1.5]})") == "json_schema: no value of 'enum' is admitted by the other keywords");
    BOOST_TEST(schema_error(R"({"oneOf":[{"type":"string"},{"type":"string"}]})").find("may overlap") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tool_calls)

namespace {

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

const std::vector<Tool> kTools = {
    {"get_weather", json::parse(R"({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]})")},
    {"get_time", json::parse(R"({"type":"object","properties":{}})")}};

bool grammar_accepts(const std::string& grammar, std::string_view text) {
    strata::grammar::Matcher m(compile_grammar(grammar, "tools"));
    return m.accept_bytes(text) && m.can_end();
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_format_comes_from_the_chat_template) {
    const auto dir = strata::test::data_dir() / "chat" / "templates";
    BOOST_TEST(std::string(tool_format_name(tool_format(read_text(dir / "Qwen-Qwen2.5-7B-Instruct.jinja")))) == "hermes");
    BOOST_TEST(std::string(tool_format_name(tool_format(read_text(dir / "meta-llama-Llama-3.1-8B-Instruct.jinja")))) == "llama3");
    BOOST_TEST(std::string(tool_format_name(tool_format(read_text(dir / "meta-llama-Llama-3.2-3B-Instruct.jinja")))) == "llama3");
    BOOST_TEST(std::string(tool_format_name(tool_format(read_text(dir / "mistralai-Mistral-Nemo-Instruct-2407.jinja")))) == "mistral");
    BOOST_TEST(std::string(tool_format_name(tool_format(read_text(dir / "google-gemma-2-2b-it.jinja")))) == "json");
    BOOST_TEST(std::string(tool_format_name(tool_format(""))) == "json");
}

BOOST_AUTO_TEST_CASE(calls_are_parsed_back_in_every_format) {
    ParsedReply r = parse_tool_calls("Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
                                     "<tool_call>{\"name\":\"get_time\",\"arguments\":{}}</tool_call>",
                                     ToolFormat::Hermes, kTools);
    BOOST_TEST(r.content == "Let me look.");
    BOOST_REQUIRE(r.calls.size() == 2u);
    BOOST_TEST(r.calls[0].name == "get_weather");
    BOOST_TEST(r.calls[0].arguments == R"({"city":"Paris"})");
    BOOST_TEST(r.calls[0].id.rfind("call_", 0) == 0u);
    BOOST_TEST(r.calls[0].id != r.calls[1].id);
    BOOST_TEST(r.calls[1].name == "get_time");
    // an unclosed last call (the reply was cut) still counts; an unknown tool is content
    BOOST_TEST(parse_tool_calls("<tool_call>{\"name\":\"get_time\",\"arguments\":{}}", ToolFormat::Hermes, kTools).calls.size() == 1u);
    r = parse_tool_calls("<tool_call>{\"name\":\"rm_rf\",\"arguments\":{}}</tool_call>", ToolFormat::Hermes, kTools);
    BOOST_TEST(r.calls.empty());
    BOOST_TEST(r.content == "<tool_call>{\"name\":\"rm_rf\",\"arguments\":{}}</tool_call>");
    // Llama 3.x: "parameters", maybe after <|python_tag|>
    r = parse_tool_calls(R"(<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo", "days": 2}})", ToolFormat::Llama3, kTools);
    BOOST_REQUIRE(r.calls.size() == 1u);
    BOOST_TEST(r.calls[0].arguments == R"({"city":"Oslo","days":2})");
    BOOST_TEST(r.content.empty());
    r = parse_tool_calls(R"({"name": "get_time", "parameters": {}}; {"name": "get_weather", "parameters": {"city": "a;b"}})", ToolFormat::Llama3,
                         kTools);
    BOOST_REQUIRE(r.calls.size() == 2u);
    BOOST_TEST(r.calls[1].arguments == R"({"city":"a;b"})");
    BOOST_TEST(parse_tool_calls(R"({"name": "get_time", "parameters": {}} and more)", ToolFormat::Llama3, kTools).calls.empty());
    // parallel_tool_calls false keeps the first call
    ToolUse one{kTools, ToolFormat::Llama3, false};
    BOOST_TEST(parse_reply(one, R"({"name":"get_time","parameters":{}};{"name":"get_time","parameters":{}})").calls.size() == 1u);
    // Mistral: an array, with the model's ids kept; arguments as a JSON string are accepted
    r = parse_tool_calls(R"([TOOL_CALLS][{"name":"get_time","arguments":{},"id":"abc123xyz"},{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}])",
                         ToolFormat::Mistral, kTools);
    BOOST_REQUIRE(r.calls.size() == 2u);
    BOOST_TEST(r.calls[0].id == "abc123xyz");
    BOOST_TEST(r.calls[1].arguments == R"({"city":"Rome"})");
    // generic JSON; plain text and broken JSON stay content
    BOOST_TEST(parse_tool_calls(R"( {"name":"get_time","arguments":{}} )", ToolFormat::Json, kTools).calls.size() == 1u);
    BOOST_TEST(parse_tool_calls("It is sunny.", ToolFormat::Json, kTools).content == "It is sunny.");
    BOOST_TEST(parse_tool_calls(R"({"name":"get_time","arguments":)", ToolFormat::Json, kTools).calls.empty());
    BOOST_TEST(parse_tool_calls(R"({"name":"get_time","arguments":[1]})", ToolFormat::Json, kTools).calls.empty());
}

BOOST_AUTO_TEST_CASE(streams_hold_back_only_what_may_start_a_call) {
    BOOST_TEST(content_prefix("Sure, ", ToolFormat::Hermes) == 6u);
    BOOST_TEST(content_prefix("Sure, <tool", ToolFormat::Hermes) == 6u);
    BOOST_TEST(content_prefix("Sure, <tool_call>{", ToolFormat::Hermes) == 6u);
    BOOST_TEST(content_prefix("a < b", ToolFormat::Hermes) == 5u);
    BOOST_TEST(content_prefix("  {\"na", ToolFormat::Json) == 0u);
    BOOST_TEST(content_prefix("[", ToolFormat::Mistral) == 0u);
    BOOST_TEST(content_prefix("<|python", ToolFormat::Llama3) == 0u);
    BOOST_TEST(content_prefix("The answer", ToolFormat::Llama3) == 10u);
    BOOST_TEST(content_prefix("  ", ToolFormat::Json) == 0u);
}

BOOST_AUTO_TEST_CASE(forced_calls_follow_the_format_and_the_schema) {
    const ToolChoice required{ToolChoice::Required, ""}, named{ToolChoice::Named, "get_time"};
    std::string g = call_grammar(kTools, required, ToolFormat::Hermes);
    BOOST_TEST(grammar_accepts(g, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\n</tool_call>"));
    BOOST_TEST(grammar_accepts(g, "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{}}\n</tool_call>"));
    BOOST_TEST(!grammar_accepts(g, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{}}\n</tool_call>"));  // city is required
    BOOST_TEST(!grammar_accepts(g, "{\"name\":\"get_time\",\"arguments\":{}}"));
    g = call_grammar(kTools, named, ToolFormat::Llama3);
    BOOST_TEST(grammar_accepts(g, R"({"name":"get_time","parameters":{}})"));
    BOOST_TEST(!grammar_accepts(g, R"({"name":"get_weather","parameters":{"city":"x"}})"));
    g = call_grammar(kTools, required, ToolFormat::Mistral);
    BOOST_TEST(grammar_accepts(g, R"([{"name":"get_time","arguments":{}},{"name":"get_weather","arguments":{"city":"x","days":3}}])"));
    BOOST_TEST(!grammar_accepts(g, "[]"));
    g = call_grammar(kTools, required, ToolFormat::Mistral, /*parallel=*/false);
    BOOST_TEST(grammar_accepts(g, R"([{"name":"get_time","arguments":{}}])"));
    BOOST_TEST(!grammar_accepts(g, R"([{"name":"get_time","arguments":{}},{"name":"get_time","arguments":{}}])"));
}

BOOST_AUTO_TEST_CASE(bad_tools_name_the_field) {
    auto error_field = [](const char* body) {
        try {
            const json::object o = json::parse(body).as_object();
            const Fields f(o);
            read_tool_choice(f, read_tools(f));
        } catch (const ApiError& e) {
            return e.field();
        }
        return std::string();
    };
    BOOST_TEST(error_field(R"({"tools":{}})") == "tools");
    BOOST_TEST(error_field(R"({"tools":[{"type":"code"}]})") == "tools[0].type");
    BOOST_TEST(error_field(R"({"tools":[{"type":"function"}]})") == "tools[0].function");
    BOOST_TEST(error_field(R"({"tools":[{"function":{"description":"x"}}]})") == "tools[0].function.name");
    BOOST_TEST(error_field(R"({"tools":[{"function":{"name":"a"}},{"function":{"name":"a"}}]})") == "tools[1].function.name");
    BOOST_TEST(error_field(R"({"tools":[{"function":{"name":"a","parameters":3}}]})") == "tools[0].function.parameters");
    BOOST_TEST(error_field(R"({"tools":[{"function":{"name":"a"}}],"tool_choice":"always"})") == "tool_choice");
    BOOST_TEST(error_field(R"({"tools":[{"function":{"name":"a"}}],"tool_choice":{"type":"function","function":{"name":"b"}}})") ==
               "tool_choice.function.name");
    BOOST_TEST(error_field(R"({"tool_choice":"required"})") == "tool_choice");
    BOOST_TEST(error_field(R"({"tools":[{"function":{"name":"a"}}],"tool_choice":"required"})").empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(latency)

using strata::daemon::Histogram;
using strata::daemon::LatencyClock;

BOOST_AUTO_TEST_CASE(totals_count_each_observation_in_its_bucket) {
    Histogram h;
    const auto now = LatencyClock::now();
    for (const double seconds : {0.0004, 0.0005, 0.02, 0.02, 7.0, 1000.0})
        h.observe(seconds, now);
    const Histogram::Totals t = h.totals();
    BOOST_TEST(t.count == 6u);
    BOOST_TEST(t.sum == 1007.0409, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(t.buckets[2] == 2u);  // (0.00025, 0.0005]: a value on a bound belongs below it
    BOOST_TEST(t.buckets[7] == 2u);  // (0.01, 0.025]
    BOOST_TEST(t.buckets[21] == 1u); // (5, 7.5]
    BOOST_TEST(t.buckets[Histogram::kBuckets - 1] == 1u);  // +Inf
}

BOOST_AUTO_TEST_CASE(percentiles_interpolate_within_a_bucket_and_stay_within_what_was_seen) {
    Histogram h;
    const auto now = LatencyClock::now();
    BOOST_TEST(!h.recent(now).p50.has_value());
    // 100 values spread evenly inside (0.1, 0.15]: interpolation as Prometheus's histogram_quantile.
    for (int i = 0; i < 100; ++i)
        h.observe(0.1 + 0.05 * (i + 0.5) / 100, now);
    const Histogram::Recent r = h.recent(now);
    BOOST_TEST(r.count == 100u);
    BOOST_TEST(*r.p50 == 0.125, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*r.p90 == 0.145, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*r.p99 == 0.1495, boost::test_tools::tolerance(1e-9));
    Histogram same;
    for (int i = 0; i < 10; ++i)
        same.observe(0.021, now);
    BOOST_TEST(*same.recent(now).p50 == 0.021);  // clamped to the only value seen
    BOOST_TEST(*same.recent(now).p99 == 0.021);
    Histogram tail;  // 99 fast, 1 slow: p50 fast, p99 still below the slow one
    for (int i = 0; i < 99; ++i)
        tail.observe(0.004, now);
    tail.observe(9.0, now);
    BOOST_TEST(*tail.recent(now).p50 <= 0.005);
    BOOST_TEST(*tail.recent(now).p99 <= 0.005);
    BOOST_TEST(tail.recent(now).count == 100u);
}

BOOST_AUTO_TEST_CASE(the_recent_window_forgets_what_is_older_than_five_minutes) {
    Histogram h;
    const auto start = LatencyClock::now();
    h.observe(2.0, start);
    h.observe(0.2, start + std::chrono::seconds(200));
    BOOST_TEST(h.recent(start + std::chrono::seconds(200)).count == 2u);
    const Histogram::Recent later = h.recent(start + Histogram::kWindow + std::chrono::seconds(31));
    BOOST_TEST(later.count == 1u);
    BOOST_TEST(*later.p50 == 0.2);
    BOOST_TEST(h.recent(start + 3 * Histogram::kWindow).count == 0u);
    h.observe(0.3, start + 3 * Histogram::kWindow);  // a slot reused after its epoch passed starts empty
    BOOST_TEST(h.recent(start + 3 * Histogram::kWindow).count == 1u);
    BOOST_TEST(h.totals().count == 3u);  // the totals keep everything
}

BOOST_AUTO_TEST_CASE(prometheus_text_has_cumulative_buckets_sum_and_count_per_endpoint) {
    strata::daemon::Latency latency;
    latency.of(strata::daemon::Endpoint::ChatCompletions, strata::daemon::Measure::QueueWait).observe(0.02);
    latency.of(strata::daemon::Endpoint::ChatCompletions, strata::daemon::Measure::QueueWait).observe(0.7);
    const std::string text = strata::daemon::prometheus_text({}, latency);
    auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
    BOOST_TEST(has("# TYPE strata_queue_wait_seconds histogram"));
    BOOST_TEST(has("strata_queue_wait_seconds_bucket{endpoint=\"chat_completions\",le=\"0.01\"} 0"));
    BOOST_TEST(has("strata_queue_wait_seconds_bucket{endpoint=\"chat_completions\",le=\"0.025\"} 1"));
    BOOST_TEST(has("strata_queue_wait_seconds_bucket{endpoint=\"chat_completions\",le=\"0.75\"} 2"));
    BOOST_TEST(has("strata_queue_wait_seconds_bucket{endpoint=\"chat_completions\",le=\"+Inf\"} 2"));
    BOOST_TEST(has("strata_queue_wait_seconds_sum{endpoint=\"chat_completions\"} 0.72"));
    BOOST_TEST(has("strata_queue_wait_seconds_count{endpoint=\"chat_completions\"} 2"));
    BOOST_TEST(has("strata_time_to_first_token_seconds_count{endpoint=\"generate\"} 0"));
    BOOST_TEST(has("strata_inter_token_latency_seconds_count{endpoint=\"completions\"} 0"));
    BOOST_TEST(has("strata_request_duration_seconds_bucket{endpoint=\"completions\",le=\"0.0001\"} 0"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(api_keys)

// A keys file with `mode`, removed afterwards.
struct KeysFile : ConfigFile {
    KeysFile(const std::string& text, std::filesystem::perms mode) : ConfigFile(text) {
        std::filesystem::permissions(path, mode);
    }
};

std::string keys_error(const std::string& text, std::filesystem::perms mode = std::filesystem::perms::owner_read) {
    KeysFile file(text, mode);
    try {
        ApiKeys::load(file.path, geteuid());
    } catch (const ApiKeysError& error) {
        return error.what();
    }
    return "";
}

BOOST_AUTO_TEST_CASE(keys_name_their_users) {
    KeysFile file("# team keys\n\nsk-0123456789abcdef alice\n  sk-fedcba9876543210\tbob  \nsk-aaaaaaaaaaaaaaaa alice\r\n",
                  std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    const ApiKeys keys = ApiKeys::load(file.path, geteuid());
    BOOST_TEST(keys.size() == 3u);
    BOOST_TEST(keys.find("sk-0123456789abcdef")->name == "alice");
    BOOST_TEST(keys.find("sk-fedcba9876543210")->name == "bob");
    BOOST_TEST(keys.find("sk-aaaaaaaaaaaaaaaa")->uid == keys.find("sk-0123456789abcdef")->uid);  // one user, two keys
    BOOST_TEST(!keys.find("sk-0123456789abcdeF"));
    BOOST_TEST(!keys.find("sk-0123456789abcde"));
    BOOST_TEST(!keys.find(""));
    const uint32_t alice = api_user_uid("alice");
    BOOST_TEST(alice >= 0x80000000u);
    BOOST_TEST(alice != api_user_uid("bob"));
    BOOST_TEST(alice == api_user_uid("alice"));  // the same on every start
    BOOST_TEST(keys.name_of(alice) == "alice");
    BOOST_TEST(keys.name_of(1000) == "");
}

BOOST_AUTO_TEST_CASE(a_bad_file_is_refused_naming_what_is_wrong) {
    using std::filesystem::perms;
    BOOST_TEST(contains(keys_error("sk-0123456789abcdef alice\n", perms::owner_read | perms::group_read),
                        "is open to group or others (mode 0440)"));
    BOOST_TEST(contains(keys_error("sk-0123456789abcdef alice\n", perms::owner_read | perms::others_read), "chmod 600"));
    BOOST_TEST(contains(keys_error("sk-0123456789abcdef alice\n", perms::owner_read | perms::group_write), "mode 0420"));
    BOOST_TEST(contains(keys_error("sk-0123456789abcdef\n"), ":1: expected KEY NAME, got 1 word(s)"));
    BOOST_TEST(contains(keys_error("# c\nshort alice\n"), ":2: a key must be 16 to 256 printable ASCII characters"));
    BOOST_TEST(contains(keys_error("sk-0123456789abcdef al/ice\n"), "the name 'al/ice' must be"));
    BOOST_TEST(contains(keys_error("sk-0123456789abcdef a\nsk-0123456789abcdef b\n"), ":2: this key is listed before"));
    BOOST_TEST(contains(keys_error("# nothing\n"), "has no keys"));
    BOOST_TEST(contains(keys_error("x", perms::owner_read), "expected KEY NAME"));
    try {
        ApiKeys::load("/nonexistent/keys", geteuid());
        BOOST_FAIL("a missing file was accepted");
    } catch (const ApiKeysError& error) {
        BOOST_TEST(contains(error.what(), "server.api_keys_file /nonexistent/keys: cannot open it"));
    }
    KeysFile owned("sk-0123456789abcdef alice\n", perms::owner_read);
    if (geteuid() == 0) {  // a file of another user: root can make one
        BOOST_TEST_REQUIRE(chown(owned.path.c_str(), 4242, 4242) == 0);
        try {
            ApiKeys::load(owned.path, 0);
            BOOST_FAIL("a file of uid 4242 was accepted");
        } catch (const ApiKeysError& error) {
            BOOST_TEST(contains(error.what(), "belongs to uid 4242; it must belong to root or to the user stratad runs as"));
        }
    } else {
        BOOST_CHECK_THROW(ApiKeys::load(owned.path, geteuid() + 1), ApiKeysError);  // ours, but not root's nor the daemon's
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(responses)

namespace {

// A stored response's items: a user turn and the function call it answered with.
json::array stored_items() {
    return json::parse(R"([{"type":"message","role":"user","content":"What time is it?"},
        {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_time","arguments":"{}","status":"completed"}])")
        .as_array();
}

ResponsesCall parse(const std::string& body_json) {
    return parse_responses(json::parse(body_json).as_object(), context(), ToolFormat::Json, "llama",
                           [](const std::string& id) -> json::array {
                               if (id != "resp_1")
                                   throw invalid_params("previous_response_id", "no such response");
                               return stored_items();
                           });
}

std::string bad_responses_field(const std::string& body_json) {
    try {
        parse(body_json);
    } catch (const ApiError& error) {
        BOOST_TEST((error.kind() == ErrorKind::InvalidParams));
        return error.field();
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(items_become_turns_after_the_instructions) {
    const ResponsesCall call = parse(R"({"instructions":"Be brief.","previous_response_id":"resp_1","input":[
        {"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"noon"}]},
        {"role":"developer","content":"Answer in English."},
        {"role":"user","content":[{"type":"input_text","text":"Thanks"},{"type":"input_text","text":"!"}]}]})");
    const auto& m = call.request.messages;
    BOOST_TEST_REQUIRE(m.size() == 6u);
    BOOST_TEST(m[0].role == "system");
    BOOST_TEST(m[0].content == "Be brief.");
    BOOST_TEST(m[1].role == "user");
    BOOST_TEST(m[2].role == "assistant");  // the function_call made an assistant turn
    BOOST_TEST(!m[2].tool_calls.is_none());
    BOOST_TEST(m[3].role == "tool");
    BOOST_TEST(m[3].tool_call_id == "call_1");
    BOOST_TEST(m[3].content == "noon");
    BOOST_TEST(m[4].role == "system");  // developer
    BOOST_TEST(m[5].content == "Thanks!");
    // Stored with the response: the stored items, then this input.
    BOOST_TEST(call.reply.context.size() == 5u);
    BOOST_TEST(call.reply.store);
    BOOST_TEST(call.request.max_tokens == context().limits.max_tokens);  // no max_output_tokens: the limit
}

BOOST_AUTO_TEST_CASE(a_string_input_is_one_user_turn_and_calls_join_the_assistant_turn) {
    BOOST_TEST(parse(R"({"input":"Hi","store":false,"max_output_tokens":7})").request.messages.size() == 1u);
    BOOST_TEST(!parse(R"({"input":"Hi","store":false})").reply.store);
    BOOST_TEST(parse(R"({"input":"Hi","max_output_tokens":7})").request.max_tokens == 7);
    const ResponsesCall call = parse(R"({"input":[{"role":"user","content":"Hi"},
        {"role":"assistant","content":[{"type":"output_text","text":"Let me look."}]},
        {"type":"function_call","call_id":"a","name":"f","arguments":"{}"},
        {"type":"function_call","call_id":"b","name":"f","arguments":"{\"x\":1}"}]})");
    BOOST_TEST_REQUIRE(call.request.messages.size() == 2u);
    BOOST_TEST(call.request.messages[1].content == "Let me look.");
    BOOST_TEST(!call.request.messages[1].tool_calls.is_none());
}

BOOST_AUTO_TEST_CASE(refusals_name_the_field) {
    BOOST_TEST(bad_responses_field(R"({"input":"Hi"})") == "");
    BOOST_TEST(bad_responses_field(R"({})") == "input");
    BOOST_TEST(bad_responses_field(R"({"input":[]})") == "input");
    BOOST_TEST(bad_responses_field(R"({"input":"Hi","tools":[{"type":"web_search"}]})") == "tools[0].type");
    BOOST_TEST(bad_responses_field(R"({"input":"Hi","tools":[{"type":"namespace","name":"x","tools":[]}]})") == "tools[0].type");
    BOOST_TEST(bad_responses_field(R"({"input":"Hi","background":true})") == "background");
    BOOST_TEST(bad_responses_field(R"({"input":"Hi","previous_response_id":"resp_2"})") == "previous_response_id");
    BOOST_TEST(bad_responses_field(R"({"input":"Hi","previous_response_id":"resp_1","session":"s"})") == "session");
    BOOST_TEST(bad_responses_field(R"({"input":[{"type":"function_call","call_id":"a","name":"f","arguments":"[1]"}]})") ==
               "input[0].arguments");
    BOOST_TEST(bad_responses_field(R"({"input":"Hi","text":{"format":{"type":"json_schema"}}})") == "text.format.schema");
    BOOST_TEST(bad_responses_field(R"({"input":"Hi","max_output_tokens":0})") == "max_output_tokens");
}

// The events' types in order, each checked to carry the next sequence number.
std::vector<std::string> event_types(const std::string& stream, uint64_t& sequence) {
    std::vector<std::string> types;
    for (size_t at = stream.find("data: "); at != std::string::npos; at = stream.find("data: ", at + 1)) {
        const json::object data = json::parse(stream.substr(at + 6, stream.find('\n', at) - at - 6)).as_object();
        BOOST_TEST(data.at("sequence_number").as_int64() == static_cast<int64_t>(sequence++));
        types.emplace_back(data.at("type").as_string());
    }
    return types;
}

BOOST_AUTO_TEST_CASE(a_stream_that_fails_ends_with_response_failed) {
    ResponsesStream stream(parse(R"({"input":"Hi"})").reply);
    uint64_t sequence = 0;
    BOOST_TEST(event_types(stream.start(), sequence) == (std::vector<std::string>{"response.created", "response.in_progress"}));
    BOOST_TEST(event_types(stream.text("Once"), sequence) ==
               (std::vector<std::string>{"response.output_item.added", "response.content_part.added", "response.output_text.delta"}));
    const std::string failed = stream.error(ApiError(ErrorKind::ModelError, "the model failed"));
    BOOST_TEST(event_types(failed, sequence) == (std::vector<std::string>{"response.failed"}));
    BOOST_TEST(contains(failed, R"("status":"failed")"));
    BOOST_TEST(contains(failed, R"("error":{"code":"model_error","message":"the model failed"})"));
}

BOOST_AUTO_TEST_SUITE_END()
