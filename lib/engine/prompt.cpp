// engine/prompt.cpp — how a request's input becomes the session's token sequence: raw
// prompts appended to the history, chat messages rendered through the model's own Jinja
// template or a built-in family, and limits.context_overflow = truncate_middle.
// Must not touch: scheduling, KV, sampling.
#include "chat/chat.h"
#include "engine/engine_impl.h"

namespace strata::engine {

// The session's whole token sequence after this request's input; for chat requests,
// a.conversation becomes the session's turns followed by the request's.
std::vector<int32_t> Engine::Impl::render(Active& a) {
    Session& s = *a.session;
    const GenerateRequest& r = a.p.req;
    if (r.messages.empty()) {
        if (s.chat) throw EngineError(Errc::InvalidParams, "session \"" + s.name + "\" is a chat session: send messages, or reset it", "prompt");
        std::vector<int32_t> full = s.tokens;
        const auto add = s.tokens.empty() ? tokenizer->encode(*r.prompt, true, false) : tokenizer->encode_continuation(*r.prompt, false);
        full.insert(full.end(), add.begin(), add.end());
        if (full.empty()) throw EngineError(Errc::InvalidParams, "the prompt is empty and the vocabulary has no BOS token", "prompt");
        return full;
    }
    if (!s.chat && !s.tokens.empty())
        throw EngineError(Errc::InvalidParams, "session \"" + s.name + "\" holds raw text: send a prompt, or reset it", "messages");
    a.conversation = s.conversation;
    a.conversation.insert(a.conversation.end(), r.messages.begin(), r.messages.end());
    return render_conversation(a, a.conversation);
}

// `conv` through the request's chat format: the model's own template, or a built-in family.
std::vector<int32_t> Engine::Impl::render_conversation(const Active& a, const std::vector<Message>& messages) const {
    if (!a.p.family) {
        const std::string text = render_model_template(messages, a.p.req.tools);
        // The template writes BOS itself when it wants one (as llama.cpp, no second BOS).
        const bool renders_bos = tokenizer->bos() >= 0 && text.starts_with(tokenizer->token_text(tokenizer->bos()));
        return tokenizer->encode(text, !renders_bos, true);
    }
    if (uses_tools(a.p.req))
        throw EngineError(Errc::InvalidParams, "tools and tool messages need the model's own chat template (a Jinja template in the file)",
                          "tools");
    std::vector<tokenizer::ChatMessage> conv;
    for (const auto& m : messages) conv.push_back({m.role, m.content});
    tokenizer::ChatTokens specials;
    if (tokenizer->bos() >= 0) specials.bos = std::string(tokenizer->token_text(tokenizer->bos()));
    if (tokenizer->eos() >= 0) specials.eos = std::string(tokenizer->token_text(tokenizer->eos()));
    std::string text;
    try {
        text = tokenizer::render_chat(*a.p.family, conv, true, specials, {});
    } catch (const tokenizer::ChatTemplateError& e) {
        throw EngineError(Errc::InvalidParams, e.what(), "messages");
    }
    return tokenizer->encode(text, !tokenizer::chat_family_renders_bos(*a.p.family), true);
}

// limits.context_overflow = truncate_middle, for chat requests: drops whole turns after the
// leading system message(s), oldest first (each drop runs up to the next user message, so
// the turns still alternate), until the prompt leaves room for the reply (max_tokens, at
// most a quarter of the context). The last user message and what follows it are never
// dropped; when they alone do not fit, the request fails with context_full.
void Engine::Impl::truncate_middle(Active& a, std::vector<int32_t>& full) {
    std::vector<Message>& conv = a.conversation;
    const size_t reserve = static_cast<size_t>(std::min(a.p.req.max_tokens, context / 4));
    size_t first = 0;
    while (first < conv.size() && conv[first].role == "system") ++first;
    size_t last_user = conv.size() - 1;
    while (last_user > first && conv[last_user].role != "user") --last_user;
    int32_t dropped = 0;
    while (full.size() + reserve > static_cast<size_t>(context) && first < last_user) {
        size_t end = first + 1;
        while (end < last_user && conv[end].role != "user") ++end;
        conv.erase(conv.begin() + static_cast<std::ptrdiff_t>(first), conv.begin() + static_cast<std::ptrdiff_t>(end));
        dropped += static_cast<int32_t>(end - first);
        last_user -= end - first;
        full = render_conversation(a, conv);
    }
    if (static_cast<int32_t>(full.size()) >= context)
        throw EngineError(Errc::ContextFull, "the system message(s) and the last user turn alone take " + std::to_string(full.size()) +
                                                 " tokens; the context is " + std::to_string(context));
    a.usage.dropped_messages = dropped;
}

// The conversation through the model's own Jinja template, as apply_chat_template renders it
// (generation prompt on, today's date); a template error fails this request only.
std::string Engine::Impl::render_model_template(const std::vector<Message>& conv, const chat::Value& tools) const {
    chat::ChatInput in;
    chat::List messages;
    for (const auto& m : conv) {
        chat::Dict d;
        d.set("role", chat::Value(m.role));
        // An assistant turn that only calls tools has no content (None), as OpenAI sends it.
        d.set("content", m.content.empty() && !m.tool_calls.is_none() ? chat::Value::none() : chat::Value(m.content));
        if (!m.tool_calls.is_none()) d.set("tool_calls", m.tool_calls);
        if (!m.tool_call_id.empty()) d.set("tool_call_id", chat::Value(m.tool_call_id));
        messages.emplace_back(std::move(d));
    }
    in.messages = chat::Value(std::move(messages));
    in.tools = tools;
    if (tokenizer->bos() >= 0) in.bos_token = std::string(tokenizer->token_text(tokenizer->bos()));
    if (tokenizer->eos() >= 0) in.eos_token = std::string(tokenizer->token_text(tokenizer->eos()));
    in.date = chat::today();
    try {
        return chat::apply_chat_template(*model_template, in);
    } catch (const chat::TemplateRaised& e) {
        throw EngineError(Errc::InvalidParams, std::string("the model's chat template refused the conversation: ") + e.what(), "messages");
    } catch (const chat::TemplateError& e) {
        throw EngineError(Errc::InvalidParams, std::string("the model's chat template failed: ") + e.what(), "messages");
    }
}

}  // namespace strata::engine
