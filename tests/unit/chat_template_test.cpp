// tests/unit/chat_template_test.cpp — chat templates: byte-identical renderings against the
// goldens that tests/data/chat/generate.py made with the real Jinja templates, family
// detection from template text (also from the shared vocab GGUFs), names, and errors.
#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "gguf/gguf.h"
#include "test_util.h"
#include "chat/families.h"

using namespace strata;
using namespace strata::chat;
namespace json = boost::json;

using strata::test::read_file;

namespace {

std::filesystem::path chat_dir() { return test::data_dir() / "chat"; }

std::vector<Message> messages_of(const json::array& list) {
    std::vector<Message> out;
    for (const json::value& m : list)
        out.push_back({json::value_to<std::string>(m.at("role")), json::value_to<std::string>(m.at("content"))});
    return out;
}

struct GoldenResult {
    size_t identical = 0, outputs = 0, errors_matched = 0, errors = 0;
};

// Renders every case of one golden file and compares byte for byte; a case where the Jinja
// template raised must throw ChatTemplateError here.
GoldenResult check_golden(const std::filesystem::path& path) {
    const json::object golden = json::parse(read_file(path)).as_object();
    const std::string template_text = read_file(chat_dir() / "templates" / json::value_to<std::string>(golden.at("template")));
    const ChatFamily family = chat_family_from_name(json::value_to<std::string>(golden.at("family")));
    BOOST_TEST_INFO("golden " << path.filename());
    BOOST_TEST(chat_family_name(chat_family_for_template(template_text)) == chat_family_name(family));

    const ChatTokens tokens{json::value_to<std::string>(golden.at("bos_token")),
                            json::value_to<std::string>(golden.at("eos_token"))};
    ChatOptions options;
    if (!golden.at("date").is_null()) options.date = json::value_to<std::string>(golden.at("date"));
    const json::object& conversations = golden.at("conversations").as_object();

    GoldenResult r;
    for (const json::value& v : golden.at("cases").as_array()) {
        const json::object& c = v.as_object();
        const std::string name = json::value_to<std::string>(c.at("name"));
        const bool gen = c.at("add_generation_prompt").as_bool();
        const auto messages = messages_of(conversations.at(name).as_array());
        BOOST_TEST_INFO("case " << name << (gen ? " +gen" : ""));
        if (const json::value* expected = c.if_contains("output")) {
            ++r.outputs;
            const std::string want = json::value_to<std::string>(*expected);
            std::string got;
            BOOST_CHECK_NO_THROW(got = render_chat(family, messages, gen, tokens, options));
            BOOST_TEST(got == want);
            r.identical += got == want;
        } else {
            ++r.errors;
            bool threw = false;
            try {
                render_chat(family, messages, gen, tokens, options);
            } catch (const ChatTemplateError& e) {
                threw = true;
                BOOST_TEST_MESSAGE(name << ": " << e.what());
            }
            BOOST_TEST(threw, "the template raised " << json::value_to<std::string>(c.at("error")));
            r.errors_matched += threw;
        }
    }
    return r;
}

const ChatTokens kLlamaTokens{"<|begin_of_text|>", "<|eot_id|>"};

}  // namespace

BOOST_AUTO_TEST_SUITE(golden_renderings)

