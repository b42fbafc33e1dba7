// daemon/responses/responses_stream.cpp — the Responses API's streamed events (see responses_stream.h).
#include "responses/responses_stream.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

namespace strata::daemon {
namespace json = boost::json;

std::string ResponsesStream::event(std::string_view type, json::object data) {
    json::object out{{"type", type}, {"sequence_number", sequence_++}};
    for (auto& member : data)
        out[member.key()] = std::move(member.value());
    return "event: " + std::string(type) + "\ndata: " + json::serialize(out) + "\n\n";
}

std::string ResponsesStream::start() {
    const json::object pending = pending_response_json(reply_);
    std::string out = event("response.created", {{"response", pending}});
    return out + event("response.in_progress", {{"response", pending}});
}

std::string ResponsesStream::text(std::string_view piece) { return parts_events(parts_.feed(piece)); }

std::string ResponsesStream::parts_events(const ChatReply& parts) {
    std::string out = reasoning_events(parts.reasoning);
    return out + text_events(parts.answer.content);
}

std::string ResponsesStream::reasoning_events(const std::string& text) {
    if (text.empty())
        return {};
    std::string out;
    if (!reasoning_open_) {
        reasoning_open_ = true;
        out = event("response.output_item.added", {{"output_index", output_index_}, {"item", reasoning_item(reply_, "", false)}});
    }
    reasoning_text_ += text;
    return out + event("response.reasoning_text.delta",
                       {{"item_id", reply_.reasoning_id}, {"output_index", output_index_}, {"content_index", 0}, {"delta", text}});
}

std::string ResponsesStream::close_reasoning() {
    if (!reasoning_open_)
        return {};
    std::string out = event("response.reasoning_text.done", {{"item_id", reply_.reasoning_id},
                                                              {"output_index", output_index_},
                                                              {"content_index", 0},
                                                              {"text", reasoning_text_}});
    out += event("response.output_item.done", {{"output_index", output_index_}, {"item", reasoning_item(reply_, reasoning_text_, true)}});
    reasoning_open_ = false;
    ++output_index_;
    return out;
}

std::string ResponsesStream::open_message() {
    std::string out = close_reasoning();
    message_open_ = true;
    out += event("response.output_item.added", {{"output_index", output_index_}, {"item", message_item(reply_, "", false)}});
    return out + event("response.content_part.added", {{"item_id", reply_.message_id},
                                                        {"output_index", output_index_},
                                                        {"content_index", 0},
                                                        {"part", output_text_part("")}});
}

std::string ResponsesStream::text_events(const std::string& text) {
    if (text.empty())
        return {};
    std::string out = message_open_ ? std::string() : open_message();
    message_text_ += text;
    return out + event("response.output_text.delta", {{"item_id", reply_.message_id},
                                                       {"output_index", output_index_},
                                                       {"content_index", 0},
                                                       {"delta", text},
                                                       {"logprobs", json::array{}}});
}

std::string ResponsesStream::close_message() {
    const json::object where{{"item_id", reply_.message_id}, {"output_index", output_index_}, {"content_index", 0}};
    json::object text_done = where, part_done = where;
    text_done["text"] = message_text_;
    text_done["logprobs"] = json::array{};
    part_done["part"] = output_text_part(message_text_);
    std::string out = event("response.output_text.done", std::move(text_done));
    out += event("response.content_part.done", std::move(part_done));
    out += event("response.output_item.done", {{"output_index", output_index_}, {"item", message_item(reply_, message_text_, true)}});
    message_open_ = false;
    ++output_index_;
    return out;
}

std::string ResponsesStream::call_events(const ToolCall& call) {
    const std::string item_id(function_call_item(call, false).at("id").as_string());
    // One statement per event: their sequence numbers follow the order they are sent in.
    std::string out = event("response.output_item.added", {{"output_index", output_index_}, {"item", function_call_item(call, false)}});
    out += event("response.function_call_arguments.delta", {{"item_id", item_id}, {"output_index", output_index_}, {"delta", call.arguments}});
    out += event("response.function_call_arguments.done",
                 {{"item_id", item_id}, {"output_index", output_index_}, {"name", call.name}, {"arguments", call.arguments}});
    out += event("response.output_item.done", {{"output_index", output_index_}, {"item", function_call_item(call, true)}});
    ++output_index_;
    return out;
}

// The rest of the reply and the calls, then the response's end.
std::string ResponsesStream::end(const engine::Result& result) {
    std::string out = parts_events(parts_.finish());
    // The calls as the response object has them (their ids are drawn once).
    const ChatReply whole = parse_output(reply_, result.text);
    if (!message_open_ && has_message(whole.answer))
        out += open_message();
    if (message_open_)
        out += close_message();
    out += close_reasoning();
    for (const ToolCall& call : whole.answer.calls)
        out += call_events(call);
    finished_ = response_json(reply_, result, whole);
    const bool cut = incomplete(result, whole.answer);
    return out + event(cut ? "response.incomplete" : "response.completed", {{"response", finished_}});
}

std::string ResponsesStream::error(const ApiError& error) {
    return event("response.failed", {{"response", failed_response_json(reply_, error)}});
}

}  // namespace strata::daemon
