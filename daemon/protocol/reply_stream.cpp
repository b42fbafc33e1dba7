// daemon/protocol/reply_stream.cpp — thinking, answer and calls of a chat reply (see reply_stream.h).
#include "protocol/reply_stream.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "protocol/random_id.h"

namespace strata::daemon {
namespace {

// Harmony calls to tools of the request with a JSON object as arguments; others stay text.
void add_channel_calls(std::vector<chat::ChannelCall>& calls, const ToolUse* tools, ParsedReply& answer) {
    for (chat::ChannelCall& c : calls) {
        const bool known = tools && std::any_of(tools->tools.begin(), tools->tools.end(), [&](const Tool& t) { return t.name == c.name; });
        boost::system::error_code ec;
        const boost::json::value arguments = boost::json::parse(c.arguments, ec);
        if (known && !ec && arguments.is_object())
            answer.calls.push_back({"call_" + random_hex(24), std::move(c.name), boost::json::serialize(arguments)});
        else
            answer.content += c.arguments;
    }
    if (tools && !tools->parallel && answer.calls.size() > 1)
        answer.calls.resize(1);
}

}  // namespace

ReplyStream::ReplyStream(chat::ReasoningSyntax syntax, std::shared_ptr<const ToolUse> tools)
    : splitter_(syntax), tools_(std::move(tools)) {}

ChatReply ReplyStream::feed(std::string_view text) {
    chat::ReplyParts parts = splitter_.feed(text);
    for (chat::ChannelCall& c : parts.calls) channel_calls_.push_back(std::move(c));
    content_ += parts.content;
    return {std::move(parts.reasoning), {content_ready(), {}}};
}

std::string ReplyStream::content_ready() {
    const size_t ready = tools_ ? content_prefix(content_, tools_->format) : content_.size();
    std::string out = ready > sent_ ? content_.substr(sent_, ready - sent_) : std::string();
    sent_ = std::max(sent_, ready);
    return out;
}

ChatReply ReplyStream::finish() {
    chat::ReplyParts parts = splitter_.finish();
    for (chat::ChannelCall& c : parts.calls) channel_calls_.push_back(std::move(c));
    content_ += parts.content;
    ChatReply out{std::move(parts.reasoning), {}};
    const std::string_view rest = std::string_view(content_).substr(std::min(sent_, content_.size()));
    out.answer = tools_ ? parse_reply(*tools_, rest) : ParsedReply{std::string(rest), {}};
    sent_ = content_.size();
    add_channel_calls(channel_calls_, tools_.get(), out.answer);
    channel_calls_.clear();
    return out;
}

ChatReply parse_chat_reply(std::string_view text, chat::ReasoningSyntax syntax, std::shared_ptr<const ToolUse> tools) {
    chat::ReplyParts parts = chat::split_reply(text, syntax);
    ChatReply out{std::move(parts.reasoning), tools ? parse_reply(*tools, parts.content) : ParsedReply{std::move(parts.content), {}}};
    add_channel_calls(parts.calls, tools.get(), out.answer);
    return out;
}

}  // namespace strata::daemon
