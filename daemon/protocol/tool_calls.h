// daemon/protocol/tool_calls.h — tool calling, shared by the wire formats (OpenAI's
// /v1/chat/completions, Anthropic's /v1/messages): OpenAI's `tools` and `tool_choice`
// (the other formats build Tool and ToolChoice from their own fields), the tool-call format of the model (read from its chat template:
// what the template tells the model to write), the grammar that makes the output a call
// when tool_choice requires one, the model's output parsed back into calls, and how much of
// a streamed output can go out as content before a call may begin.
// Formats: Hermes/Qwen `<tool_call>{"name":..,"arguments":{..}}</tool_call>` (several
// allowed); Llama 3.x `{"name":..,"parameters":{..}}` (after <|python_tag|> when rendered;
// several separated by ';');
// Mistral `[TOOL_CALLS][{"name":..,"arguments":{..}},..]`; and for any other template a
// generic JSON object or array of objects with name and arguments (or parameters).
// Owns: those shapes. Must not touch: HTTP (openai/http_connection.h), the engine.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/fields.h"

namespace strata::daemon {

enum class ToolFormat { Hermes, Llama3, Mistral, Json };

// The format a chat template asks the model for ("" or a template without tools: Json).
ToolFormat tool_format(std::string_view template_source);
const char* tool_format_name(ToolFormat format);

struct Tool {
    std::string name;
    boost::json::value parameters;  // a JSON Schema (an empty object schema when absent)
};

struct ToolChoice {
    enum Mode { Auto, None, Required, Named } mode = Auto;
    std::string name;  // Named
};

// The request's tools ([{"type":"function","function":{"name","description","parameters"}}])
// and tool_choice ("auto" (default), "none", "required", {"type":"function","function":
// {"name"}}); an empty list when there are none. Throws invalid_params naming the field.
std::vector<Tool> read_tools(const Fields& fields);
ToolChoice read_tool_choice(const Fields& fields, const std::vector<Tool>& tools);

inline constexpr size_t kMaxTools = 128;

// The objects of a request's `tools` list (at most kMaxTools; none when absent), each named
// "tools[i]" in errors. Throws invalid_params naming the field.
std::vector<Fields> tool_entries(const Fields& fields);

// Adds a tool of a request in another wire format (Anthropic's, the Responses API's) to `tools`
// and, in the shape Hugging Face templates expect ({"type":"function","function":{"name",
// "description","parameters"}}), to `template_tools`. Throws invalid_params naming
// `name_field` when another tool has the name.
void add_tool(std::vector<Tool>& tools, boost::json::array& template_tools, const std::string& name,
              const std::string& name_field, const std::string& description, const boost::json::value& schema);

// Grammar text whose every sentence is a call, in `format`, to the named tool or (Required)
// to any of them, its arguments valid against the tool's parameters: one call, or in the
// Mistral list one or (with `parallel`) more.
std::string call_grammar(const std::vector<Tool>& tools, const ToolChoice& choice, ToolFormat format, bool parallel = true);

struct ToolCall {
    std::string id;         // "call_" and 24 hex digits (or the model's own id)
    std::string name;
    std::string arguments;  // a JSON object, serialized
};

struct ParsedReply {
    std::string content;          // the text that is not a call
    std::vector<ToolCall> calls;  // calls to tools of the request, in order
};

// The calls in a model's output; text that is not a call (or a call to an unknown tool, or
// malformed JSON) stays content.
ParsedReply parse_tool_calls(std::string_view text, ToolFormat format, const std::vector<Tool>& tools);

// Tool calling in effect for a chat request: its tools and the model's call format.
struct ToolUse {
    std::vector<Tool> tools;
    ToolFormat format = ToolFormat::Json;
    bool parallel = true;  // parallel_tool_calls: false keeps a reply's first call only
};

// The calls in a reply, as the request allows them.
ParsedReply parse_reply(const ToolUse& use, std::string_view text);

// Of the output so far, how many leading bytes are surely content (a call cannot start in
// them): streamed replies send those and hold the rest until more text or the end.
size_t content_prefix(std::string_view text, ToolFormat format);

}  // namespace strata::daemon
