// tests/unit/jinja_test.cpp — the chat template interpreter (lib/chat): jinja2's behaviour
// feature by feature (expected texts are what Python's jinja2 3.1 renders under Hugging Face's
// settings), every golden rendering of tests/data/chat/golden (made by jinja2 from the models'
// own templates), and the sandbox: errors with lines, raise_exception, bounded steps, output
// and depth, no mutation of the caller's values.
#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "chat/chat.h"
#include "chat/json_value.h"
#include "chat/template.h"
#include "test_util.h"

using namespace strata;
using namespace strata::chat;
namespace json = boost::json;

using strata::test::read_file;

namespace {

// The variables of the feature cases: d = {'a': 1, 'b': 'two'}, xs = three {k, v} dicts.
Dict feature_vars() {
    return to_value(json::parse(R"({"d": {"a": 1, "b": "two"},
        "xs": [{"k": 1, "v": "x"}, {"k": 0, "v": "y"}, {"k": 1, "v": "z"}]})")).as_dict();
}

std::string render(std::string_view source, const RenderLimits& limits = {}) { return Template(source).render(feature_vars(), limits); }

struct Case {
    const char* source;
    const char* expected;
};

// Each expected text is jinja2's output for the source (trim_blocks, lstrip_blocks, loopcontrols).
const Case kFeatures[] = {
    {"a\n  {% if x %}\n  b\n  {% endif %}\nc\n", "a\nc"},
    {"{{- ' a ' -}}  \n {{ 'b' }}\n{#- c -#}\n d", " a bd"},
    {"{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}", "231"},
    {"{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}", "4"},
    {"{% if true %}{% set y = 5 %}{% endif %}{{ y }}", "5"},
    {"{% macro m(a, b='B') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{% set c = 'C' %}{{ m(1) }}{{ m(1, b=2) }}", "1BC12C"},
    {"{% for i in range(5) %}{% if i is odd %}{% continue %}{% endif %}{% if i > 3 %}{% break %}{% endif %}{{ i }}{{ loop.last }}{% endfor %}",
     "0False2False"},
    {"{{ {'a': [1, 'x', none, true, 1.5], 'b': (1,)} }}", "{'a': [1, 'x', None, True, 1.5], 'b': (1,)}"},
    {"{{ [0.1 + 0.2, 1e16, 1e-5, 100.0, -0.0, 2**62] }}", "[0.30000000000000004, 1e+16, 1e-05, 100.0, -0.0, 4611686018427387904]"},
    {R"J({{ 'it\'s' }} {{ ['it\'s', "q\"", 'tab\t', '\u00e9\x01'] }})J", R"J(it's ["it's", 'q"', 'tab\t', 'é\x01'])J"},
    {"{{ {'k': 'é\\n\"'} | tojson }} {{ {'k': 'é'} | tojson(ensure_ascii=true) }} {{ [1, {'a': []}] | tojson(indent=2) }}",
     "{\"k\": \"é\\n\\\"\"} {\"k\": \"\\u00e9\"} [\n  1,\n  {\n    \"a\": []\n  }\n]"},
    {"{{ 'abcdef'[1:4] }}{{ 'abcdef'[::-2] }}{{ [1, 2, 3][-2:] }}{{ 'héllo'[1] }}{{ 'héllo' | length }}", "bcdfdb[2, 3]é5"},
    {"{{ ' x '.strip() }}|{{ 'a b  c'.split() }}|{{ 'a,b'.split(',') }}|{{ 'Hello'.startswith('He') }}|{{ 'x' ~ none }}",
     "x|['a', 'b', 'c']|['a', 'b']|True|xNone"},
    {"{{ d.get('a') }} {{ d.get('z', 0) }} {{ d.items() | list }} {{ d.keys() | list }} {{ d | length }} {{ 'a' in d }}",
     "1 0 [('a', 1), ('b', 'two')] ['a', 'b'] 2 True"},
    {"{{ xs | selectattr('k', 'equalto', 1) | map(attribute='v') | list }} {{ xs | rejectattr('k') | list }} {{ xs | map(attribute='v') | join('+') }}",
     "['x', 'z'] [{'k': 0, 'v': 'y'}] x+y+z"},
    {"{{ x is defined }} {{ x is undefined }} {{ none is none }} {{ 'a' is string }} {{ d is mapping }} {{ xs is sequence }} {{ 1 is number }} {{ xs is iterable }}",
     "False True True True True True True True"},
    {"{% set s %}  cap {{ 1 }}  {% endset %}[{{ s }}]{% set t | trim %}  cap  {% endset %}[{{ t }}]", "[  cap 1  ][cap]"},
    {"{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}in{% endcall %}", "<in>"},
    {"{% for k, v in d | items %}{{ k }}{{ v }}{% endfor %} {% for x in xs if x.k %}{{ loop.index }}/{{ loop.length }}{% else %}none{% endfor %}",
     "a1btwo 1/22/2"},
    {"{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ 7 / 2 }} {{ 2 ** 3 }} {{ 'ab' * 2 }} {{ 1 + 2.0 }} {{ true + 1 }}", "3 -4 -2 3.5 8 abab 3.0 2"},
    {"{{ none | default('d') }} {{ x | default('d') }} {{ '' | default('d', true) }} {{ [] | first }} {{ 'abc' | first }} {{ [1, 2] | last }}",
     "None d d  a 2"},
    {"{{ '3' | int + 1 }} {{ 'x' | int }} {{ 2.7 | int }} {{ 1 | string ~ 2 }} {{ 'hello world' | title }} {{ 'ABC' | lower }}",
     "4 0 2 12 Hello World abc"},
    {"{{ '%s=%d%%'|format('x', 42) }} {{ '%r'|format('q') }} {{ '{} {k}'.format(1, k='v') }}", "x=42% 'q' 1 v"},    // Dict keys of any hashable type (ByteDance Seed-OSS's {0: 0, 512: 128, ...}).
    {R"J({% set b = {0: 'z', 512: 128, 2: none, (1, 'x'): 1.5} %}{{ b[512] }} {{ b[0] }} {{ b }} {{ b.get(2) }} {{ 0 in b }} {{ 3 in b }} {{ b.keys() | list }} {{ b[(1, 'x')] }})J",
     R"J(128 z {0: 'z', 512: 128, 2: None, (1, 'x'): 1.5} None True False [0, 512, 2, (1, 'x')] 1.5)J"},
    {R"J({% set b = {16: 'c', 0: 'a', 2.5: 'b'} %}{% for k, v in b | dictsort %}{{ k }}{{ v }},{% endfor %} {{ b | tojson }} {{ {2: 1, 1: true, none: 0} | tojson }} {{ {1: 'a', 1.0: 'b', true: 'c'} }})J",
     R"J(0a,2.5b,16c, {"16": "c", "0": "a", "2.5": "b"} {"2": 1, "1": true, "null": 0} {1: 'c'})J"},
    // select/reject/selectattr/rejectattr/map of a false value are empty (Functionary v3.1's
    // `tools | selectattr(...)` with tools=None); `for` over undefined is empty too.
    {R"J({{ none | selectattr('type', 'equalto', 'x') | list | length }} {{ none | map(attribute='a') | list }} {{ 0 | reject('none') | list }} {{ '' | select | list }} {% for x in undefined_name %}x{% endfor %})J",
     R"J(0 [] [] [] )J"},
    // Markup: a safe or escaped string HTML-escapes what + joins to it (Functionary v3.1).
    {R"J({{ 'a'|safe + '<"\'&>' }} {{ '<' + '<'|safe }} {{ ('<'|e) + '<' }} {{ 'x'|safe ~ '<' }} {{ 5|safe + '>' }} {{ ('a'|safe + 'b') == 'ab' }})J",
     R"J(a&lt;&#34;&#39;&amp;&gt; &lt;< &lt;&lt; x< 5&gt; True)J"},
};

