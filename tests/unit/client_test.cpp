// tests/unit/client_test.cpp — the pieces of the strata CLI that need no daemon: command-line
// parsing, prompt assembly and generate params, socket lookup and the no-daemon message,
// renderings, and the JSON-RPC client against a scripted peer on a real Unix socket
// (interleaved notifications, errors, a peer that hangs up or sends garbage).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "options.h"
#include "prompt.h"
#include "render.h"
#include "rpc.h"
#include "socket_lookup.h"
#include "test_util.h"

using namespace strata::client;
namespace json = boost::json;

namespace strata::client {
std::ostream& operator<<(std::ostream& out, Command c) { return out << "command " << static_cast<int>(c); }
}  // namespace strata::client

namespace {

Options parse(std::initializer_list<const char*> args) {
    return parse_options(std::vector<std::string>(args.begin(), args.end()));
}

bool rejects(std::initializer_list<const char*> args) {
    try {
        parse(args);
    } catch (const UsageError&) {
        return true;
    }
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(options)

BOOST_AUTO_TEST_CASE(prompt_words_and_generation_options) {
    Options o = parse({"-s", "review", "--temperature=0.5", "-n64", "--stop", "END", "Write", "--stop=###", "a message",
                       "--seed", "18446744073709551615", "--top-k", "40", "--top-p", "0.9", "--min-p", "0.05",
                       "--repeat-penalty", "1.1", "--raw", "--system", "be brief", "--json", "-v"});
    BOOST_TEST(o.command == Command::Generate);
    BOOST_TEST(o.words == (std::vector<std::string>{"Write", "a message"}), boost::test_tools::per_element());
    BOOST_TEST(*o.session == "review");
    BOOST_TEST(*o.sampling.temperature == 0.5);
    BOOST_TEST(*o.sampling.max_tokens == 64);
    BOOST_TEST(o.sampling.stop == (std::vector<std::string>{"END", "###"}), boost::test_tools::per_element());
    BOOST_TEST(*o.sampling.seed == 18446744073709551615ull);
    BOOST_TEST(*o.sampling.top_k == 40);
    BOOST_TEST(*o.sampling.top_p == 0.9);
    BOOST_TEST(*o.sampling.min_p == 0.05);
    BOOST_TEST(*o.sampling.repeat_penalty == 1.1);
    BOOST_TEST(*o.system == "be brief");
    BOOST_TEST((o.raw && o.json && o.verbose));
}

BOOST_AUTO_TEST_CASE(command_words) {
    BOOST_TEST(parse({"status"}).command == Command::Status);
    BOOST_TEST(parse({"model", "--socket", "/x"}).command == Command::Model);
    Options chat = parse({"chat", "-s", "notes", "--temperature", "0"});
    BOOST_TEST(chat.command == Command::Chat);
    BOOST_TEST(*chat.session == "notes");
    BOOST_TEST(parse({"sessions"}).command == Command::SessionsList);
    BOOST_TEST(parse({"sessions", "list"}).command == Command::SessionsList);
    Options show = parse({"sessions", "show", "notes"});
    BOOST_TEST(show.command == Command::SessionsShow);
    BOOST_TEST(show.target == "notes");
    BOOST_TEST(parse({"sessions", "rm", "--", "-odd"}).target == "-odd");
    BOOST_TEST(parse({"sessions", "reset", "x"}).command == Command::SessionsReset);
    BOOST_TEST(parse({"sessions", "rm", "x"}).command == Command::SessionsRemove);
}

BOOST_AUTO_TEST_CASE(double_dash_makes_everything_prompt_words) {
    Options o = parse({"--", "status", "-n", "3"});
    BOOST_TEST(o.command == Command::Generate);
    BOOST_TEST(o.words == (std::vector<std::string>{"status", "-n", "3"}), boost::test_tools::per_element());
    BOOST_TEST(parse({"chat about", "cats"}).command == Command::Generate);  // only the exact word is a command
    BOOST_TEST(parse({"-"}).words.front() == "-");
}

BOOST_AUTO_TEST_CASE(help_and_version) {
    BOOST_TEST(parse({"-h"}).command == Command::Help);
    BOOST_TEST(parse({"status", "--help"}).command == Command::Help);
    BOOST_TEST(parse({"--version"}).command == Command::Version);
    BOOST_TEST(std::string(usage_text()).find("--repeat-penalty") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(usage_errors) {
    BOOST_TEST(rejects({"--bogus"}));
    BOOST_TEST(rejects({"-x"}));
    BOOST_TEST(rejects({"-vx"}));             // flags do not bundle
    BOOST_TEST(rejects({"--session"}));       // missing value
    BOOST_TEST(rejects({"--json=yes"}));      // flag with a value
    BOOST_TEST(rejects({"--temperature", "warm"}));
    BOOST_TEST(rejects({"--temperature", "nan"}));
    BOOST_TEST(rejects({"--top-k", "4.5"}));
    BOOST_TEST(rejects({"-n", ""}));
    BOOST_TEST(rejects({"--seed", "-1"}));
    BOOST_TEST(rejects({"status", "now"}));
    BOOST_TEST(rejects({"chat", "hello"}));
    BOOST_TEST(rejects({"sessions", "show"}));
    BOOST_TEST(rejects({"sessions", "show", "a", "b"}));
    BOOST_TEST(rejects({"sessions", "list", "a"}));
    BOOST_TEST(rejects({"sessions", "drop", "a"}));
    BOOST_TEST(rejects({"status", "--temperature", "1"}));
    BOOST_TEST(rejects({"sessions", "--raw"}));
    BOOST_TEST(rejects({"status", "-s", "x"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(prompt)

// Input that is not UTF-8: an error naming where, the offset and the byte; or converted.
BOOST_AUTO_TEST_CASE(input_encodings) {
    const std::string latin1 = "caf\xe9 au lait";
    try {
        as_text(latin1, Encoding::Utf8, "standard input");
        BOOST_ERROR("no error for Latin-1 input");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()).find("standard input is not valid UTF-8: byte 0xE9 at offset 3") !=
                   std::string::npos, e.what());
        BOOST_TEST(std::string(e.what()).find("--encoding latin1") != std::string::npos);
    }
    BOOST_TEST(as_text(latin1, Encoding::Latin1, "x") == "caf\xc3\xa9 au lait");
    BOOST_TEST(as_text(latin1, Encoding::Replace, "x") == "caf\xef\xbf\xbd au lait");
    BOOST_TEST(as_text("caf\xc3\xa9", Encoding::Utf8, "x") == "caf\xc3\xa9");
    BOOST_TEST((parse_options({"--encoding", "latin1", "x"}).encoding == Encoding::Latin1));
    BOOST_CHECK_THROW(parse_options({"--encoding", "koi8", "x"}), UsageError);
}

BOOST_AUTO_TEST_CASE(assembly) {
    BOOST_TEST(assemble_prompt({"Write", "a commit message"}, std::nullopt) == "Write a commit message");
    BOOST_TEST(assemble_prompt({}, std::string("diff --git a b\n+x\n\n")) == "diff --git a b\n+x");
    BOOST_TEST(assemble_prompt({"Review:"}, std::string("line 1\r\n")) == "Review:\n\nline 1");
    BOOST_TEST(assemble_prompt({"only args"}, std::string("\n")) == "only args");
    BOOST_CHECK_THROW(assemble_prompt({}, std::string("\n\n")), UsageError);
    BOOST_CHECK_THROW(assemble_prompt({}, std::nullopt), UsageError);
}

BOOST_AUTO_TEST_CASE(chat_params_carry_messages_and_sampling) {
    Options o = parse({"-s", "notes", "--system", "Be brief.", "-n", "8", "--temperature", "0", "--stop", "\n",
                       "--seed", "7", "x"});
    json::object p = generate_params(o, "Hello", true, true);
    BOOST_TEST(json::serialize(p) ==
               R"({"session":"notes","messages":[{"role":"system","content":"Be brief."},)"
               R"({"role":"user","content":"Hello"}],"stream":true,"max_tokens":8,"temperature":0E0,)"
               R"("seed":7,"stop":["\n"]})");
    json::object later = generate_params(o, "Again", true, false);
    BOOST_TEST(later.at("messages").as_array().size() == 1u);
    BOOST_TEST(!later.contains("prompt"));
}

BOOST_AUTO_TEST_CASE(raw_params_carry_the_prompt) {
    Options o = parse({"--system", "Context.", "--top-k", "5", "--top-p", "0.5", "--min-p", "0.1",
                       "--repeat-penalty", "1.2", "x"});
    json::object p = generate_params(o, "Once upon", false, true);
    BOOST_TEST(p.at("prompt").as_string() == "Context.\n\nOnce upon");
    BOOST_TEST(!p.contains("messages"));
    BOOST_TEST(!p.contains("session"));
    BOOST_TEST(p.at("top_k").as_int64() == 5);
    BOOST_TEST(p.at("top_p").as_double() == 0.5);
    BOOST_TEST(p.at("min_p").as_double() == 0.1);
    BOOST_TEST(p.at("repeat_penalty").as_double() == 1.2);
    BOOST_TEST(!p.contains("max_tokens"));
    BOOST_TEST(generate_params(o, "Once upon", false, false).at("prompt").as_string() == "Once upon");
}

BOOST_AUTO_TEST_CASE(timeout_is_a_positive_number_of_seconds_sent_with_each_reply) {
    Options o = parse({"--timeout", "2.5", "x"});
    BOOST_TEST(generate_params(o, "Once", false, true).at("timeout").as_double() == 2.5);
    BOOST_TEST(!generate_params(parse({"x"}), "Once", false, true).contains("timeout"));
    for (const char* bad : {"0", "-1", "soon", "inf"})
        BOOST_CHECK_THROW(parse_options({"--timeout", bad, "x"}), UsageError);
    BOOST_CHECK_THROW(parse_options({"--timeout", "5", "status"}), UsageError);
}

BOOST_AUTO_TEST_CASE(chat_or_raw) {
    BOOST_TEST(use_chat(parse({"x"}), "llama3"));
    BOOST_TEST(!use_chat(parse({"x"}), ""));
    BOOST_TEST(!use_chat(parse({"--raw", "x"}), "llama3"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(socket_lookup)

BOOST_AUTO_TEST_CASE(order) {
    std::set<std::string> present;
    auto exists = [&](const std::string& p) { return present.count(p) != 0; };
    const SocketEnvironment all{"/env.sock", "/run/user/7"};

    auto c = socket_candidates(std::string("/flag.sock"), all, exists);
    BOOST_TEST(c.size() == 1u);
    BOOST_TEST(c[0].path == "/flag.sock");
    c = socket_candidates(std::nullopt, all, exists);
    BOOST_TEST(c.size() == 1u);
    BOOST_TEST(c[0].path == "/env.sock");

    c = socket_candidates(std::nullopt, {std::nullopt, "/run/user/7"}, exists);
    BOOST_TEST(c.size() == 1u);  // the user socket does not exist
    BOOST_TEST(c[0].path == kSystemSocket);
    present.insert("/run/user/7/strata.sock");
    c = socket_candidates(std::nullopt, {std::nullopt, "/run/user/7"}, exists);
    BOOST_TEST(c.size() == 2u);
    BOOST_TEST(c[0].path == "/run/user/7/strata.sock");
    BOOST_TEST(c[1].path == kSystemSocket);
}

BOOST_AUTO_TEST_CASE(environment_ignores_empty_values) {
    ::setenv("STRATA_SOCKET", "", 1);
    ::setenv("XDG_RUNTIME_DIR", "/run/user/5", 1);
    SocketEnvironment env = socket_environment();
    BOOST_TEST(!env.strata_socket);
    BOOST_TEST(*env.xdg_runtime_dir == "/run/user/5");
    ::setenv("STRATA_SOCKET", "/s", 1);
    BOOST_TEST(*socket_environment().strata_socket == "/s");
    ::unsetenv("STRATA_SOCKET");
}

BOOST_AUTO_TEST_CASE(no_daemon_message_names_every_path) {
    std::string m = no_daemon_message({{{"/run/user/7/strata.sock", "$XDG_RUNTIME_DIR"}, ECONNREFUSED},
                                       {{kSystemSocket, "system socket"}, ENOENT}});
    BOOST_TEST(m.find("/run/user/7/strata.sock ($XDG_RUNTIME_DIR): Connection refused") != std::string::npos);
    BOOST_TEST(m.find("/run/strata/strata.sock (system socket): No such file or directory") != std::string::npos);
    BOOST_TEST(m.find("systemctl start stratad.socket") != std::string::npos);
    BOOST_TEST(m.find("'strata' group") == std::string::npos);
    const std::string denied = no_daemon_message({{{kSystemSocket, "system socket"}, EACCES}});
    BOOST_TEST(denied.find("'strata' group") != std::string::npos);
    BOOST_TEST(denied.find("systemctl start") == std::string::npos);  // the daemon is there
    const std::string mixed = no_daemon_message({{{"/run/user/7/strata.sock", "$XDG_RUNTIME_DIR"}, ECONNREFUSED},
                                                 {{kSystemSocket, "system socket"}, EACCES}});
    BOOST_TEST(mixed.find("log in again).\nStart the system service") != std::string::npos);
    // --socket pointed at the wrong place, but a daemon answers at a usual one.
    const std::string wrong = no_daemon_message({{{"/tmp/typo.sock", "--socket"}, ENOENT}},
                                                {{"/run/user/7/strata.sock", "$XDG_RUNTIME_DIR"}});
    BOOST_TEST(wrong.find("/tmp/typo.sock (--socket): No such file") != std::string::npos, wrong);
    BOOST_TEST(wrong.find("A daemon listens at /run/user/7/strata.sock ($XDG_RUNTIME_DIR): use --socket "
                          "/run/user/7/strata.sock") != std::string::npos, wrong);
    BOOST_TEST(wrong.find("systemctl start") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rendering)

BOOST_AUTO_TEST_CASE(speed_line) {
    json::object r = json::parse(R"({"usage":{"prompt_tokens":12,"completion_tokens":64,"cached_tokens":3},
        "timings":{"prompt_ms":3.2,"generate_ms":310,"prompt_tps":625,"generate_tps":202.5,
        "speculative_guessed":40,"speculative_accepted":30}})").as_object();
    BOOST_TEST(render_speed(r) == "prompt: 12 tokens (3 cached), 3.2 ms, 625.0 tokens/s; generation: 64 tokens, 310.0 ms, "
                                  "202.5 tokens/s; guesses accepted: 30 of 40\n");
}

BOOST_AUTO_TEST_CASE(fields) {
    json::object s = json::parse(R"({"model":"m","rss_bytes":3145728,"plan":{"mode":"streamed","ok":true},
        "types":{"F32":48,"Q4_K":3},"tps":12.345,"ids":[1,2]})").as_object();
    BOOST_TEST(render_fields(s) ==
               "model:     m\nrss_bytes: 3.0 MiB (3145728)\nplan:\n  mode: streamed\n  ok:   yes\n"
               "types:\n  F32:  48\n  Q4_K: 3\ntps:       12.35\nids:       1, 2\n");
}

BOOST_AUTO_TEST_CASE(session_table_shows_owner_only_for_mixed_owners) {
    const uint32_t me = static_cast<uint32_t>(::getuid());
    json::array mine = json::parse(R"([{"name":"a","uid":)" + std::to_string(me) +
                                   R"(,"tokens":10,"messages":2,"cached":true,"busy":false,"last_used":0}])")
                           .as_array();
    std::string t = render_session_table(mine, me);
    BOOST_TEST(t.find("OWNER") == std::string::npos);
    BOOST_TEST(t.find("a     10      2         yes     no    -") != std::string::npos);
    json::array mixed = mine;
    mixed.push_back(json::parse(R"({"name":"b","uid":4242424,"tokens":1})"));
    BOOST_TEST(render_session_table(mixed, me).find("4242424") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(session_history) {
    json::object info = json::parse(R"({"name":"n","tokens":5,"conversation":[{"role":"user","content":"hi"},
        {"role":"assistant","content":"hello"}],"text":""})").as_object();
    std::string r = render_session(info);
    BOOST_TEST(r.find("name:   n\n") != std::string::npos);
    BOOST_TEST(r.find("\n--- user\nhi\n\n--- assistant\nhello\n") != std::string::npos);
    BOOST_TEST(render_session(json::parse(R"({"name":"r","text":"Once upon"})").as_object()).find("--- text\nOnce upon") !=
               std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// The JSON-RPC client against a peer that answers each request with canned lines.
namespace {

class ScriptedPeer {
public:
    // `reply` gets each request line and returns the lines to send ("" = hang up).
    explicit ScriptedPeer(std::function<std::vector<std::string>(const json::object&)> reply)
        : path_(std::filesystem::temp_directory_path() / ("strata-client-test-" + std::to_string(::getpid()) + ".sock")) {
        std::filesystem::remove(path_);
        listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
        BOOST_REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        BOOST_REQUIRE(::listen(listener_, 1) == 0);
        thread_ = std::thread([this, reply] { serve(reply); });
    }
    ~ScriptedPeer() {
        thread_.join();
        ::close(listener_);
        std::filesystem::remove(path_);
    }
    std::vector<SocketCandidate> candidates() const { return {{path_.string(), "test"}}; }
    std::vector<json::object> requests;  // as received (read after the client is done)

private:
    void serve(const std::function<std::vector<std::string>(const json::object&)>& reply) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        LineReader in(fd);
        std::string line;
        while (in.next(line) == LineReader::Got::Line) {
            requests.push_back(json::parse(line).as_object());
            bool hang_up = false;
            for (const std::string& out : reply(requests.back())) {
                if (out.empty()) hang_up = true;
                else write_all(fd, out + "\n");
            }
            if (hang_up) break;
        }
        ::close(fd);
    }

    std::filesystem::path path_;
    int listener_ = -1;
    std::thread thread_;
};

std::string token(int id, const char* text) {
    return R"({"jsonrpc":"2.0","method":"token","params":{"id":)" + std::to_string(id) + R"(,"text":")" + text + "\"}}";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rpc)

BOOST_AUTO_TEST_CASE(generate_streams_only_its_own_tokens) {
    ScriptedPeer peer([](const json::object&) -> std::vector<std::string> {
        return {token(1, "Hi"), token(99, "other"), R"({"jsonrpc":"2.0","id":99,"result":{}})", token(1, " there"),
                R"({"jsonrpc":"2.0","id":1,"result":{"text":"Hi there","finish_reason":"stop"}})"};
    });
    std::string text;
    {
        RpcClient client = RpcClient::connect(peer.candidates());
        auto outcome = client.generate({{"prompt", "x"}}, [&](std::string_view piece) { text += piece; });
        BOOST_TEST(!outcome.cancelled);
        BOOST_TEST(outcome.result.at("finish_reason").as_string() == "stop");
    }
    BOOST_TEST(text == "Hi there");
    BOOST_TEST(peer.requests.at(0).at("method").as_string() == "generate");
    BOOST_TEST(peer.requests.at(0).at("jsonrpc").as_string() == "2.0");
}

BOOST_AUTO_TEST_CASE(errors_name_the_field) {
    ScriptedPeer peer([](const json::object& req) -> std::vector<std::string> {
        const auto id = std::to_string(req.at("id").as_int64());
        return {R"({"jsonrpc":"2.0","id":)" + id +
                R"(,"error":{"code":-32602,"message":"must be at least 1","data":{"type":"invalid_params","field":"max_tokens"}}})"};
    });
    RpcClient client = RpcClient::connect(peer.candidates());
    try {
        client.call("status");
        BOOST_FAIL("no DaemonError");
    } catch (const DaemonError& e) {
        BOOST_TEST(std::string(e.what()) == "must be at least 1 (parameter 'max_tokens')");
        BOOST_TEST(e.type == "invalid_params");
    }
    BOOST_CHECK_THROW(client.generate({}, [](std::string_view) {}), DaemonError);
}

BOOST_AUTO_TEST_CASE(hang_up_mid_answer_is_a_broken_connection) {
    ScriptedPeer peer([](const json::object&) -> std::vector<std::string> { return {token(1, "Hi"), ""}; });
    RpcClient client = RpcClient::connect(peer.candidates());
    std::string text;
    BOOST_CHECK_THROW(client.generate({}, [&](std::string_view piece) { text += piece; }), BrokenConnection);
    BOOST_TEST(text == "Hi");
}

BOOST_AUTO_TEST_CASE(garbage_is_a_broken_connection) {
    ScriptedPeer peer([](const json::object&) -> std::vector<std::string> { return {"<html>", ""}; });
    RpcClient client = RpcClient::connect(peer.candidates());
    BOOST_CHECK_THROW(client.call("status"), BrokenConnection);
}

BOOST_AUTO_TEST_CASE(nothing_listening_is_a_connect_error) {
    const std::string path = (std::filesystem::temp_directory_path() / "strata-client-test-absent.sock").string();
    try {
        RpcClient::connect({{path, "--socket"}});
        BOOST_FAIL("connected to nothing");
    } catch (const ConnectError& e) {
        BOOST_TEST(std::string(e.what()).find(path + " (--socket): No such file or directory") != std::string::npos);
    }
}

BOOST_AUTO_TEST_SUITE_END()
