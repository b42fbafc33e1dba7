// chat/reasoning.cpp — reasoning formats from templates, and the streaming split of a reply
// (see reasoning.h). Must not touch: JSON, wire formats, tokens.
#include "chat/reasoning.h"

#include <algorithm>
#include <array>
#include <utility>

namespace strata::chat {
namespace {

constexpr std::string_view kThinkOpen = "<think>", kThinkClose = "</think>";
constexpr std::string_view kChannel = "<|channel|>", kMessage = "<|message|>";
// What ends a Harmony message (<|call|> and <|return|> also end the reply, and may be cut off
// as end-of-generation tokens); <|start|> begins the next one.
constexpr std::array<std::string_view, 4> kMessageEnds = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};
// A Harmony header longer than this without <|message|> is not one: the text is the answer.
constexpr size_t kMaxHeader = 512;
constexpr std::string_view kSpace = " \t\r\n";

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

std::string_view rstrip(std::string_view s) {
    const size_t last = s.find_last_not_of(kSpace);
    return last == std::string_view::npos ? std::string_view() : s.substr(0, last + 1);
}

// The longest tail of `text` that is the start of one of the tags (held: the tag may follow).
template <typename Tags>
size_t partial_tag(std::string_view text, const Tags& tags) {
    size_t keep = 0;
    for (std::string_view tag : tags)
        for (size_t n = std::min(text.size(), tag.size() - 1); n > keep; --n)
            if (tag.starts_with(text.substr(text.size() - n))) {
                keep = n;
                break;
            }
    return keep;
}

// The first message end in `text`: its offset and length, or npos.
std::pair<size_t, size_t> message_end(std::string_view text) {
    std::pair<size_t, size_t> first{std::string_view::npos, 0};
    for (std::string_view end : kMessageEnds)
        if (const size_t at = text.find(end); at < first.first) first = {at, end.size()};
    return first;
}

// The word of a Harmony header after `key` (up to a space or a tag), or "".
std::string_view header_word(std::string_view header, std::string_view key) {
    const size_t at = header.find(key);
    if (at == std::string_view::npos) return {};
    const std::string_view rest = header.substr(at + key.size());
    return rest.substr(0, rest.find_first_of(" <"));
}

}  // namespace

ReasoningSyntax reasoning_syntax(std::string_view source, std::string_view generation_prompt) {
    if (contains(source, kChannel) && contains(source, kMessage)) return {ReasoningFormat::Harmony, false};
    const bool inside = rstrip(generation_prompt).ends_with(kThinkOpen);
    if (inside || contains(source, kThinkOpen) || contains(source, kThinkClose)) return {ReasoningFormat::ThinkTags, inside};
    return {};
}

const char* reasoning_format_name(ReasoningFormat format) {
    switch (format) {
        case ReasoningFormat::ThinkTags: return "think";
        case ReasoningFormat::Harmony: return "harmony";
        case ReasoningFormat::None: break;
    }
    return "none";
}

void ReplyParts::append(ReplyParts more) {
    reasoning += more.reasoning;
    content += more.content;
    for (ChannelCall& c : more.calls) calls.push_back(std::move(c));
}

ReasoningSplitter::ReasoningSplitter(ReasoningSyntax syntax)
    : format_(syntax.format),
      mode_(syntax.format == ReasoningFormat::Harmony ? Mode::Header : syntax.starts_inside ? Mode::Reasoning : Mode::Content),
      after_tag_(syntax.starts_inside) {}

ReplyParts ReasoningSplitter::feed(std::string_view text) {
    held_ += text;
    return drain(false);
}

ReplyParts ReasoningSplitter::finish() {
    ReplyParts out = drain(true);
    const std::string space = std::exchange(space_, {});
    if (mode_ == Mode::Call) {
        call_.arguments += space;
        out.calls.push_back(std::exchange(call_, {}));
    } else {
        (mode_ == Mode::Reasoning ? out.reasoning : out.content) += space;
    }
    return out;
}

ReplyParts ReasoningSplitter::drain(bool at_end) {
    ReplyParts out;
    if (format_ == ReasoningFormat::None) {
        out.content = std::move(held_);
        held_.clear();
        return out;
    }
    while (format_ == ReasoningFormat::ThinkTags ? step_think(out, at_end) : step_harmony(out, at_end)) {}
    return out;
}

bool ReasoningSplitter::step_think(ReplyParts& out, bool at_end) {
    const bool reasoning = mode_ == Mode::Reasoning;
    const std::string_view tag = reasoning ? kThinkClose : kThinkOpen;
    if (const size_t at = held_.find(tag); at != std::string::npos) {
        emit(out, std::string_view(held_).substr(0, at), true);
        held_.erase(0, at + tag.size());
        begin_segment(reasoning ? Mode::Content : Mode::Reasoning);
        return true;
    }
    const size_t ready = held_.size() - (at_end ? 0 : partial_tag(held_, std::array{tag}));
    emit(out, std::string_view(held_).substr(0, ready), false);
    held_.erase(0, ready);
    return false;
}

bool ReasoningSplitter::step_harmony(ReplyParts& out, bool at_end) {
    if (mode_ == Mode::Header) {
        const size_t at = held_.find(kMessage);
        if (at != std::string::npos) {
            begin_message(std::string_view(held_).substr(0, at));
            held_.erase(0, at + kMessage.size());
            return true;
        }
        if (!at_end && held_.size() <= kMaxHeader) return false;
        begin_segment(Mode::Content);  // not a header: plain text
        after_tag_ = false;
        return true;
    }
    const auto [at, length] = message_end(held_);
    const bool ends = at != std::string::npos;
    const size_t ready = ends ? at : held_.size() - (at_end ? 0 : partial_tag(held_, kMessageEnds));
    emit(out, std::string_view(held_).substr(0, ready), ends);
    held_.erase(0, ends ? at + length : ready);
    if (!ends) return false;
    if (mode_ == Mode::Call) out.calls.push_back(std::exchange(call_, {}));
    mode_ = Mode::Header;
    return true;
}

void ReasoningSplitter::begin_message(std::string_view header) {
    const std::string_view recipient = header_word(header, "to=");
    if (recipient.starts_with("functions.")) {
        call_ = {std::string(recipient.substr(10)), {}};
        begin_segment(Mode::Call);
    } else {
        begin_segment(header_word(header, kChannel) == "analysis" ? Mode::Reasoning : Mode::Content);
    }
}

void ReasoningSplitter::begin_segment(Mode mode) {
    mode_ = mode;
    space_.clear();
    segment_start_ = true;
    after_tag_ = true;
}

// Text of the current segment: leading whitespace after a tag and trailing whitespace before
// one are dropped; trailing whitespace otherwise waits for what follows.
void ReasoningSplitter::emit(ReplyParts& out, std::string_view text, bool before_tag) {
    std::string s = std::exchange(space_, {});
    s += text;
    if (after_tag_ && segment_start_) s.erase(0, std::min(s.size(), s.find_first_not_of(kSpace)));
    const size_t kept = rstrip(s).size();
    if (!before_tag) space_ = s.substr(kept);
    s.resize(kept);
    if (s.empty()) return;
    segment_start_ = false;
    if (mode_ == Mode::Call) call_.arguments += s;
    else (mode_ == Mode::Reasoning ? out.reasoning : out.content) += s;
}

ReplyParts split_reply(std::string_view reply, ReasoningSyntax syntax) {
    ReasoningSplitter splitter(syntax);
    ReplyParts parts = splitter.feed(reply);
    parts.append(splitter.finish());
    return parts;
}

}  // namespace strata::chat