// Golden renderings: every case of one tests/data/chat/golden file through apply_chat_template.
void check_golden(const std::filesystem::path& path) {
    const json::object golden = json::parse(read_file(path)).as_object();
    const std::string file = json::value_to<std::string>(golden.at("template"));
    const Template tmpl(read_file(test::data_dir() / "chat" / "templates" / file));
    ChatInput in;
    in.bos_token = json::value_to<std::string>(golden.at("bos_token"));
    in.eos_token = json::value_to<std::string>(golden.at("eos_token"));
    // generate.py pins strftime_now to 2025-03-07; date_string runs pass it as a variable.
    in.date = parse_date("07 Mar 2025");
    if (path.filename().string().find("date_string") != std::string::npos && !golden.at("date").is_null())
        in.extra.set("date_string", Value(json::value_to<std::string>(golden.at("date"))));
    const json::object& conversations = golden.at("conversations").as_object();
    for (const json::value& v : golden.at("cases").as_array()) {
        const json::object& c = v.as_object();
        const std::string name = json::value_to<std::string>(c.at("name"));
        in.messages = to_value(conversations.at(name));
        in.add_generation_prompt = c.at("add_generation_prompt").as_bool();
        BOOST_TEST_INFO(file << " / " << name << " gen=" << in.add_generation_prompt);
        if (const auto* out = c.if_contains("output")) {
            try {
                BOOST_TEST(apply_chat_template(tmpl, in) == std::string(out->as_string()));
            } catch (const TemplateError& e) {
                BOOST_ERROR(e.what());
            }
        } else {
            const std::string want = json::value_to<std::string>(c.at("error"));
            BOOST_CHECK_EXCEPTION(apply_chat_template(tmpl, in), TemplateRaised,
                                  [&](const TemplateRaised& e) { return "TemplateError: " + std::string(e.what()) == want; });
        }
    }
}

