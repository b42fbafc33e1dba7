// chat/prompt.cpp — conversations through the model's template or a built-in family, into
// tokens, and truncate_middle (see prompt.h). Must not touch: raw prompts, sessions, JSON.
#include "chat/prompt.h"

#include <algorithm>

#include "chat/chat.h"

namespace strata::chat {
namespace {

ChatTokens special_texts(const tokenizer::Tokenizer& tokenizer) {
    ChatTokens specials;
    if (tokenizer.bos() >= 0) specials.bos = std::string(tokenizer.token_text(tokenizer.bos()));
    if (tokenizer.eos() >= 0) specials.eos = std::string(tokenizer.token_text(tokenizer.eos()));
    return specials;
}

// The messages as a template sees them.
Value template_messages(std::span<const Message> conversation) {
    List messages;
    for (const auto& m : conversation) {
        Dict d;
        d.set("role", Value(m.role));
        // An assistant turn that only calls tools has no content (None), as OpenAI sends it.
        d.set("content", m.content.empty() && !m.tool_calls.is_none() ? Value::none() : Value(m.content));
        if (!m.tool_calls.is_none()) d.set("tool_calls", m.tool_calls);
        if (!m.tool_call_id.empty()) d.set("tool_call_id", Value(m.tool_call_id));
        messages.emplace_back(std::move(d));
    }
    return Value(std::move(messages));
}

bool has_tool_turns(std::span<const Message> conversation) {
    return std::any_of(conversation.begin(), conversation.end(),
                       [](const Message& m) { return m.role == "tool" || !m.tool_calls.is_none(); });
}

}  // namespace

Prompt::Prompt(const Template& model_template, const tokenizer::Tokenizer& tokenizer, Dict variables)
    : template_(&model_template), variables_(std::move(variables)), tokenizer_(tokenizer), specials_(special_texts(tokenizer)) {}

Prompt::Prompt(ChatFamily family, const tokenizer::Tokenizer& tokenizer)
    : family_(family), tokenizer_(tokenizer), specials_(special_texts(tokenizer)) {}

std::string Prompt::text(std::span<const Message> conversation, const Value& tools) const {
    return template_ ? template_text(conversation, tools) : family_text(conversation, tools);
}

std::vector<int32_t> Prompt::tokens(std::span<const Message> conversation, const Value& tools) const {
    const std::string rendered = text(conversation, tools);
    const bool renders_bos = template_ ? tokenizer_.bos() >= 0 && rendered.starts_with(specials_.bos)
                                       : chat_family_renders_bos(family_);
    return tokenizer_.encode(rendered, !renders_bos, true);
}

// As apply_chat_template renders it (generation prompt on, today's date); a template error
// fails this conversation only.
std::string Prompt::template_text(std::span<const Message> conversation, const Value& tools) const {
    ChatInput in;
    in.extra = variables_;
    in.messages = template_messages(conversation);
    in.tools = tools;
    in.bos_token = specials_.bos;
    in.eos_token = specials_.eos;
    in.date = today();
    try {
        return apply_chat_template(*template_, in);
    } catch (const TemplateRaised& e) {
        throw PromptError(PromptError::Kind::Invalid, std::string("the model's chat template refused the conversation: ") + e.what(),
                          "messages");
    } catch (const TemplateError& e) {
        throw PromptError(PromptError::Kind::Invalid, std::string("the model's chat template failed: ") + e.what(), "messages");
    }
}

std::string Prompt::family_text(std::span<const Message> conversation, const Value& tools) const {
    if (!tools.is_none() || has_tool_turns(conversation))
        throw PromptError(PromptError::Kind::Invalid,
                          "tools and tool messages need the model's own chat template (a Jinja template in the file)", "tools");
    try {
        return render_chat(family_, conversation, true, specials_, {});
    } catch (const ChatTemplateError& e) {
        throw PromptError(PromptError::Kind::Invalid, e.what(), "messages");
    }
}

ReasoningSyntax Prompt::reasoning(std::string_view source) const {
    const Message probe{"user", "Hi"};
    std::string generation_prompt;
    try {
        generation_prompt = text(std::span(&probe, 1), Value::none());
    } catch (const PromptError&) {  // a template that refuses this conversation: its source decides
    }
    return reasoning_syntax(source, generation_prompt);
}

Truncation Prompt::truncate_middle(std::span<const Message> conversation, const Value& tools, std::vector<int32_t> tokens,
                                   size_t context, size_t reserve) const {
    std::vector<Message> conv(conversation.begin(), conversation.end());
    Truncation t;
    while (t.first < conv.size() && conv[t.first].role == "system") ++t.first;
    size_t last_user = conv.size() - 1;
    while (last_user > t.first && conv[last_user].role != "user") --last_user;
    while (tokens.size() + reserve > context && t.first < last_user) {
        size_t end = t.first + 1;
        while (end < last_user && conv[end].role != "user") ++end;
        conv.erase(conv.begin() + static_cast<std::ptrdiff_t>(t.first), conv.begin() + static_cast<std::ptrdiff_t>(end));
        t.dropped += end - t.first;
        last_user -= end - t.first;
        tokens = this->tokens(conv, tools);
    }
    if (tokens.size() >= context)
        throw PromptError(PromptError::Kind::ContextFull, "the system message(s) and the last user turn alone take " +
                                                              std::to_string(tokens.size()) + " tokens; the context is " +
                                                              std::to_string(context));
    t.tokens = std::move(tokens);
    return t;
}

}  // namespace strata::chat
