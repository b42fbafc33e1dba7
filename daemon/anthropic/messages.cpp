// daemon/anthropic/messages.cpp — Anthropic Messages request and response shapes (see messages.h).
#include "anthropic/messages.h"

#include <algorithm>
#include <boost/json/parse.hpp>

#include "chat/json_value.h"
#include "protocol/fields.h"
#include "protocol/random_id.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

constexpr std::string_view kBlockSeparator = "\n\n";  // between the text blocks of one turn

[[noreturn]] void unsupported(const std::string& field, const std::string& what) {
    throw invalid_params(field, what + " is not supported by strata");
}

std::string index_field(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

std::string block_type(const Fields& block) {
    return std::string(string_value(block.required("type"), block.name("type"), 64));
}

void append_text(std::string& text, std::string_view more) {
    if (!text.empty())
        text += kBlockSeparator;
    text += more;
}

// A string, or a list of text blocks joined.
std::string text_of(const json::value& value, const std::string& field) {
    if (value.is_string())
        return std::string(value.get_string());
    const json::array& blocks = array_value(value, field, SIZE_MAX);
    std::string text;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const Fields block(object_value(blocks[i], index_field(field, i)), index_field(field, i));
        if (const std::string type = block_type(block); type != "text")
            unsupported(block.name("type"), "a \"" + type + "\" block here (only text)");
        append_text(text, string_value(block.required("text"), block.name("text"), SIZE_MAX));
    }
    return text;
}

// A tool_result block: a tool turn answering the call tool_use_id.
engine::Message tool_result(const Fields& block) {
    engine::Message m{"tool", ""};
    m.tool_call_id = std::string(string_value(block.required("tool_use_id"), block.name("tool_use_id"), 256));
    if (const json::value* content = block.find("content"))
        m.content = text_of(*content, block.name("content"));
    if (block.boolean("is_error").value_or(false))
        m.content = "Error: " + m.content;
    return m;
}

// A user turn's blocks: its text as a user message, each tool_result as a tool message, in order.
void read_user_blocks(const json::array& blocks, const std::string& field, std::vector<engine::Message>& out) {
    std::string text;
    bool any = false;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const Fields block(object_value(blocks[i], index_field(field, i)), index_field(field, i));
        const std::string type = block_type(block);
        if (type == "text") {
            append_text(text, string_value(block.required("text"), block.name("text"), SIZE_MAX));
        } else if (type == "tool_result") {
            if (!text.empty())
                out.push_back({"user", std::exchange(text, {})});
            out.push_back(tool_result(block));
            any = true;
        } else {
            unsupported(block.name("type"), "a \"" + type + "\" block in a user turn");
        }
    }
    if (!text.empty() || !any)
        out.push_back({"user", text});
}

// An assistant turn's blocks: text and tool_use calls; thinking blocks are left out.
engine::Message read_assistant_blocks(const json::array& blocks, const std::string& field) {
    engine::Message m{"assistant", ""};
    chat::List calls;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const Fields block(object_value(blocks[i], index_field(field, i)), index_field(field, i));
        const std::string type = block_type(block);
        if (type == "text") {
            append_text(m.content, string_value(block.required("text"), block.name("text"), SIZE_MAX));
        } else if (type == "tool_use") {
            const std::string id(string_value(block.required("id"), block.name("id"), 256));
            const std::string name(string_value(block.required("name"), block.name("name"), 256));
            calls.push_back(tool_call_value(id, name, json::value(object_value(block.required("input"), block.name("input")))));
        } else if (type != "thinking" && type != "redacted_thinking") {
            unsupported(block.name("type"), "a \"" + type + "\" block in an assistant turn");
        }
    }
    if (!calls.empty())
        m.tool_calls = chat::Value(std::move(calls));
    return m;
}

// system (a string or text blocks) first, then each turn; role "system" is also accepted in
// messages (Claude Code sends one mid-conversation).
std::vector<engine::Message> read_conversation(const Fields& fields) {
    std::vector<engine::Message> out;
    if (const json::value* system = fields.find("system"))
        out.push_back({"system", text_of(*system, "system")});
    const json::array& items = array_value(fields.required("messages"), "messages", SIZE_MAX);
    if (items.empty())
        throw invalid_params("messages", "messages must not be empty");
    for (size_t i = 0; i < items.size(); ++i) {
        const std::string field = index_field("messages", i);
        const Fields message(object_value(items[i], field), field);
        const std::string role(string_value(message.required("role"), message.name("role"), 32));
        const json::value& content = message.required("content");
        if (role != "user" && role != "assistant" && role != "system")
            throw invalid_params(message.name("role"), message.name("role") + " must be \"user\" or \"assistant\"");
        if (content.is_string() || role == "system")
            out.push_back({role, text_of(content, message.name("content"))});
        else if (role == "user")
            read_user_blocks(array_value(content, message.name("content"), SIZE_MAX), message.name("content"), out);
        else
            out.push_back(read_assistant_blocks(array_value(content, message.name("content"), SIZE_MAX), message.name("content")));
    }
    return out;
}