BOOST_AUTO_TEST_CASE(every_golden_file_is_reproduced_byte_for_byte) {
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(chat_dir() / "golden")) {
        const GoldenResult r = check_golden(entry.path());
        BOOST_TEST_MESSAGE(entry.path().filename().string()
                           << ": " << r.identical << "/" << r.outputs << " renderings byte-identical, "
                           << r.errors_matched << "/" << r.errors << " template errors reproduced");
        BOOST_TEST(r.identical == r.outputs);
        BOOST_TEST(r.errors_matched == r.errors);
        BOOST_TEST(r.outputs > 0u);
        ++files;
    }
    BOOST_TEST(files == 9u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(detection)

BOOST_AUTO_TEST_CASE(each_template_file_is_recognised) {
    const std::map<std::string, ChatFamily> expected{
        {"meta-llama-Llama-3.1-8B-Instruct.jinja", ChatFamily::Llama31},
        {"meta-llama-Llama-3.2-3B-Instruct.jinja", ChatFamily::Llama32},
        {"Qwen-Qwen2.5-7B-Instruct.jinja", ChatFamily::Qwen25},
        {"google-gemma-2-2b-it.jinja", ChatFamily::Gemma2},
        {"microsoft-Phi-3.5-mini-instruct.jinja", ChatFamily::Phi35},
        {"phi-3-mini-onnxruntime-extensions.jinja", ChatFamily::Phi3},
        {"mistralai-Mistral-Nemo-Instruct-2407.jinja", ChatFamily::MistralNemo},
        {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", ChatFamily::DeepSeekR1},
    };
    for (const auto& [file, family] : expected) {
        const std::string text = read_file(chat_dir() / "templates" / file);
        const auto got = detect_chat_family(text);
        BOOST_TEST_INFO(file);
        BOOST_REQUIRE(got.has_value());
        BOOST_TEST(chat_family_name(*got) == chat_family_name(family));
    }
}

BOOST_AUTO_TEST_CASE(small_variants_are_still_recognised) {
    // Reformatted whitespace, a changed default date, and the text without the file's
    // trailing newline (as GGUF metadata stores it) keep their family.
    std::string llama = read_file(chat_dir() / "templates" / "meta-llama-Llama-3.1-8B-Instruct.jinja");
    llama.pop_back();
    BOOST_TEST(chat_family_name(*detect_chat_family(llama)) == "llama3.1");
    const size_t at = llama.find("26 Jul 2024");
    BOOST_REQUIRE(at != std::string::npos);
    llama.replace(at, 11, "01 Jan 2025");
    BOOST_TEST(chat_family_name(*detect_chat_family(llama)) == "llama3.1");

    std::string dedented;  // the Qwen template without its indentation
    bool line_start = true;
    for (char c : read_file(chat_dir() / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja")) {
        if (line_start && c == ' ') continue;
        dedented += c;
        line_start = c == '\n';
    }
    BOOST_TEST(chat_family_name(*detect_chat_family(dedented)) == "qwen2.5");
}

BOOST_AUTO_TEST_CASE(other_formats_are_not_mistaken_for_a_known_family) {
    // SentencePiece-era Mistral ("[INST] " with a space), Phi-3 starting with bos_token,
    // a generic ChatML template, a Gemma template that accepts a system role, and text.
    const char* unknown[] = {
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
        "message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}",
        "{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + "
        "message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}",
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
        "'<|im_end|>' + '\n'}}{% endfor %}",
        "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\n' + "
        "message['content'] + '<end_of_turn>\n' }}{% endfor %}",
        "",
        "hello",
    };
    for (const char* t : unknown) {
        BOOST_TEST_INFO(t);
        BOOST_TEST(!detect_chat_family(t).has_value());
    }
}

BOOST_AUTO_TEST_CASE(unknown_template_error_names_the_template_and_the_choices) {
    const std::string text = "{% for m in messages %}\n{{ m.content }}{% endfor %}";
    try {
        chat_family_for_template(text);
        BOOST_FAIL("no error");
    } catch (const ChatTemplateError& e) {
        const std::string what = e.what();
        BOOST_TEST(what.find("'{% for m in messages %}'") != std::string::npos, what);
        BOOST_TEST(what.find("fnv1a64") != std::string::npos, what);
        BOOST_TEST(what.find("llama3.1") != std::string::npos, what);
        BOOST_TEST(what.find("plain") != std::string::npos, what);
    }
    // Control bytes and non-ASCII in the excerpt are escaped.
    try {
        chat_family_for_template("\x01\xff{{ x }}");
        BOOST_FAIL("no error");
    } catch (const ChatTemplateError& e) {
        BOOST_TEST(std::string(e.what()).find("\\x01\\xff{{ x }}") != std::string::npos, e.what());
    }
    BOOST_CHECK_EXCEPTION(chat_family_for_template("  \n"), ChatTemplateError, [](const ChatTemplateError& e) {
        return std::string(e.what()).find("empty") != std::string::npos;
    });
}

// The vocab GGUFs in ../shared carry real tokenizer.chat_template metadata.
BOOST_AUTO_TEST_CASE(gguf_metadata_templates, *test::shared("data/vocab-gguf/ggml-vocab-llama-bpe.gguf")) {
    const std::pair<const char*, const char*> files[] = {
        {"data/vocab-gguf/ggml-vocab-llama-bpe.gguf", "llama3.2"},
        {"data/vocab-gguf/ggml-vocab-qwen2.gguf", "qwen2.5"},
    };
    for (const auto& [rel, name] : files) {
        auto file = gguf::File::open(test::shared_dir() / rel);
        const auto text = file->get_string("tokenizer.chat_template");
        BOOST_TEST_INFO(rel);
        BOOST_REQUIRE(text.has_value());
        BOOST_TEST(chat_family_name(chat_family_for_template(*text)) == name);
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(names)

BOOST_AUTO_TEST_CASE(names_round_trip_and_are_case_insensitive) {
    for (ChatFamily f : {ChatFamily::Llama31, ChatFamily::Llama32, ChatFamily::Qwen25, ChatFamily::Gemma2,
                         ChatFamily::Phi3, ChatFamily::Phi35, ChatFamily::MistralNemo, ChatFamily::DeepSeekR1,
                         ChatFamily::Plain})
        BOOST_TEST(chat_family_name(chat_family_from_name(chat_family_name(f))) == chat_family_name(f));
    BOOST_TEST(chat_family_name(chat_family_from_name("Qwen2.5")) == "qwen2.5");
    BOOST_TEST(chat_family_name(chat_family_from_name("LLAMA3.3")) == "llama3.1");
    BOOST_TEST(chat_family_name(chat_family_from_name("gemma")) == "gemma2");
}

BOOST_AUTO_TEST_CASE(unknown_name_lists_the_known_ones) {
    BOOST_CHECK_EXCEPTION(chat_family_from_name("chatml"), ChatTemplateError, [](const ChatTemplateError& e) {
        const std::string what = e.what();
        return what.find("'chatml'") != std::string::npos && what.find("mistral-nemo") != std::string::npos;
    });
    BOOST_CHECK_THROW(chat_family_from_name(""), ChatTemplateError);
    BOOST_CHECK_THROW(chat_family_from_name("llama3.1 "), ChatTemplateError);
}

BOOST_AUTO_TEST_CASE(which_families_render_bos) {
    BOOST_TEST(chat_family_renders_bos(ChatFamily::Llama31));
    BOOST_TEST(chat_family_renders_bos(ChatFamily::Gemma2));
    BOOST_TEST(chat_family_renders_bos(ChatFamily::MistralNemo));
    BOOST_TEST(chat_family_renders_bos(ChatFamily::DeepSeekR1));
    BOOST_TEST(!chat_family_renders_bos(ChatFamily::Qwen25));
    BOOST_TEST(!chat_family_renders_bos(ChatFamily::Phi35));
    BOOST_TEST(!chat_family_renders_bos(ChatFamily::Plain));
    // And it agrees with what the renderer does.
    const std::vector<Message> hi{{"user", "hi"}};
    const ChatTokens tokens{"<BOS>", "<EOS>"};
    for (ChatFamily f : {ChatFamily::Llama31, ChatFamily::Llama32, ChatFamily::Qwen25, ChatFamily::Gemma2,
                         ChatFamily::Phi3, ChatFamily::Phi35, ChatFamily::MistralNemo, ChatFamily::DeepSeekR1,
                         ChatFamily::Plain}) {
        BOOST_TEST_INFO(chat_family_name(f));
        BOOST_TEST((render_chat(f, hi, true, tokens).rfind("<BOS>", 0) == 0) == chat_family_renders_bos(f));
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rendering)

// render_chat throws a ChatTemplateError whose message contains every one of `parts`.
void expect_error(ChatFamily family, const std::vector<Message>& messages,
                  std::initializer_list<std::string_view> parts) {
    try {
        render_chat(family, messages, true, kLlamaTokens);
        BOOST_ERROR("no error from " << chat_family_name(family));
    } catch (const ChatTemplateError& e) {
        for (std::string_view part : parts)
            BOOST_TEST(std::string(e.what()).find(part) != std::string::npos, e.what() << " lacks " << part);
    }
}

BOOST_AUTO_TEST_CASE(conversation_errors) {
    expect_error(ChatFamily::Qwen25, {}, {"empty conversation"});
    expect_error(ChatFamily::Llama31, {{"user", "x"}, {"tool", "{}"}}, {"message 2", "'tool'"});
    expect_error(ChatFamily::Plain, {{"User", "x"}}, {"message 1", "'User'"});
    expect_error(ChatFamily::Gemma2, {{"system", "s"}, {"user", "u"}}, {"system role not supported"});
    expect_error(ChatFamily::Gemma2, {{"user", "a"}, {"assistant", "b"}, {"assistant", "c"}}, {"message 3", "alternate"});
    expect_error(ChatFamily::MistralNemo, {{"system", "s"}, {"user", "a"}, {"user", "b"}}, {"message 3", "alternate"});
    expect_error(ChatFamily::MistralNemo, {{"user", "a"}, {"system", "b"}}, {"message 2 is a system message"});
}

BOOST_AUTO_TEST_CASE(llama_date_option_and_default) {
    const std::vector<Message> hi{{"user", "hi"}};
    const std::string with_date = render_chat(ChatFamily::Llama32, hi, false, kLlamaTokens, {.date = "01 Feb 2030"});
    BOOST_TEST(with_date.find("Today Date: 01 Feb 2030\n\n") != std::string::npos);
    BOOST_TEST(render_chat(ChatFamily::Llama31, hi, false, kLlamaTokens).find("Today Date: 26 Jul 2024\n") !=
               std::string::npos);
    // Llama 3.2 defaults to today's date.
    const std::string today = chat_date_string(std::time(nullptr));
    BOOST_TEST(render_chat(ChatFamily::Llama32, hi, false, kLlamaTokens).find("Today Date: " + today + "\n") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(date_string_format) {
    // Noon UTC is the same calendar day in every time zone from UTC-11 to UTC+11.
    BOOST_TEST(chat_date_string(1741348800) == "07 Mar 2025");  // 2025-03-07 12:00 UTC
    BOOST_TEST(chat_date_string(1767268800) == "01 Jan 2026");  // 2026-01-01 12:00 UTC
    BOOST_TEST(chat_date_string(1734955200) == "23 Dec 2024");  // 2024-12-23 12:00 UTC
}

BOOST_AUTO_TEST_CASE(plain_format) {
    const std::vector<Message> m{{"system", "Be nice."}, {"user", "Hi"}, {"assistant", "Hello"}, {"user", "Bye"}};
    BOOST_TEST(render_chat(ChatFamily::Plain, m, true, kLlamaTokens) ==
               "System: Be nice.\nUser: Hi\nAssistant: Hello\nUser: Bye\nAssistant:");
    BOOST_TEST(render_chat(ChatFamily::Plain, m, false, kLlamaTokens) ==
               "System: Be nice.\nUser: Hi\nAssistant: Hello\nUser: Bye\n");
}

BOOST_AUTO_TEST_CASE(trim_handles_invalid_utf8_at_the_edges) {
    // Bytes that are not UTF-8 are not whitespace: nothing is stripped past them, and
    // nothing is read outside the content.
    const std::vector<Message> m{{"user", "\xe3\x80 x \xa0"}, {"assistant", "\x80"}, {"user", " \xc2"}};
    BOOST_TEST(render_chat(ChatFamily::Gemma2, m, false, {"<bos>", "<eos>"}) ==
               "<bos><start_of_turn>user\n\xe3\x80 x \xa0<end_of_turn>\n<start_of_turn>model\n\x80<end_of_turn>\n"
               "<start_of_turn>user\n\xc2<end_of_turn>\n");
}

BOOST_AUTO_TEST_SUITE_END()
