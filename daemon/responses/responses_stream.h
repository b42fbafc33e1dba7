// daemon/responses/responses_stream.h — a streamed /v1/responses reply as the Responses API's
// server-sent events, each "event: TYPE\ndata: {"type": TYPE, "sequence_number": N, ...}\n\n":
// response.created and response.in_progress; for the message item
// response.output_item.added, response.content_part.added, response.output_text.delta (as
// text comes), response.output_text.done, response.content_part.done and
// response.output_item.done; for each function call response.output_item.added,
// response.function_call_arguments.delta (the whole arguments), .done and
// response.output_item.done; then response.completed (or response.incomplete when the output
// was cut). The model's thinking, when its template separates it, comes first as a reasoning
// item: response.output_item.added, response.reasoning_text.delta (as it comes),
// response.reasoning_text.done and response.output_item.done. An error after the start is
// response.failed. Text that may begin a call or a thinking tag is held until it is parsed
// (protocol/reply_stream.h, as the other streams do).
// Owns: the events and their order. Must not touch: HTTP framing (openai/http_connection.h).
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "responses/responses.h"

namespace strata::daemon {

class ResponsesStream {
public:
    explicit ResponsesStream(ResponsesReply reply) : reply_(std::move(reply)), parts_(reply_.reasoning, reply_.tools) {}

    const ResponsesReply& reply() const { return reply_; }
    // Each returns the events to send, in order ("" when there are none yet).
    std::string start();
    std::string text(std::string_view piece);
    std::string end(const engine::Result& result);
    const boost::json::object& finished() const { return finished_; }  // the response end() sent
    std::string error(const ApiError& error);

private:
    std::string event(std::string_view type, boost::json::object data);
    std::string parts_events(const ChatReply& parts);
    std::string reasoning_events(const std::string& text);
    std::string close_reasoning();
    std::string text_events(const std::string& text);
    std::string open_message();
    std::string close_message();
    std::string call_events(const ToolCall& call);

    ResponsesReply reply_;
    ReplyStream parts_;  // the reply taken apart: thinking, answer, calls
    uint64_t sequence_ = 0;
    int output_index_ = 0;      // of the next output item
    bool message_open_ = false;  // the message item is open (at output_index_)
    std::string message_text_;   // its text so far
    bool reasoning_open_ = false;  // the reasoning item is open (at output_index_)
    std::string reasoning_text_;   // its text so far
    boost::json::object finished_;
};

}  // namespace strata::daemon