// tools: custom tools {name, description, input_schema}.
std::vector<Tool> read_tools(const Fields& fields, json::array& template_tools) {
    std::vector<Tool> tools;
    for (const Fields& tool : tool_entries(fields)) {
        if (const auto type = tool.string("type", 64).value_or("custom"); type != "custom")
            unsupported(tool.name("type"), "the server tool \"" + type + "\"");
        const std::string name = tool.string("name", 128).value_or("");
        if (name.empty())
            throw invalid_params(tool.name("name"), tool.name("name") + " is missing");
        const json::object& schema = object_value(tool.required("input_schema"), tool.name("input_schema"));
        add_tool(tools, template_tools, name, tool.name("name"), tool.string("description", SIZE_MAX).value_or(""), schema);
    }
    return tools;
}

// tool_choice {type: auto | any | tool (with name) | none, disable_parallel_tool_use}.
ToolChoice read_tool_choice(const Fields& fields, const std::vector<Tool>& tools, bool& parallel) {
    const json::value* value = fields.find("tool_choice");
    if (value == nullptr)
        return {};
    const Fields f(object_value(*value, "tool_choice"), "tool_choice");
    parallel = !f.boolean("disable_parallel_tool_use").value_or(false);
    const std::string type(string_value(f.required("type"), "tool_choice.type", 32));
    ToolChoice choice;
    if (type == "none") {
        choice.mode = ToolChoice::None;
    } else if (type == "any") {
        choice.mode = ToolChoice::Required;
    } else if (type == "tool") {
        choice = {ToolChoice::Named, f.string("name", 128).value_or("")};
        if (std::none_of(tools.begin(), tools.end(), [&](const Tool& t) { return t.name == choice.name; }))
            throw invalid_params("tool_choice.name", "tool_choice.name must name one of the tools");
    } else if (type != "auto") {
        throw invalid_params("tool_choice.type", "tool_choice.type must be \"auto\", \"any\", \"tool\" or \"none\"");
    }
    if (tools.empty() && (choice.mode == ToolChoice::Required || choice.mode == ToolChoice::Named))
        throw invalid_params("tool_choice", "tool_choice requires a call, but the request has no tools");
    return choice;
}

// The tools go to the template; any / tool constrain the output to a call.
void read_tool_use(const Fields& fields, ToolFormat format, MessagesCall& call) {
    json::array template_tools;
    std::vector<Tool> tools = read_tools(fields, template_tools);
    bool parallel = true;
    const ToolChoice choice = read_tool_choice(fields, tools, parallel);
    if (tools.empty() || choice.mode == ToolChoice::None)
        return;
    call.request.tools = chat::to_value(template_tools);
    if (choice.mode == ToolChoice::Required || choice.mode == ToolChoice::Named)
        call.request.grammar = compile_grammar(call_grammar(tools, choice, format, parallel), "tools");
    call.tools = std::make_shared<const ToolUse>(ToolUse{std::move(tools), format, parallel});
}

// thinking {type: disabled | enabled | adaptive, display}: disabled turns the template's
// thinking off (enable_thinking false); display "omitted" leaves thinking blocks out of the reply.
void read_thinking(const Fields& fields, MessagesCall& call) {
    const json::value* value = fields.find("thinking");
    if (value == nullptr)
        return;
    const Fields f(object_value(*value, "thinking"), "thinking");
    const std::string type(string_value(f.required("type"), "thinking.type", 32));
    if (type != "disabled" && type != "enabled" && type != "adaptive")
        throw invalid_params("thinking.type", "thinking.type must be \"disabled\", \"enabled\" or \"adaptive\"");
    const std::string display = f.string("display", 32).value_or("summarized");
    if (display != "summarized" && display != "omitted")
        throw invalid_params("thinking.display", "thinking.display must be \"summarized\" or \"omitted\"");
    if (type == "disabled")
        call.request.template_variables.set(chat::Value(std::string("enable_thinking")), chat::Value(false));
    call.show_thinking = type != "disabled" && display != "omitted";
}

std::vector<std::string> read_stop_sequences(const Fields& fields) {
    std::vector<std::string> stops;
    if (const json::value* list = fields.find("stop_sequences")) {
        const json::array& items = array_value(*list, "stop_sequences", SIZE_MAX);
        for (size_t i = 0; i < items.size(); ++i)
            stops.emplace_back(string_value(items[i], index_field("stop_sequences", i), SIZE_MAX));
    }
    return stops;
}

// The stop sequence that ended a result: the generated tokens (their log-probabilities were
// asked for) go on past the text with it.
json::value matched_stop(const std::vector<std::string>& stops, const engine::Result& result) {
    std::string generated;
    for (const engine::TokenLogprobs& token : result.logprobs)
        generated += token.token.bytes;
    size_t best = std::string::npos;
    json::value matched = nullptr;
    for (const std::string& stop : stops)
        if (const size_t at = generated.find(stop, result.text.size()); at < best) {
            best = at;
            matched = json::string(stop);
        }
    return matched;
}

