// Unit tests of grammar/: the parser, the pushdown matcher over bytes, and the token mask.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <random>

#include "grammar/automaton.h"
#include "grammar/grammar.h"
#include "grammar/json.h"

using namespace strata::grammar;

namespace {

std::shared_ptr<const Grammar> compile(std::string_view text) {
    return std::make_shared<const Grammar>(Grammar::parse(text));
}

// Whether the whole string is a sentence of the grammar.
bool matches(std::string_view grammar, std::string_view text) {
    Matcher m(compile(grammar));
    return m.accept_bytes(text) && m.can_end();
}

std::string error_of(std::string_view grammar) {
    try {
        Grammar::parse(grammar);
    } catch (const GrammarError& e) {
        return e.what();
    }
    return "";
}

// How many bytes of `run` (whitespace repeated) the matcher takes after `prefix`.
size_t whitespace_taken(std::string_view grammar, std::string_view prefix, std::string_view run) {
    Matcher m(compile(grammar));
    BOOST_REQUIRE(m.accept_bytes(prefix));
    size_t n = 0;
    while (n < 100 && m.accept_bytes(run.substr(n % run.size(), 1))) ++n;
    return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(grammar)

BOOST_AUTO_TEST_CASE(literals_alternatives_groups) {
    const char* g = "root ::= \"ab\" (\"c\" | \"de\") tail\ntail ::= \"!\" | \"\"";
    BOOST_TEST(matches(g, "abc"));
    BOOST_TEST(matches(g, "abde!"));
    BOOST_TEST(!matches(g, "abd"));
    BOOST_TEST(!matches(g, "abcc"));
    BOOST_TEST(!matches(g, ""));
}

BOOST_AUTO_TEST_CASE(classes_ranges_negation_escapes) {
    const char* g = R"(root ::= [a-c0-9_] [^"\\\n] "\x41\u00e9" .)";
    BOOST_TEST(matches(g, "b#AéZ"));
    BOOST_TEST(matches(g, "_\xC3\xA9" "A\xC3\xA9\xE2\x82\xAC"));
    BOOST_TEST(!matches(g, "d#AéZ"));
    BOOST_TEST(!matches(g, "a\"AéZ"));
    BOOST_TEST(!matches(g, "a\\AéZ"));
    BOOST_TEST(!matches(g, "a\nAéZ"));
}

BOOST_AUTO_TEST_CASE(repetition_bounds) {
    BOOST_TEST(matches("root ::= \"a\"*", ""));
    BOOST_TEST(matches("root ::= \"a\"*", "aaaa"));
    BOOST_TEST(!matches("root ::= \"a\"+", ""));
    BOOST_TEST(matches("root ::= \"a\"+ \"b\"?", "aab"));
    BOOST_TEST(!matches("root ::= \"a\"+ \"b\"?", "abb"));
    const char* g = "root ::= [0-9]{2,4}";
    BOOST_TEST(!matches(g, "1"));
    BOOST_TEST(matches(g, "12"));
    BOOST_TEST(matches(g, "1234"));
    BOOST_TEST(!matches(g, "12345"));
    BOOST_TEST(matches("root ::= (\"ab\"){3}", "ababab"));
    BOOST_TEST(!matches("root ::= (\"ab\"){3}", "abab"));
    BOOST_TEST(matches("root ::= \"x\"{2,}", "xxxxxxx"));
    BOOST_TEST(!matches("root ::= \"x\"{2,}", "x"));
}

BOOST_AUTO_TEST_CASE(nested_recursion) {
    const char* g = "root ::= list\nlist ::= \"[\" (item (\",\" item)*)? \"]\"\nitem ::= [0-9] | list";
    BOOST_TEST(matches(g, "[]"));
    BOOST_TEST(matches(g, "[1,[2,[]],3]"));
    BOOST_TEST(!matches(g, "[1,]"));
    BOOST_TEST(!matches(g, "[[1]"));
}

BOOST_AUTO_TEST_CASE(utf8_split_across_tokens) {
    Matcher m(compile("root ::= [α-γ]+"));
    BOOST_TEST(m.accept_bytes("\xCE"));  // first byte of U+03B1..U+03B3
    BOOST_TEST(!m.can_end());
    BOOST_TEST(m.accept_bytes("\xB2"));  // β
    BOOST_TEST(m.can_end());
    BOOST_TEST(!m.accept_bytes("\xCE\xB4"));  // δ is outside the range
    BOOST_TEST(!m.accept_bytes("\xE2"));      // no three-byte code point is in the class
    BOOST_TEST(!m.accept_bytes("\x80"));      // a stray continuation byte
    BOOST_TEST(m.can_end());                  // rejected input left the state unchanged
    Matcher brace(compile("root ::= \"{\""));
    BOOST_TEST(!brace.accept_bytes("\xC1"));          // the lead of an overlong "{" (C1 BB)
    BOOST_TEST(!brace.accept_bytes("\xE0\x81\xBB"));  // a three-byte overlong "{"
    BOOST_TEST(!Matcher(compile("root ::= .")).accept_bytes("\xF4\x90"));  // above U+10FFFF
}

