// engine/prompt.cpp — how a request's input becomes the session's token sequence: raw
// prompts appended to the history here; fill-in-the-middle inputs laid out by tokenizer/layouts.h; chat messages through chat::Prompt (the model's own
// Jinja template or a built-in family, and limits.context_overflow = truncate_middle), with
// its errors as EngineErrors. Must not touch: scheduling, KV, sampling, chat formats.
#include <algorithm>

#include "chat/prompt.h"
#include "engine/engine_impl.h"

namespace strata::engine {
namespace {

// The request's chat format: a built-in family (asked for, configured or the fallback), or
// the model's own template.
chat::Prompt prompt_format(const Active& a, const chat::Template* model_template, const tokenizer::Tokenizer& tokenizer) {
    return a.p.family ? chat::Prompt(*a.p.family, tokenizer) : chat::Prompt(*model_template, tokenizer, a.p.req.template_variables);
}

EngineError engine_error(const chat::PromptError& e) {
    const bool full = e.kind() == chat::PromptError::Kind::ContextFull;
    return EngineError(full ? Errc::ContextFull : Errc::InvalidParams, e.what(), e.field());
}

}  // namespace

// The session's whole token sequence after this request's input; for chat requests,
// a.conversation becomes the session's turns followed by the request's.
std::vector<int32_t> Engine::Impl::render(Active& a) {
    Session& s = *a.session;
    const GenerateRequest& r = a.p.req;
    if (r.infill) return tokenizer::infill_tokens(*tokenizer, *r.infill, {batch_tokens, r.max_tokens, context});
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

// `conv` through the request's chat format.
std::vector<int32_t> Engine::Impl::render_conversation(const Active& a, const std::vector<Message>& conv) const {
    try {
        return prompt_format(a, model_template.get(), *tokenizer).tokens(conv, a.p.req.tools);
    } catch (const chat::PromptError& e) {
        throw engine_error(e);
    }
}

// A chat prompt on a recurrent model: where its last kSnapshotMessages messages start in
// `full` (after position `from`, before its last token). The prompt pauses there for a
// snapshot of the state, so that an edited last message, or a regenerated answer, resumes
// from the turn before it instead of the beginning. A message starts where the conversation
// cut before it (rendered with its generation prompt) stops agreeing with the whole one's
// tokens: inside the opening of its turn. A cut the template refuses gives no position.
std::vector<int32_t> Engine::Impl::message_starts(const Active& a, const std::vector<int32_t>& full, int32_t from) const {
    constexpr size_t kSnapshotMessages = 4;
    const std::vector<Message>& conv = a.conversation;
    std::vector<int32_t> starts;
    for (size_t k = conv.size() > kSnapshotMessages ? conv.size() - kSnapshotMessages : 1; k < conv.size(); ++k) {
        std::vector<int32_t> cut;
        try {
            cut = render_conversation(a, std::vector<Message>(conv.begin(), conv.begin() + static_cast<std::ptrdiff_t>(k)));
        } catch (const EngineError&) {
            continue;
        }
        const auto n = static_cast<int32_t>(std::mismatch(cut.begin(), cut.end(), full.begin(), full.end()).first - cut.begin());
        if (n > from && n + 1 < static_cast<int32_t>(full.size()) && (starts.empty() || n > starts.back())) starts.push_back(n);
    }
    return starts;
}

// limits.context_overflow = truncate_middle, for chat requests (chat::Prompt::truncate_middle),
// leaving room for the reply: max_tokens, at most a quarter of the context.
void Engine::Impl::truncate_middle(Active& a, std::vector<int32_t>& full) {
    const auto reserve = static_cast<size_t>(std::min(a.p.req.max_tokens, context / 4));
    try {
        chat::Truncation t = prompt_format(a, model_template.get(), *tokenizer)
                                 .truncate_middle(a.conversation, a.p.req.tools, std::move(full),
                                                  static_cast<size_t>(context), reserve);
        const auto first = a.conversation.begin() + static_cast<std::ptrdiff_t>(t.first);
        a.conversation.erase(first, first + static_cast<std::ptrdiff_t>(t.dropped));
        full = std::move(t.tokens);
        a.usage.dropped_messages = static_cast<int32_t>(t.dropped);
    } catch (const chat::PromptError& e) {
        throw engine_error(e);
    }
}

}  // namespace strata::engine
