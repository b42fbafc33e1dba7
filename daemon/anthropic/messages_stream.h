// daemon/anthropic/messages_stream.h — a streamed /v1/messages reply as Anthropic's server-sent
// events, each "event: NAME\ndata: JSON\n\n": message_start and ping, then per content block
// content_block_start, content_block_delta (text_delta, input_json_delta) and
// content_block_stop, then message_delta (stop_reason, stop_sequence, usage) and message_stop;
// an error after the start is an `error` event. With tools, text that may begin a call is
// held until the call is parsed (as the OpenAI stream does); each call goes out as one
// tool_use block whose input is one input_json_delta.
// Owns: the events and their order. Must not touch: HTTP framing (openai/http_connection.h).
#pragma once

#include <string>
#include <string_view>

#include "anthropic/messages.h"

namespace strata::daemon {

class MessagesStream {
public:
    explicit MessagesStream(MessagesReply reply) : reply_(std::move(reply)) {}

    const MessagesReply& reply() const { return reply_; }
    // Each returns the events to send, in order ("" when there are none yet).
    std::string start() const;  // message_start (input usage not yet known: 0), ping
    std::string text(std::string_view piece);
    std::string end(const engine::Result& result);
    static std::string error(const ApiError& error);

private:
    std::string text_events(const std::string& text);
    std::string close_block();

    MessagesReply reply_;
    int index_ = 0;           // of the next content block
    bool text_open_ = false;  // a text block is open (at index_)
    HeldOutput held_;  // with tools: the output, held where a call may begin
};

}  // namespace strata::daemon
