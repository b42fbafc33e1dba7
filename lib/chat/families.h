// chat/families.h — the built-in chat formats: rendering a conversation into a model
// family's prompt text when a request or the configuration names a family, or when a model's
// own template does not parse (models' templates are otherwise run by the Jinja interpreter,
// chat/template.h; chat/prompt.h chooses between the two). Owns: the prompt formats of the
// built-in families, written out in C++ so that the output is byte-identical to what the
// model's own Jinja template produces under Hugging Face transformers' apply_chat_template
// (tests/data/chat/ holds the golden renderings); recognising the family from the
// `tokenizer.chat_template` metadata text; choosing a family by name. Must not touch:
// tokenizing (chat/prompt.h tokenizes the rendered text, parsing special-token text such as
// "<|eot_id|>"), evaluating Jinja (there is no template engine here), GGUF files (the caller
// passes the template text and the BOS/EOS token texts).
//
// Scope: roles system, user and assistant with plain-text content. Tool definitions, tool
// calls and tool results (the templates' `tools`, `tool_calls`, role "tool"/"ipython"; a
// Message's tool fields) are not supported; a message with another role is an error.
#pragma once

#include <ctime>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "chat/message.h"

namespace strata::chat {

enum class ChatFamily {
    Llama31,      // Llama 3.1 / 3.3 Instruct: system header with "Today Date", default 26 Jul 2024
    Llama32,      // Llama 3.2 Instruct: same format, default date is today (strftime_now)
    Qwen25,       // Qwen2.5 Instruct: ChatML with the "You are Qwen" default system message
    Gemma2,       // Gemma 1 / 2 it: no system role, strict user/model alternation
    Phi3,         // Phi-3 mini: <|user|> ... <|end|>, an empty system message is still rendered
    Phi35,        // Phi-3.5 mini: as Phi-3, but an empty system message is dropped
    MistralNemo,  // Mistral Nemo (Tekken): [INST]...[/INST], system text in the last user turn
    DeepSeekR1,   // DeepSeek-R1 distills: <｜User｜>/<｜Assistant｜>, <think> stripped from replies
    Plain,        // "User: ...\n" lines, no special tokens; only when chosen explicitly
};

// The text of the model's special tokens, as the template's bos_token / eos_token.
struct ChatTokens {
    std::string bos;
    std::string eos;
};

struct ChatOptions {
    // Llama 3.x "Today Date:" text (the template's date_string). Unset: the family's default,
    // "26 Jul 2024" for Llama 3.1 and today's local date (chat_date_string) for Llama 3.2.
    std::optional<std::string> date;
};

// Bad conversations, unknown templates and unknown family names.
class ChatTemplateError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The family whose template this is (by robust markers, so that small variants of a family's
// template are recognised), or nullopt.
std::optional<ChatFamily> detect_chat_family(std::string_view jinja);

// detect_chat_family, or a ChatTemplateError naming the template (its first line and a hash)
// and listing the family names that can be chosen instead.
ChatFamily chat_family_for_template(std::string_view jinja);

// The family with this name ("llama3.1", "qwen2.5", "plain", ...; case-insensitive); an
// unknown name is a ChatTemplateError listing the known ones.
ChatFamily chat_family_from_name(std::string_view name);
std::string_view chat_family_name(ChatFamily family);

// Whether the rendered text starts with the BOS token text, in which case the caller must not
// let the tokenizer add another BOS.
bool chat_family_renders_bos(ChatFamily family);

// `when` as Llama 3.2's template formats today's date ("%d %b %Y" in the C locale, local time).
std::string chat_date_string(std::time_t when);

// The conversation in the family's prompt format, ending with the opening of an assistant turn
// when add_generation_prompt is set (Mistral Nemo's template has no such opening and ignores it).
// Errors: an empty conversation, an unknown role, and whatever the family's template rejects
// (Gemma: a leading system message, roles not alternating; Mistral Nemo: roles not alternating
// after an optional leading system message).
std::string render_chat(ChatFamily family, std::span<const Message> messages,
                        bool add_generation_prompt, const ChatTokens& tokens,
                        const ChatOptions& options = {});

}  // namespace strata::chat
