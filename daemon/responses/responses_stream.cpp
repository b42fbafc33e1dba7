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

std::string ResponsesStream::text(std::string_view piece) {
    if (!reply_.tools)
        return text_events(std::string(piece));
    return text_events(held_.add(piece, reply_.tools->format));
}

std::string ResponsesStream::open_message() {
    message_open_ = true;
    std::string out = event("response.output_item.added", {{"output_index", output_index_}, {"item", message_item(reply_, "", false)}});
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

// The held text and the calls, then the response's end.
std::string ResponsesStream::end(const engine::Result& result) {
    const ParsedReply rest = parse_output(reply_, held_.rest());
    std::string out = reply_.tools ? text_events(rest.content) : std::string();
    // A `reasoning` item's events go before the message once thinking is split (issue 53, item 3).
    const ParsedReply whole = parse_output(reply_, result.text);
    if (!message_open_ && has_message(whole))
        out += open_message();
    if (message_open_)
        out += close_message();
    for (const ToolCall& call : whole.calls)
        out += call_events(call);
    finished_ = response_json(reply_, result, whole);
    const bool cut = incomplete(result, whole);
    return out + event(cut ? "response.incomplete" : "response.completed", {{"response", finished_}});
}

std::string ResponsesStream::error(const ApiError& error) {
    return event("response.failed", {{"response", failed_response_json(reply_, error)}});
}

}  // namespace strata::daemon
