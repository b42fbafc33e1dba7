// chat/message.h — one turn of a conversation as the prompt builders (chat/prompt.h,
// chat/families.h) take it. Must not touch: rendering, tokens, JSON (callers convert).
#pragma once

#include <string>

#include "chat/value.h"

namespace strata::chat {

struct Message {
    std::string role;  // system, user, assistant, tool
    std::string content;
    // Tool calling: an assistant turn's calls as the chat template sees them
    // ([{"id","type":"function","function":{"name","arguments":{...}}}]), and which call a
    // tool turn answers.
    Value tool_calls = Value::none();
    std::string tool_call_id;
};

}  // namespace strata::chat
