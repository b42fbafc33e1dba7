// daemon/anthropic/messages_stream.cpp — Anthropic's streamed events (see messages_stream.h).
#include "anthropic/messages_stream.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

namespace strata::daemon {
namespace json = boost::json;
namespace {

std::string event(std::string_view name, const json::object& data) {
    return "event: " + std::string(name) + "\ndata: " + json::serialize(data) + "\n\n";
}

}  // namespace

std::string MessagesStream::start() const {
    const json::object message{{"id", reply_.id},
                               {"type", "message"},
                               {"role", "assistant"},
                               {"model", reply_.model},
                               {"content", json::array{}},
                               {"stop_reason", nullptr},
                               {"stop_sequence", nullptr},
                               {"usage", messages_usage({})}};
    return event("message_start", {{"type", "message_start"}, {"message", message}}) + event("ping", {{"type", "ping"}});
}

std::string MessagesStream::text(std::string_view piece) {
    if (!reply_.tools)
        return text_events(std::string(piece));
    return text_events(held_.add(piece, reply_.tools->format));
}

std::string MessagesStream::text_events(const std::string& text) {
    if (text.empty())
        return {};
    std::string out;
    if (!text_open_) {
        text_open_ = true;
        out += event("content_block_start", {{"type", "content_block_start"},
                                             {"index", index_},
                                             {"content_block", json::object{{"type", "text"}, {"text", ""}}}});
    }
    return out + event("content_block_delta", {{"type", "content_block_delta"},
                                               {"index", index_},
                                               {"delta", json::object{{"type", "text_delta"}, {"text", text}}}});
}

std::string MessagesStream::close_block() {
    if (!text_open_)
        return {};
    text_open_ = false;
    return event("content_block_stop", {{"type", "content_block_stop"}, {"index", index_++}});
}

// The held text and the calls, then the message's end.
std::string MessagesStream::end(const engine::Result& result) {
    const ParsedReply parsed = parse_content(reply_, held_.rest());
    std::string out = reply_.tools ? text_events(parsed.content) : std::string();
    out += close_block();
    for (const ToolCall& call : parsed.calls) {
        out += event("content_block_start",
                     {{"type", "content_block_start"}, {"index", index_}, {"content_block", tool_use_block(call, false)}});
        out += event("content_block_delta",
                     {{"type", "content_block_delta"},
                      {"index", index_},
                      {"delta", json::object{{"type", "input_json_delta"}, {"partial_json", call.arguments}}}});
        out += event("content_block_stop", {{"type", "content_block_stop"}, {"index", index_++}});
    }
    StopReason stop = stop_reason(reply_, result, parsed);
    out += event("message_delta", {{"type", "message_delta"},
                                   {"delta", json::object{{"stop_reason", stop.reason}, {"stop_sequence", std::move(stop.sequence)}}},
                                   {"usage", messages_usage(result.usage)}});
    return out + event("message_stop", {{"type", "message_stop"}});
}

std::string MessagesStream::error(const ApiError& error) { return event("error", messages_error_json(error)); }

}  // namespace strata::daemon