BOOST_AUTO_TEST_CASE(errors_name_line_and_column) {
    BOOST_TEST(error_of("root ::= \"a\"\nx ::= [b") == "grammar line 2 column 9: unterminated character class");
    BOOST_TEST(error_of("root ::= foo") == "grammar line 1 column 10: undefined rule 'foo'");
    BOOST_TEST(error_of("main ::= \"a\"") == "grammar has no 'root' rule");
    BOOST_TEST(error_of("root ::= root \"a\" | \"b\"") == "grammar rule 'root' is left-recursive");
    BOOST_TEST(error_of("root ::= \"a\"{3,1}").find("n < m") != std::string::npos);
    BOOST_TEST(error_of("root ::= (\"a\"").find("missing ')'") != std::string::npos);
    BOOST_TEST(error_of("root ::= \"a\" @").find("unexpected character '@'") != std::string::npos);
    BOOST_TEST(error_of("root ::= \"\\q\"").find("unknown escape") != std::string::npos);
}

// The trie walk allows exactly the tokens whose bytes, appended one at a time, the matcher
// accepts — checked against testing every token separately, on a byte-level vocabulary with
// multi-byte tokens, byte-fallback-like single bytes and a duplicate.
BOOST_AUTO_TEST_CASE(trie_mask_equals_per_token_test) {
    std::vector<std::string> vocab = {"", "{", "}", "\"", "a", "ab", "\"a", "1", "12", ",", ":", " ",
                                      "\xCE", "\xB2", "\xCE\xB2", "\"}", "a\"", "ab"};
    for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
    TokenTrie trie(vocab);
    auto g = compile(R"(root ::= "{" ( "\"" [a-bβ]* "\":" [0-9]+ )? "}")");
    Matcher m(g);
    std::mt19937 rng(7);
    for (int step = 0; step < 40; ++step) {
        std::vector<uint8_t> allowed;
        m.allowed_tokens(trie, allowed);
        std::vector<int32_t> ok;
        for (size_t id = 0; id < vocab.size(); ++id) {
            Matcher probe = m;
            bool expect = !vocab[id].empty() && probe.accept_bytes(vocab[id]);
            BOOST_TEST(allowed[id] == expect, "token " << id << " at step " << step);
            if (expect) ok.push_back(static_cast<int32_t>(id));
        }
        if (ok.empty()) {
            BOOST_TEST(m.can_end());
            break;
        }
        BOOST_TEST(m.accept_bytes(vocab[static_cast<size_t>(ok[rng() % ok.size()])]));
    }
}

// Between any two JSON tokens of json_object (and of schema grammars, which share its ws
// rule) at most one space, or a newline and 20 spaces or tabs, as llama.cpp's space rule:
// a model cannot pad a reply until max_tokens, and "}" ends it (nothing may follow).
BOOST_AUTO_TEST_CASE(json_whitespace_is_bounded) {
    const std::string g = json_object_grammar();
    for (const char* prefix : {"{", R"({"a")", R"({"a":)", R"({"a":[)", R"({"a":[1)", R"({"a":[1,)", R"({"a":{"b":true)"}) {
        BOOST_TEST_INFO("after " << prefix);
        BOOST_TEST(whitespace_taken(g, prefix, " ") == 1u);
        BOOST_TEST(whitespace_taken(g, prefix, "\n ") == 2u);
        BOOST_TEST(whitespace_taken(g, prefix, "\n") == 1u);
        BOOST_TEST(whitespace_taken(g, std::string(prefix) + "\n", " ") == 20u);
        BOOST_TEST(whitespace_taken(g, std::string(prefix) + "\n", "\t") == 20u);
        BOOST_TEST(whitespace_taken(g, std::string(prefix) + " ", "\n") == 0u);
    }
    BOOST_TEST(whitespace_taken(g, "", " \n\t") == 0u);
    BOOST_TEST(whitespace_taken(g, R"({"a": 1})", " \n\t") == 0u);
    BOOST_TEST(matches(g, "{\n  \"a\": [\n    1,\n    {}\n  ]\n}"));
}

// Numbers are bounded as llama.cpp bounds them: 16 digits before the point, after it and in
// the exponent, so zeros cannot pad a reply either.
BOOST_AUTO_TEST_CASE(json_numbers_are_bounded) {
    const std::string g = json_object_grammar();
    const std::string digits(16, '0');
    BOOST_TEST(matches(g, "{\"a\": -1" + digits.substr(1) + "." + digits + "e-" + digits + "}"));
    BOOST_TEST(!matches(g, "{\"a\": 1" + digits + "}"));
    BOOST_TEST(!matches(g, "{\"a\": 0." + digits + "0}"));
    BOOST_TEST(!matches(g, "{\"a\": 1E+" + digits + "0}"));
}

BOOST_AUTO_TEST_CASE(state_copies_roll_back) {
    Matcher m(compile("root ::= \"ab\" | \"ac\""));
    Matcher saved = m;
    BOOST_TEST(m.accept_bytes("ab"));
    BOOST_TEST(m.can_end());
    m = saved;
    BOOST_TEST(!m.can_end());
    BOOST_TEST(m.accept_bytes("ac"));
    BOOST_TEST(m.can_end());
}

BOOST_AUTO_TEST_SUITE_END()
