// chat/reasoning.h — how a model's reply separates its thinking from its answer, read from its
// chat template, and the splitter that takes a reply apart as it is generated.
// Formats: `<think>…</think>` (Qwen3/3.5, DeepSeek-R1 distills; a template whose generation
// prompt already opens the block makes the reply start inside thinking), and Harmony's
// channels (gpt-oss: `<|channel|>analysis<|message|>…<|end|>` is thinking, `final` the answer,
// `commentary` text too, and a `commentary` message to `functions.NAME` a tool call whose
// arguments are the message).
// Owns: those formats and their streaming split (tags cut across pieces of text are held
// until they are whole). Must not touch: JSON, wire formats (daemon/), tokens, templates'
// rendering (the caller gives the rendered generation prompt).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::chat {

enum class ReasoningFormat { None, ThinkTags, Harmony };

struct ReasoningSyntax {
    ReasoningFormat format = ReasoningFormat::None;
    bool starts_inside = false;  // ThinkTags: the generation prompt left a <think> block open
};

// The syntax of a template (its source, "" if it has none) whose generation prompt for one
// user message renders as `generation_prompt` (a built-in family's rendering when the model
// has no template).
ReasoningSyntax reasoning_syntax(std::string_view template_source, std::string_view generation_prompt);
const char* reasoning_format_name(ReasoningFormat format);  // "none", "think", "harmony"

// A Harmony tool call: a commentary message addressed to functions.NAME.
struct ChannelCall {
    std::string name;
    std::string arguments;  // the message as the model wrote it (JSON text)
};

// What of a reply can be handed on: new thinking text, new answer text, finished calls.
struct ReplyParts {
    std::string reasoning;
    std::string content;
    std::vector<ChannelCall> calls;
    void append(ReplyParts more);
};

// Splits one reply fed piece by piece. Thinking and answer are trimmed where they meet a tag
// (the newlines around <think> and </think>); text that may still become a tag is held.
class ReasoningSplitter {
public:
    explicit ReasoningSplitter(ReasoningSyntax syntax);
    ReplyParts feed(std::string_view text);  // the parts that are certain so far
    ReplyParts finish();                     // the end of the reply: what was held

private:
    enum class Mode { Content, Reasoning, Header, Call };
    ReplyParts drain(bool at_end);
    // One tag or run of text; false: wait for more text.
    bool step_think(ReplyParts& out, bool at_end);
    bool step_harmony(ReplyParts& out, bool at_end);
    void begin_message(std::string_view header);
    void begin_segment(Mode mode);
    void emit(ReplyParts& out, std::string_view text, bool before_tag);

    ReasoningFormat format_;
    Mode mode_;
    std::string held_;        // text not handed on yet
    std::string space_;       // trailing whitespace of the current segment, held
    bool segment_start_ = true;  // the current segment has had no text yet
    bool after_tag_ = false;     // the current segment follows a tag: its leading whitespace goes
    ChannelCall call_;
};

// A whole reply taken apart.
ReplyParts split_reply(std::string_view reply, ReasoningSyntax syntax);

}  // namespace strata::chat
