// tests/unit/chat_prompt_test.cpp — chat::Prompt: conversations through the model's own
// template or a built-in family into tokens (the BOS rule, what a template sees of tool
// turns), its errors, and truncate_middle. The vocabulary is Llama 2's (<s>, </s>), imported
// from tests/data/tokenizer.
#include <algorithm>
#include <string>
#include <vector>

#include "chat/prompt.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "import_tokenizer.h"
#include "test_util.h"

using namespace strata;
using namespace strata::chat;

namespace {

const tokenizer::Tokenizer& llama2() {
    static const auto tok = [] {
        tool::ImportOptions options;
        options.sources = {(test::data_dir() / "tokenizer" / "llama2" / "tokenizer.model").string()};
        gguf::Writer w;
        tool::write_tokenizer(tool::import_tokenizer(options), w);
        const std::vector<uint8_t> bytes = w.bytes();
        return tokenizer::Tokenizer::from_gguf(*gguf::File::parse(bytes));
    }();
    return *tok;
}

const Template& lines_template() {
    static const Template t("{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}");
    return t;
}

// The PromptError `f` throws.
template <class F>
PromptError error_of(F f) {
    try {
        f();
    } catch (const PromptError& e) {
        return e;
    }
    BOOST_FAIL("no PromptError");
    throw;
}

const std::vector<Message> kChat{{"system", "Be brief."}, {"user", "one"},   {"assistant", "1"},
                                 {"user", "two"},         {"assistant", "2"}, {"user", "three"}};

}  // namespace

BOOST_AUTO_TEST_CASE(the_template_writes_bos_itself_or_gets_one) {
    const Prompt with_bos(lines_template(), llama2());
    const std::vector<Message> hi{{"user", "hi"}};
    BOOST_TEST(with_bos.text(hi, Value::none()) == "<s>user: hi\n");
    const auto ids = with_bos.tokens(hi, Value::none());
    BOOST_TEST(ids == llama2().encode("<s>user: hi\n", false, true));
    BOOST_TEST(std::count(ids.begin(), ids.end(), llama2().bos()) == 1);

    const Template no_bos("{% for m in messages %}{{ m.content }}{% endfor %}");
    BOOST_TEST(Prompt(no_bos, llama2()).tokens(hi, Value::none()) == llama2().encode("hi", true, true));
}

BOOST_AUTO_TEST_CASE(a_family_renders_as_render_chat_with_its_bos_rule) {
    const std::vector<Message> hi{{"user", "hi"}};
    const ChatTokens specials{"<s>", "</s>"};
    for (ChatFamily f : {ChatFamily::Plain, ChatFamily::Gemma2, ChatFamily::Qwen25, ChatFamily::Llama31}) {
        BOOST_TEST_INFO(chat_family_name(f));
        const std::string text = render_chat(f, hi, true, specials);
        BOOST_TEST(Prompt(f, llama2()).text(hi, Value::none()) == text);
        BOOST_TEST(Prompt(f, llama2()).tokens(hi, Value::none()) == llama2().encode(text, !chat_family_renders_bos(f), true));
    }
}

BOOST_AUTO_TEST_CASE(the_template_sees_tools_and_tool_turns) {
    const Template t("{{ tools | length }}{% for m in messages %}|{{ m.role }}:{{ m.content is none }}"
                     "{% if m.tool_calls %}:{{ m.tool_calls[0].id }}{% endif %}{% if m.tool_call_id %}:{{ m.tool_call_id }}{% endif %}"
                     "{% endfor %}");
    List calls;
    Dict call;
    call.set("id", Value(std::string("c1")));
    calls.emplace_back(std::move(call));
    List tools;
    tools.emplace_back(Value(std::string("tool")));
    const std::vector<Message> conv{{"user", "x"}, {"assistant", "", Value(std::move(calls))}, {"tool", "42", Value::none(), "c1"}};
    BOOST_TEST(Prompt(t, llama2()).text(conv, Value(std::move(tools))) == "1|user:False|assistant:True:c1|tool:False:c1");
}

BOOST_AUTO_TEST_CASE(errors_name_the_field) {
    const std::vector<Message> hi{{"user", "hi"}};
    List tools;
    tools.emplace_back(Value(std::string("tool")));
    const Value some_tools(std::move(tools));
    PromptError e = error_of([&] { Prompt(ChatFamily::Plain, llama2()).text(hi, some_tools); });
    BOOST_TEST(e.field() == "tools");
    BOOST_TEST((e.kind() == PromptError::Kind::Invalid));
    e = error_of([&] { Prompt(ChatFamily::Plain, llama2()).text(std::vector<Message>{{"tool", "1", Value::none(), "c1"}}, Value::none()); });
    BOOST_TEST(e.field() == "tools");

    e = error_of([&] { Prompt(ChatFamily::Gemma2, llama2()).text(std::vector<Message>{{"system", "s"}, {"user", "u"}}, Value::none()); });
    BOOST_TEST(e.field() == "messages");
    BOOST_TEST(std::string(e.what()).find("system role not supported") != std::string::npos);

    const Template raises("{{ raise_exception('no system messages') }}");
    e = error_of([&] { Prompt(raises, llama2()).text(hi, Value::none()); });
    BOOST_TEST(e.field() == "messages");
    BOOST_TEST(std::string(e.what()) == "the model's chat template refused the conversation: no system messages");
    const Template fails("{{ messages[0].content.nope() }}");
    e = error_of([&] { Prompt(fails, llama2()).text(hi, Value::none()); });
    BOOST_TEST(std::string(e.what()).rfind("the model's chat template failed: ", 0) == 0);
}

BOOST_AUTO_TEST_CASE(truncate_middle_drops_the_oldest_whole_turns) {
    const Prompt p(ChatFamily::Plain, llama2());
    const auto whole = p.tokens(kChat, Value::none());
    const std::vector<Message> last_two{kChat[0], kChat[3], kChat[4], kChat[5]};
    const auto shorter = p.tokens(last_two, Value::none());
    // Room for the conversation without its first turn (user "one", assistant "1"), not more.
    const size_t reserve = 4;
    const Truncation t = p.truncate_middle(kChat, Value::none(), whole, shorter.size() + reserve + 1, reserve);
    BOOST_TEST(t.first == 1u);
    BOOST_TEST(t.dropped == 2u);
    BOOST_TEST(t.tokens == shorter);

    const Truncation untouched = p.truncate_middle(kChat, Value::none(), whole, whole.size() + reserve, reserve);
    BOOST_TEST(untouched.dropped == 0u);
    BOOST_TEST(untouched.tokens == whole);
}

BOOST_AUTO_TEST_CASE(truncate_middle_keeps_the_system_messages_and_the_last_user_turn) {
    const Prompt p(ChatFamily::Plain, llama2());
    const std::vector<Message> kept{kChat[0], kChat[5]};
    const auto minimal = p.tokens(kept, Value::none());
    const Truncation t = p.truncate_middle(kChat, Value::none(), p.tokens(kChat, Value::none()), minimal.size() + 1, 100);
    BOOST_TEST(t.first == 1u);
    BOOST_TEST(t.dropped == 4u);
    BOOST_TEST(t.tokens == minimal);

    const PromptError e = error_of([&] { p.truncate_middle(kChat, Value::none(), p.tokens(kChat, Value::none()), minimal.size(), 0); });
    BOOST_TEST((e.kind() == PromptError::Kind::ContextFull));
    BOOST_TEST(std::string(e.what()) == "the system message(s) and the last user turn alone take " + std::to_string(minimal.size()) +
                                            " tokens; the context is " + std::to_string(minimal.size()));
}
