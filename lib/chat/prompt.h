// chat/prompt.h — a conversation becomes the model's prompt: rendered by the model's own
// Jinja template (as apply_chat_template, with tools, today's date and the generation
// prompt) or by a built-in family (chat/families.h), then tokenized with a BOS unless the
// text writes one; and the context overflow policy truncate_middle. Owns: the choice
// between the two formats at render time, what a template sees of a Message, and the
// errors a conversation can cause (PromptError: which request field, and whether the
// context is full). Must not touch: raw prompts, sessions, scheduling, JSON, GGUF files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/families.h"
#include "chat/message.h"
#include "chat/reasoning.h"
#include "chat/template.h"
#include "chat/value.h"
#include "tokenizer/tokenizer.h"

namespace strata::chat {

// A conversation the chosen format cannot render (Invalid, naming the request field:
// "messages" or "tools"), or one that does not fit the context even when truncated.
class PromptError : public std::runtime_error {
public:
    enum class Kind { Invalid, ContextFull };
    PromptError(Kind kind, const std::string& message, std::string field = {})
        : std::runtime_error(message), kind_(kind), field_(std::move(field)) {}
    Kind kind() const { return kind_; }
    const std::string& field() const { return field_; }

private:
    Kind kind_;
    std::string field_;
};

// truncate_middle's answer: conversation[first, first + dropped) is left out.
struct Truncation {
    size_t first = 0;
    size_t dropped = 0;
    std::vector<int32_t> tokens;  // the prompt without those messages
};

// One model's chat format. Holds references: the template and tokenizer must outlive it.
class Prompt {
public:
    // The model's own template. Tools and tool turns are passed to it, and `variables` as
    // top-level template variables (apply_chat_template's **kwargs: enable_thinking, ...).
    Prompt(const Template& model_template, const tokenizer::Tokenizer& tokenizer, Dict variables = {});
    // A built-in family. Tools and tool turns are an error (field "tools").
    Prompt(ChatFamily family, const tokenizer::Tokenizer& tokenizer);

    // The conversation's text, ending with the opening of the assistant's turn.
    std::string text(std::span<const Message> conversation, const Value& tools) const;
    // That text as tokens, special-token text parsed, with a BOS unless the format writes
    // one itself (the template: its text starts with the BOS token's text, as llama.cpp
    // decides; a family: chat_family_renders_bos).
    std::vector<int32_t> tokens(std::span<const Message> conversation, const Value& tools) const;

    // How this format's replies separate thinking from the answer: `source` is the
    // template's text ("" for a family), and the generation prompt after one user message
    // tells whether a reply starts inside thinking.
    ReasoningSyntax reasoning(std::string_view source) const;

    // limits.context_overflow = truncate_middle: drops whole turns after the leading system
    // message(s), oldest first (each drop runs up to the next user message, so the turns
    // still alternate), until the prompt (`tokens`, the whole conversation's) leaves
    // `reserve` tokens of `context` for the reply. The last user message and what follows it
    // are never dropped; when they alone do not fit the context, a PromptError ContextFull.
    Truncation truncate_middle(std::span<const Message> conversation, const Value& tools, std::vector<int32_t> tokens,
                               size_t context, size_t reserve) const;

private:
    std::string template_text(std::span<const Message> conversation, const Value& tools) const;
    std::string family_text(std::span<const Message> conversation, const Value& tools) const;

    const Template* template_ = nullptr;  // null: family_
    Dict variables_;                      // the template's extra variables
    ChatFamily family_ = ChatFamily::Plain;
    const tokenizer::Tokenizer& tokenizer_;
    ChatTokens specials_;  // the BOS and EOS tokens' text
};

}  // namespace strata::chat
