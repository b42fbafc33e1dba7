// daemon/protocol/reply_stream.h — a chat reply taken apart for every wire format (OpenAI chat
// completions, Anthropic messages, the native protocol, and the Responses API's `reasoning`
// item): the model's thinking (chat/reasoning.h, from its template), the answer, and the
// tool calls in the answer (tool_calls.h) or, for Harmony, in its commentary channel.
// Streamed replies hand on thinking and answer text as soon as neither a tag nor a call can
// begin in it; the rest, and the calls, come at the end.
// Owns: combining the reasoning split with tool calling. Must not touch: the shapes of any wire
// format, HTTP, the engine.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "chat/reasoning.h"
#include "protocol/tool_calls.h"

namespace strata::daemon {

// What a reply says, or what of it can go out now.
struct ChatReply {
    std::string reasoning;  // thinking text ("" when the model did not think)
    ParsedReply answer;     // answer text and tool calls
};

class ReplyStream {
public:
    // `tools`: null when the request offers none (the answer is all text, Harmony calls too).
    ReplyStream(chat::ReasoningSyntax syntax, std::shared_ptr<const ToolUse> tools);
    ChatReply feed(std::string_view text);  // text that can go out (no calls)
    ChatReply finish();                     // the rest, with the calls

private:
    std::string content_ready();  // of the answer so far, what cannot begin a call and is not sent

    chat::ReasoningSplitter splitter_;
    std::shared_ptr<const ToolUse> tools_;
    std::string content_;  // the answer so far (with tools),
    size_t sent_ = 0;      // of which this much went out
    std::vector<chat::ChannelCall> channel_calls_;
};

// A whole reply taken apart.
ChatReply parse_chat_reply(std::string_view text, chat::ReasoningSyntax syntax, std::shared_ptr<const ToolUse> tools);

}  // namespace strata::daemon
