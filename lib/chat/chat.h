// chat/chat.h — Hugging Face's apply_chat_template convention on top of the interpreter:
// the variables a chat template sees (messages, tools = None when absent, documents = None,
// add_generation_prompt, bos_token, eos_token) and the globals transformers adds
// (raise_exception, strftime_now at a fixed date, 00:00:00). Must not touch: JSON libraries
// (callers convert their JSON into Value), tokenizing the result, GGUF files.
#pragma once

#include <ctime>
#include <string>
#include <string_view>

#include "chat/template.h"
#include "chat/value.h"

namespace strata::chat {

struct ChatInput {
    Value messages;                     // a list of message dicts, as the request gave them
    Value tools = Value::none();        // a list of tool dicts, or none
    bool add_generation_prompt = true;
    std::string bos_token, eos_token;   // the special tokens' text
    std::tm date{};                     // strftime_now's date (its time is 00:00:00)
    Dict extra;                         // more variables (apply_chat_template's **kwargs)
};

// "26 Jul 2024" (strptime "%d %b %Y") as a date; a TemplateError names a malformed one.
std::tm parse_date(std::string_view text);
// Today's local date.
std::tm today();

// The template rendered for this conversation. Errors: TemplateRaised (the template's own
// raise_exception message) and TemplateError (anything else, with its line).
std::string apply_chat_template(const Template& tmpl, const ChatInput& input, const RenderLimits& limits = {});

}  // namespace strata::chat
