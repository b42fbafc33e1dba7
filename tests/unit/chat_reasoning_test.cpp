// tests/unit/chat_reasoning_test.cpp — chat::reasoning_syntax (from real templates: Qwen3,
// DeepSeek-R1, Qwen2.5; rendered generation prompts) and ReasoningSplitter: <think> blocks and
// Harmony channels taken apart whole and fed in every cut of the text (tags split across
// pieces), replies that start inside thinking, Harmony tool calls, and text that is neither.
#include <fstream>
#include <sstream>
#include <string>

#include "chat/chat.h"
#include "chat/reasoning.h"
#include "test_util.h"

using namespace strata;
using namespace strata::chat;

namespace {

std::string read_template(const std::string& name) {
    std::ifstream in(test::data_dir() / "chat" / "templates" / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The generation prompt for one user message, with `extra` template variables.
std::string generation_prompt(const std::string& source, Dict extra = {}) {
    Dict message;
    message.set("role", Value(std::string("user")));
    message.set("content", Value(std::string("Hi")));
    ChatInput in;
    in.messages = Value(List{Value(std::move(message))});
    in.extra = std::move(extra);
    return apply_chat_template(Template(source), in);
}

const ReasoningSyntax kThink{ReasoningFormat::ThinkTags, false};
const ReasoningSyntax kInside{ReasoningFormat::ThinkTags, true};
const ReasoningSyntax kHarmony{ReasoningFormat::Harmony, false};

// The reply fed in two pieces cut at every byte, and in one-byte pieces: always the same parts.
ReplyParts split_every_way(std::string_view reply, ReasoningSyntax syntax) {
    const ReplyParts whole = split_reply(reply, syntax);
    for (size_t cut = 0; cut <= reply.size(); ++cut) {
        ReasoningSplitter s(syntax);
        ReplyParts parts = s.feed(reply.substr(0, cut));
        parts.append(s.feed(reply.substr(cut)));
        parts.append(s.finish());
        BOOST_TEST(parts.reasoning == whole.reasoning, "cut " << cut);
        BOOST_TEST(parts.content == whole.content, "cut " << cut);
        BOOST_TEST(parts.calls.size() == whole.calls.size(), "cut " << cut);
    }
    ReasoningSplitter s(syntax);
    ReplyParts bytes;
    for (char c : reply) bytes.append(s.feed(std::string_view(&c, 1)));
    bytes.append(s.finish());
    BOOST_TEST(bytes.reasoning == whole.reasoning);
    BOOST_TEST(bytes.content == whole.content);
    return whole;
}

}  // namespace

BOOST_AUTO_TEST_CASE(syntax_from_real_templates) {
    const std::string qwen3 = read_template("Qwen-Qwen3-0.6B.jinja");
    ReasoningSyntax s = reasoning_syntax(qwen3, generation_prompt(qwen3));
    BOOST_TEST((s.format == ReasoningFormat::ThinkTags));
    BOOST_TEST(!s.starts_inside);
    Dict off;
    off.set("enable_thinking", Value(false));
    const std::string no_thinking = generation_prompt(qwen3, off);
    BOOST_TEST(no_thinking.ends_with("<think>\n\n</think>\n\n"));
    BOOST_TEST(!reasoning_syntax(qwen3, no_thinking).starts_inside);

    const std::string r1 = read_template("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja");
    s = reasoning_syntax(r1, generation_prompt(r1));
    BOOST_TEST((s.format == ReasoningFormat::ThinkTags));
    BOOST_TEST(s.starts_inside);

    const std::string qwen25 = read_template("Qwen-Qwen2.5-7B-Instruct.jinja");
    BOOST_TEST((reasoning_syntax(qwen25, generation_prompt(qwen25)).format == ReasoningFormat::None));
    BOOST_TEST((reasoning_syntax("{{ '<|start|>assistant<|channel|>final<|message|>' }}", "").format == ReasoningFormat::Harmony));
    // No template (a built-in family) whose prompt opens the block.
    BOOST_TEST(reasoning_syntax("", "<｜Assistant｜><think>\n").starts_inside);
    BOOST_TEST(reasoning_format_name(ReasoningFormat::ThinkTags) == std::string("think"));
}

BOOST_AUTO_TEST_CASE(think_tags) {
    ReplyParts p = split_every_way("<think>\nLet me see: 2+2.\n</think>\n\nIt is 4.", kThink);
    BOOST_TEST(p.reasoning == "Let me see: 2+2.");
    BOOST_TEST(p.content == "It is 4.");
    p = split_every_way("Plain answer, no <thinking> at all.\n", kThink);
    BOOST_TEST(p.reasoning == "");
    BOOST_TEST(p.content == "Plain answer, no <thinking> at all.\n");
    p = split_every_way("<think>\n\n</think>\n\nHello", kThink);  // an empty block
    BOOST_TEST(p.reasoning == "");
    BOOST_TEST(p.content == "Hello");
    p = split_every_way("<think>cut off in the middle of a <", kThink);  // a held tail comes out at the end
    BOOST_TEST(p.reasoning == "cut off in the middle of a <");
    BOOST_TEST(p.content == "");
}

BOOST_AUTO_TEST_CASE(reply_starting_inside_thinking) {
    ReplyParts p = split_every_way("Okay, the user says hi.\n</think>\n\nHello!", kInside);
    BOOST_TEST(p.reasoning == "Okay, the user says hi.");
    BOOST_TEST(p.content == "Hello!");
    p = split_every_way("Still thinking when max_tokens ran out", kInside);
    BOOST_TEST(p.reasoning == "Still thinking when max_tokens ran out");
    BOOST_TEST(p.content == "");
}

BOOST_AUTO_TEST_CASE(streamed_pieces_go_out_as_soon_as_they_are_certain) {
    ReasoningSplitter s(kThink);
    ReplyParts p = s.feed("<think>Hmm");
    BOOST_TEST(p.reasoning == "Hmm");
    p = s.feed(" so</th");
    BOOST_TEST(p.reasoning == " so");  // "</th" may be the closing tag: held
    p = s.feed("ink>Yes");
    BOOST_TEST(p.reasoning == "");
    BOOST_TEST(p.content == "Yes");
    p = s.feed(" \n");
    BOOST_TEST(p.content == "");  // trailing whitespace waits
    p = s.finish();
    BOOST_TEST(p.content == " \n");
}

BOOST_AUTO_TEST_CASE(harmony_channels) {
    const std::string reply =
        "<|channel|>analysis<|message|>User greets. Answer briefly.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Hello there!<|return|>";
    ReplyParts p = split_every_way(reply, kHarmony);
    BOOST_TEST(p.reasoning == "User greets. Answer briefly.");
    BOOST_TEST(p.content == "Hello there!");
    BOOST_TEST(p.calls.empty());
    // The final message's end is an end-of-generation token, which may not be in the text.
    p = split_every_way("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Done", kHarmony);
    BOOST_TEST(p.content == "Done");
}

BOOST_AUTO_TEST_CASE(harmony_tool_calls) {
    const std::string reply =
        "<|channel|>analysis<|message|>Need the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";
    ReplyParts p = split_every_way(reply, kHarmony);
    BOOST_TEST(p.reasoning == "Need the weather.");
    BOOST_TEST(p.content == "");
    BOOST_TEST_REQUIRE(p.calls.size() == 1u);
    BOOST_TEST(p.calls[0].name == "get_weather");
    BOOST_TEST(p.calls[0].arguments == "{\"city\":\"Paris\"}");
    // The recipient in the role part, and <|call|> cut off as an end-of-generation token.
    p = split_reply("<|start|>assistant to=functions.now<|channel|>commentary json<|message|>{}", kHarmony);
    BOOST_TEST_REQUIRE(p.calls.size() == 1u);
    BOOST_TEST(p.calls[0].name == "now");
    BOOST_TEST(p.calls[0].arguments == "{}");
    // A commentary preamble without a recipient is text for the user.
    p = split_reply("<|channel|>commentary<|message|>Looking it up.<|end|>", kHarmony);
    BOOST_TEST(p.content == "Looking it up.");
}

BOOST_AUTO_TEST_CASE(text_that_is_not_harmony_is_the_answer) {
    ReplyParts p = split_every_way("Just words, from a model that ignored the format.", kHarmony);
    BOOST_TEST(p.content == "Just words, from a model that ignored the format.");
    BOOST_TEST(p.reasoning == "");
    const std::string long_text(600, 'x');
    ReasoningSplitter s(kHarmony);
    BOOST_TEST(s.feed(long_text).content == long_text);  // past a header's length: not held
    BOOST_TEST(split_reply("text", {}).content == "text");
}