// "call_..." ids become Anthropic's "toolu_...".
std::string tool_use_id(const std::string& id) {
    constexpr std::string_view kCall = "call_";
    return id.starts_with(kCall) ? "toolu_" + id.substr(kCall.size()) : id;
}

const char* error_type(unsigned status) {
    switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 429: return "rate_limit_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
    }
}

}  // namespace

MessagesCall parse_messages(MessagesKind kind, const json::object& body, const RequestContext& context, ToolFormat format) {
    const Fields fields(body);
    for (const char* key : {"container", "mcp_servers"})
        if (fields.find(key) != nullptr)
            unsupported(key, key);
    MessagesCall call;
    call.kind = kind;
    call.model = std::string(string_value(fields.required("model"), "model", 256));
    call.request.messages = read_conversation(fields);
    read_common_fields(fields, context, "max_tokens", call.request);
    if (kind == MessagesKind::CountTokens)
        call.request.max_tokens = 1;
    else
        call.request.max_tokens = std::min<int32_t>(
            static_cast<int32_t>(integer_value(fields.required("max_tokens"), "max_tokens", 1, INT32_MAX)),
            context.limits.max_tokens);
    call.stop_sequences = read_stop_sequences(fields);
    call.request.stop.insert(call.request.stop.end(), call.stop_sequences.begin(), call.stop_sequences.end());
    if (!call.stop_sequences.empty())
        call.request.logprobs = 0;  // to tell which one matched
    read_tool_use(fields, format, call);
    read_thinking(fields, call);
    call.stream = kind == MessagesKind::Create && fields.boolean("stream").value_or(false);
    return call;
}

MessagesReply new_messages_reply(const MessagesCall& call) {
    return {"msg_" + random_hex(24), call.model, call.tools, call.stop_sequences, call.reasoning, call.show_thinking};
}

json::object thinking_block(const std::string& thinking) {
    return {{"type", "thinking"}, {"thinking", thinking}, {"signature", ""}};
}

StopReason stop_reason(const MessagesReply& reply, const engine::Result& result, const ParsedReply& parsed) {
    if (!parsed.calls.empty())
        return {"tool_use", nullptr};
    if (result.finish_reason == "length" || result.finish_reason == "timeout")
        return {"max_tokens", nullptr};
    if (result.finish_reason == "stop")
        if (json::value sequence = matched_stop(reply.stop_sequences, result); !sequence.is_null())
            return {"stop_sequence", std::move(sequence)};
    return {"end_turn", nullptr};
}

json::object tool_use_block(const ToolCall& call, bool with_input) {
    return {{"type", "tool_use"},
            {"id", tool_use_id(call.id)},
            {"name", call.name},
            {"input", with_input ? json::parse(call.arguments) : json::object{}}};
}

json::object messages_usage(const engine::Usage& usage) {
    return {{"input_tokens", usage.prompt_tokens - usage.cached_tokens},
            {"output_tokens", usage.completion_tokens},
            {"cache_creation_input_tokens", 0},
            {"cache_read_input_tokens", usage.cached_tokens}};
}

json::object message_json(const MessagesReply& reply, const engine::Result& result) {
    const ChatReply reply_parts = parse_chat_reply(result.text, reply.reasoning, reply.tools);
    const ParsedReply& parsed = reply_parts.answer;
    json::array content;
    if (reply.show_thinking && !reply_parts.reasoning.empty())
        content.push_back(thinking_block(reply_parts.reasoning));
    if (!parsed.content.empty())
        content.push_back(json::object{{"type", "text"}, {"text", parsed.content}});
    for (const ToolCall& call : parsed.calls)
        content.push_back(tool_use_block(call, true));
    StopReason stop = stop_reason(reply, result, parsed);
    return {{"id", reply.id},
            {"type", "message"},
            {"role", "assistant"},
            {"model", reply.model},
            {"content", std::move(content)},
            {"stop_reason", stop.reason},
            {"stop_sequence", std::move(stop.sequence)},
            {"usage", messages_usage(result.usage)}};
}

json::object count_tokens_json(const engine::Result& result) {
    return {{"input_tokens", result.usage.prompt_tokens}};
}

unsigned messages_status(ErrorKind kind) {
    const unsigned status = http_status(kind);
    return status == 503 ? 529 : status;
}

json::object messages_error_json(const ApiError& error) {
    std::string message = error.what();
    if (!error.field().empty() && message.find(error.field()) == std::string::npos)
        message = error.field() + ": " + message;
    return {{"type", "error"},
            {"error", json::object{{"type", error_type(messages_status(error.kind()))}, {"message", message}}}};
}

}  // namespace strata::daemon