template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const TemplateError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

BOOST_AUTO_TEST_CASE(features_render_as_jinja2_does) {
    for (const Case& c : kFeatures) {
        BOOST_TEST_INFO("template: " << c.source);
        try {
            BOOST_TEST(render(c.source) == c.expected);
        } catch (const TemplateError& e) {
            BOOST_ERROR(e.what());
        }
    }
}

BOOST_AUTO_TEST_CASE(golden_renderings_of_the_models_templates) {
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(test::data_dir() / "chat" / "golden")) {
        check_golden(entry.path());
        ++files;
    }
    BOOST_TEST(files >= 8u);
}

BOOST_AUTO_TEST_CASE(strftime_now_and_special_tokens) {
    ChatInput in;
    in.messages = Value(List{});
    in.bos_token = "<s>";
    in.date = parse_date("26 Jul 2024");
    const Template t("{{ bos_token }}{{ strftime_now('%d %b %Y %H:%M:%S %A') }}|{{ tools }}|{{ eos_token }}|{{ add_generation_prompt }}");
    BOOST_TEST(apply_chat_template(t, in) == "<s>26 Jul 2024 00:00:00 Friday|None||True");
    BOOST_CHECK_THROW(parse_date("2024-07-26"), TemplateError);
}

// A namespace can hold itself (found by jinja_fuzz: repr recursed until the stack ended);
// Python prints the dict again as {...}. Values nested past Python's recursion limit are
// refused as Python refuses them, by repr and by tojson.
BOOST_AUTO_TEST_CASE(self_holding_namespaces_and_deep_values_print_as_python) {
    BOOST_TEST(render("{% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ ns }}|{% set ns.b = [ns] %}{{ ns }}") ==
               "<Namespace {'a': <Namespace {...}>}>|<Namespace {'a': <Namespace {...}>, 'b': [<Namespace {...}>]}>");
    const std::string deep = "{% set ns = namespace(a=[]) %}{% for i in range(1500) %}{% set ns.a = [ns.a] %}{% endfor %}";
    BOOST_TEST(render(deep + "{{ ns.a | length }}") == "1");
    BOOST_TEST(error_of([&] { render(deep + "{{ ns.a }}"); }).find("maximum recursion depth exceeded") != std::string::npos);
    BOOST_TEST(error_of([&] { render(deep + "{{ ns.a | tojson }}"); }).find("maximum recursion depth exceeded") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(errors_name_the_line_and_raise_exception_its_message) {
    BOOST_TEST(error_of([] { Template("a\n{% if x %}\nb"); }).find("line 3") != std::string::npos);
    BOOST_TEST(error_of([] { Template("{{ 1 + }}"); }).find("line 1") != std::string::npos);
    BOOST_TEST(error_of([] { Template("{% frobnicate %}"); }).find("unknown statement 'frobnicate'") != std::string::npos);
    BOOST_TEST(error_of([] { Template("{{ 'abc }}"); }).find("unterminated string") != std::string::npos);
    BOOST_TEST(error_of([] { render("x\n{{ d.missing.deeper }}"); }) == "line 2: 'dict object' has no attribute 'missing'");
    BOOST_TEST(error_of([] { render("{{ nope() }}"); }).find("'nope' is undefined") != std::string::npos);
    BOOST_TEST(error_of([] { render("{{ 'a' + 1 }}"); }).find("can only concatenate str") != std::string::npos);
    BOOST_TEST(error_of([] { render("{{ d | nofilter }}"); }).find("no filter named 'nofilter'") != std::string::npos);
    BOOST_TEST(error_of([] { render("{{ {[1]: 2} }}"); }).find("unhashable type: 'list'") != std::string::npos);
    BOOST_TEST(error_of([] { render("{{ none | list }}"); }).find("'NoneType' object is not iterable") != std::string::npos);
    BOOST_TEST(error_of([] { render("{% for x in none %}{% endfor %}"); }).find("'NoneType' object is not iterable") != std::string::npos);
    BOOST_TEST(error_of([] { render("{{ {(1,): 2} | tojson }}"); }).find("keys must be str, int, float, bool or None, not tuple") != std::string::npos);
    ChatInput in;
    in.messages = Value(List{});
    const Template raising("{{ raise_exception('Conversation roles must alternate') }}");
    BOOST_CHECK_EXCEPTION(apply_chat_template(raising, in), TemplateRaised,
                          [](const TemplateRaised& e) { return std::string(e.what()) == "Conversation roles must alternate"; });
}

BOOST_AUTO_TEST_CASE(the_sandbox_bounds_steps_output_depth_and_nesting) {
    RenderLimits small;
    small.max_output = 1000;
    small.max_steps = 100000;
    BOOST_TEST(error_of([&] { render("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", small); })
                   .find("steps") != std::string::npos);
    BOOST_TEST(error_of([&] { render("{% for i in range(500) %}xxxx{% endfor %}", small); }).find("output is longer") != std::string::npos);
    BOOST_TEST(error_of([&] { render("{% set s = 'x' * 2000 %}", small); }).find("longer than") != std::string::npos);
    BOOST_TEST(error_of([&] { render("{% set ns = namespace(s='ab') %}{% for i in range(20) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", small); })
                   .find("larger than") != std::string::npos);
    BOOST_TEST(error_of([&] { render("{{ range(100000) | length }}", small); }).find("range()") != std::string::npos);
    BOOST_TEST(error_of([] { render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"); }).find("nested more than") !=
               std::string::npos);
    BOOST_TEST(error_of([] { Template("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"); }).find("nested more than") !=
               std::string::npos);
    BOOST_TEST(error_of([] { render("{{ 2 ** 70 }}"); }).find("overflow") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(values_cannot_be_mutated) {
    BOOST_TEST(error_of([] { render("{{ xs.append(1) }}"); }).find("unsafe") != std::string::npos);
    BOOST_TEST(error_of([] { render("{{ d.update({'a': 2}) }}"); }).find("unsafe") != std::string::npos);
    BOOST_TEST(error_of([] { render("{% set d.a = 2 %}"); }).find("non-namespace") != std::string::npos);
    // A namespace is the template's own; the caller's values stay as they were.
    const Dict vars = feature_vars();
    Template("{% set xs = xs + [4] %}{% set ns = namespace(d=d) %}{% set ns.e = 1 %}").render(vars);
    BOOST_TEST(vars.find("xs")->as_list().size() == 3u);
}
