// daemon/responses/responses.cpp — Responses API request and response shapes (see responses.h).
#include "responses/responses.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "chat/json_value.h"
#include "grammar/json.h"
#include "protocol/fields.h"
#include "protocol/json_schema.h"
#include "protocol/json_text.h"
#include "protocol/random_id.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

constexpr unsigned kMaxArgumentsDepth = 64;  // of a function_call item's arguments

[[noreturn]] void unsupported(const std::string& field, const std::string& what) {
    throw invalid_params(field, what + " is not supported by strata");
}

std::string index_field(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

// A string, or a list of text parts (input_text, output_text) joined.
std::string text_of(const json::value& value, const std::string& field) {
    if (value.is_string())
        return std::string(value.get_string());
    const json::array& parts = array_value(value, field, SIZE_MAX);
    std::string text;
    for (size_t i = 0; i < parts.size(); ++i) {
        const Fields part(object_value(parts[i], index_field(field, i)), index_field(field, i));
        const std::string type(string_value(part.required("type"), part.name("type"), 64));
        if (type != "input_text" && type != "output_text")
            unsupported(part.name("type"), "a \"" + type + "\" content part (only input_text and output_text)");
        text += string_value(part.required("text"), part.name("text"), SIZE_MAX);
    }
    return text;
}

// The conversation read from items: function_call items join the assistant turn before them
// (or make one).
class Conversation {
public:
    void add(engine::Message message) {
        flush_calls();
        messages_.push_back(std::move(message));
    }
    void add_call(chat::Value call) { calls_.push_back(std::move(call)); }
    std::vector<engine::Message> take() {
        flush_calls();
        return std::move(messages_);
    }

private:
    void flush_calls() {
        if (calls_.empty())
            return;
        if (messages_.empty() || messages_.back().role != "assistant" || !messages_.back().tool_calls.is_none())
            messages_.push_back({"assistant", ""});
        messages_.back().tool_calls = chat::Value(std::exchange(calls_, {}));
    }

    std::vector<engine::Message> messages_;
    chat::List calls_;
};

void read_message(const Fields& item, Conversation& out) {
    std::string role(string_value(item.required("role"), item.name("role"), 32));
    if (role == "developer")
        role = "system";
    if (role != "user" && role != "assistant" && role != "system")
        throw invalid_params(item.name("role"), item.name("role") + " must be \"user\", \"assistant\", \"system\" or \"developer\"");
    out.add({role, text_of(item.required("content"), item.name("content"))});
}

void read_function_call(const Fields& item, Conversation& out) {
    const std::string call_id(string_value(item.required("call_id"), item.name("call_id"), 256));
    const std::string name(string_value(item.required("name"), item.name("name"), 256));
    const std::string field = item.name("arguments");
    json::value arguments;
    try {
        arguments = parse_json_text(string_value(item.required("arguments"), field, SIZE_MAX), kMaxArgumentsDepth, field);
    } catch (const ApiError& error) {
        throw invalid_params(field, error.what());
    }
    if (!arguments.is_object())
        throw invalid_params(field, field + " must be a JSON object (as text)");
    out.add_call(tool_call_value(call_id, name, arguments));
}

void read_function_call_output(const Fields& item, Conversation& out) {
    engine::Message m{"tool", text_of(item.required("output"), item.name("output"))};
    m.tool_call_id = std::string(string_value(item.required("call_id"), item.name("call_id"), 256));
    out.add(std::move(m));
}

// Items: messages (type "message" or absent), function_call, function_call_output; reasoning
// items are left out of the prompt.
void read_items(const json::array& items, const std::string& field, Conversation& out) {
    for (size_t i = 0; i < items.size(); ++i) {
        const Fields item(object_value(items[i], index_field(field, i)), index_field(field, i));
        const std::string type = item.string("type", 64).value_or("message");
        if (type == "message")
            read_message(item, out);
        else if (type == "function_call")
            read_function_call(item, out);
        else if (type == "function_call_output")
            read_function_call_output(item, out);
        else if (type != "reasoning")
            unsupported(item.name("type"), "an input item of type \"" + type + "\"");
    }
}

// `input` as items: a string is one user message.
json::array input_items(const json::value& input) {
    if (input.is_string())
        return json::array{json::object{{"type", "message"}, {"role", "user"}, {"content", input}}};
    return array_value(input, "input", SIZE_MAX);
}

// Fields that need what strata is not (a service, other modalities), accepted only with their
// neutral value.
void reject_unsupported(const Fields& fields) {
    for (const char* key : {"conversation", "prompt"})
        if (fields.find(key) != nullptr)
            unsupported(key, key);
    if (fields.boolean("background").value_or(false))
        unsupported("background", "background: true");
    if (fields.integer("top_logprobs", 0, 20).value_or(0) != 0)
        unsupported("top_logprobs", "top_logprobs");
    if (const auto tier = fields.string("service_tier", 32); tier && *tier != "auto" && *tier != "default")
        unsupported("service_tier", "service_tier \"" + *tier + "\"");
    if (const auto truncation = fields.string("truncation", 32); truncation && *truncation != "disabled" && *truncation != "auto")
        throw invalid_params("truncation", "truncation must be \"disabled\" or \"auto\"");
}

// tools: function tools {type: "function", name, description, parameters, strict}.
std::vector<Tool> read_function_tools(const Fields& fields, json::array& template_tools) {
    std::vector<Tool> tools;
    for (const Fields& tool : tool_entries(fields)) {
        if (const std::string type(string_value(tool.required("type"), tool.name("type"), 64)); type != "function")
            unsupported(tool.name("type"), "the tool type \"" + type + "\" (only function tools)");
        const std::string name(string_value(tool.required("name"), tool.name("name"), 128));
        const json::value* given = tool.find("parameters");
        const json::value schema = given ? json::value(object_value(*given, tool.name("parameters")))
                                         : json::value(json::object{{"type", "object"}, {"properties", json::object{}}});
        tool.boolean("strict");
        add_tool(tools, template_tools, name, tool.name("name"), tool.string("description", SIZE_MAX).value_or(""), schema);
    }
    return tools;
}

// tool_choice: "auto" (default), "none", "required", or {type: "function", name}.
ToolChoice read_responses_tool_choice(const Fields& fields, const std::vector<Tool>& tools) {
    const json::value* value = fields.find("tool_choice");
    if (value == nullptr)
        return {};
    ToolChoice choice;
    if (value->is_string()) {
        const std::string mode(value->get_string());
        if (mode == "none")
            choice.mode = ToolChoice::None;
        else if (mode == "required")
            choice.mode = ToolChoice::Required;
        else if (mode != "auto")
            throw invalid_params("tool_choice", "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"name\"}");
    } else {
        const Fields f(object_value(*value, "tool_choice"), "tool_choice");
        if (const std::string type(string_value(f.required("type"), "tool_choice.type", 64)); type != "function")
            unsupported("tool_choice.type", "tool_choice of type \"" + type + "\"");
        choice = {ToolChoice::Named, std::string(string_value(f.required("name"), "tool_choice.name", 128))};
        if (std::none_of(tools.begin(), tools.end(), [&](const Tool& t) { return t.name == choice.name; }))
            throw invalid_params("tool_choice.name", "tool_choice.name must name one of the tools");
    }
    if (tools.empty() && (choice.mode == ToolChoice::Required || choice.mode == ToolChoice::Named))
        throw invalid_params("tool_choice", "tool_choice requires a call, but the request has no tools");
    return choice;
}

// text.format: text (free), json_object (any JSON object), json_schema (documents valid
// against its schema).
std::shared_ptr<const grammar::Grammar> text_format_grammar(const Fields& fields) {
    const json::value* text = fields.find("text");
    if (text == nullptr)
        return nullptr;
    const Fields t(object_value(*text, "text"), "text");
    const json::value* format = t.find("format");
    if (format == nullptr)
        return nullptr;
    const Fields f(object_value(*format, "text.format"), "text.format");
    const std::string type(string_value(f.required("type"), "text.format.type", 64));
    if (type == "json_object")
        return compile_grammar(grammar::json_object_grammar(), "text.format");
    if (type == "json_schema") {
        f.string("name", 256);
        f.boolean("strict");
        return compile_grammar(schema_grammar(f.required("schema"), "text.format.schema"), "text.format.schema");
    }
    if (type != "text")
        unsupported("text.format.type", "text.format type \"" + type + "\"");
    return nullptr;
}

void read_tool_use(const Fields& fields, ToolFormat format, ResponsesCall& call) {
    json::array template_tools;
    std::vector<Tool> tools = read_function_tools(fields, template_tools);
    const ToolChoice choice = read_responses_tool_choice(fields, tools);
    const bool parallel = fields.boolean("parallel_tool_calls").value_or(true);
    fields.integer("max_tool_calls", 1, INT32_MAX);
    if (tools.empty() || choice.mode == ToolChoice::None)
        return;
    call.request.tools = chat::to_value(template_tools);
    if (choice.mode == ToolChoice::Required || choice.mode == ToolChoice::Named) {
        if (call.request.grammar)
            throw invalid_params("tool_choice", "a required tool call and text.format exclude each other");
        call.request.grammar = compile_grammar(call_grammar(tools, choice, format, parallel), "tools");
    }
    call.reply.tools = std::make_shared<const ToolUse>(ToolUse{std::move(tools), format, parallel});
}

// A sampling parameter (a float) as the decimal it was given as.
double decimal(float value) { return std::round(static_cast<double>(value) * 1e6) / 1e6; }

json::value field_or(const Fields& fields, std::string_view key, json::value fallback) {
    const json::value* value = fields.find(key);
    return value ? *value : fallback;
}

// The request fields a response object repeats.
json::object echo_fields(const Fields& fields, const engine::GenerateRequest& request) {
    return {{"instructions", field_or(fields, "instructions", nullptr)},
            {"max_output_tokens", field_or(fields, "max_output_tokens", nullptr)},
            {"previous_response_id", field_or(fields, "previous_response_id", nullptr)},
            {"temperature", decimal(request.sampling.temperature)},
            {"top_p", decimal(request.sampling.top_p)},
            {"tool_choice", field_or(fields, "tool_choice", "auto")},
            {"tools", field_or(fields, "tools", json::array{})},
            {"text", field_or(fields, "text", json::object{{"format", json::object{{"type", "text"}}}})},
            {"parallel_tool_calls", fields.boolean("parallel_tool_calls").value_or(true)},
            {"metadata", field_or(fields, "metadata", json::object{})},
            {"truncation", field_or(fields, "truncation", "disabled")},
            {"reasoning", field_or(fields, "reasoning", nullptr)},
            {"user", field_or(fields, "user", nullptr)}};
}

// instructions, then the stored conversation of previous_response_id, then the input.
void read_conversation(const Fields& fields, const FindPrevious& previous, ResponsesCall& call) {
    if (const auto id = fields.string("previous_response_id", 256)) {
        if (fields.find("session") != nullptr)
            throw invalid_params("session", "a session and previous_response_id exclude each other");
        call.reply.context = previous(*id);
    }
    const size_t stored = call.reply.context.size();
    for (json::value& item : input_items(fields.required("input")))
        call.reply.context.push_back(std::move(item));
    Conversation conversation;
    if (const auto instructions = fields.string("instructions", SIZE_MAX))
        conversation.add({"system", *instructions});
    read_items(json::array(call.reply.context.begin(), call.reply.context.begin() + static_cast<ptrdiff_t>(stored)),
               "previous_response_id", conversation);
    read_items(json::array(call.reply.context.begin() + static_cast<ptrdiff_t>(stored), call.reply.context.end()),
               "input", conversation);
    call.request.messages = conversation.take();
    if (call.request.messages.empty())
        throw invalid_params("input", "input must not be empty");
}

json::object response_base(const ResponsesReply& reply, std::string_view status) {
    json::object out{{"id", reply.id},
                     {"object", "response"},
                     {"created_at", reply.created_at},
                     {"status", status},
                     {"background", false},
                     {"error", nullptr},
                     {"incomplete_details", nullptr},
                     {"model", reply.model},
                     {"output", json::array{}},
                     {"store", reply.store},
                     {"usage", nullptr}};
    for (const auto& member : reply.echo)
        out[member.key()] = member.value();
    return out;
}

}  // namespace

// reasoning.effort reaches the template as reasoning_effort, as chat completions' field does.
void read_reasoning_effort(const Fields& fields, engine::GenerateRequest& request) {
    const json::value* reasoning = fields.find("reasoning");
    const json::value* effort = reasoning && reasoning->is_object() ? reasoning->as_object().if_contains("effort") : nullptr;
    if (effort && effort->is_string())
        request.template_variables.set(chat::Value(std::string("reasoning_effort")), chat::Value(std::string(effort->as_string())));
}

ResponsesCall parse_responses(const json::object& body, const RequestContext& context, ToolFormat format,
                              const std::string& model, const FindPrevious& previous) {
    const Fields fields(body);
    reject_unsupported(fields);
    ResponsesCall call;
    read_conversation(fields, previous, call);
    read_common_fields(fields, context, "max_output_tokens", call.request);
    read_reasoning_effort(fields, call.request);
    // Absent, the output may be as long as limits.max_tokens allows (OpenAI's has no default
    // cap; an agent's turn cut short fails).
    call.request.max_tokens = static_cast<int32_t>(
        fields.integer("max_output_tokens", 1, context.limits.max_tokens).value_or(context.limits.max_tokens));
    call.request.grammar = text_format_grammar(fields);
    read_tool_use(fields, format, call);
    call.stream = fields.boolean("stream").value_or(false);
    call.reply.id = "resp_" + random_hex(32);
    call.reply.message_id = "msg_" + random_hex(32);
    call.reply.reasoning_id = "rs_" + random_hex(32);
    call.reply.created_at = static_cast<int64_t>(std::time(nullptr));
    call.reply.model = fields.string("model", 256).value_or(model);
    call.reply.store = fields.boolean("store").value_or(true);
    call.reply.echo = echo_fields(fields, call.request);
    return call;
}

ChatReply parse_output(const ResponsesReply& reply, std::string_view text) {
    return parse_chat_reply(text, reply.reasoning, reply.tools);
}

json::object responses_usage(const engine::Usage& usage) {
    return {{"input_tokens", usage.prompt_tokens},
            {"input_tokens_details", json::object{{"cached_tokens", usage.cached_tokens}}},
            {"output_tokens", usage.completion_tokens},
            {"output_tokens_details", json::object{{"reasoning_tokens", 0}}},
            {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

json::object output_text_part(const std::string& text) {
    return {{"type", "output_text"}, {"text", text}, {"annotations", json::array{}}, {"logprobs", json::array{}}};
}

json::object message_item(const ResponsesReply& reply, const std::string& text, bool done) {
    return {{"type", "message"},
            {"id", reply.message_id},
            {"status", done ? "completed" : "in_progress"},
            {"role", "assistant"},
            {"content", done ? json::array{output_text_part(text)} : json::array{}}};
}

json::object reasoning_item(const ResponsesReply& reply, const std::string& text, bool done) {
    json::array content;
    if (done)
        content.push_back(json::object{{"type", "reasoning_text"}, {"text", text}});
    return {{"type", "reasoning"}, {"id", reply.reasoning_id}, {"summary", json::array{}}, {"content", std::move(content)}};
}

// "call_..." ids name the item "fc_...".
json::object function_call_item(const ToolCall& call, bool done) {
    constexpr std::string_view kCall = "call_";
    return {{"type", "function_call"},
            {"id", "fc_" + (call.id.starts_with(kCall) ? call.id.substr(kCall.size()) : call.id)},
            {"call_id", call.id},
            {"name", call.name},
            {"arguments", done ? call.arguments : std::string()},
            {"status", done ? "completed" : "in_progress"}};
}

bool has_message(const ParsedReply& parsed) { return !parsed.content.empty() || parsed.calls.empty(); }

bool incomplete(const engine::Result& result, const ParsedReply& parsed) {
    return parsed.calls.empty() && (result.finish_reason == "length" || result.finish_reason == "timeout");
}

json::object pending_response_json(const ResponsesReply& reply) { return response_base(reply, "in_progress"); }

json::object response_json(const ResponsesReply& reply, const engine::Result& result, const ChatReply& whole) {
    const ParsedReply& parsed = whole.answer;
    json::array output;
    if (!whole.reasoning.empty())
        output.push_back(reasoning_item(reply, whole.reasoning, true));
    if (has_message(parsed))
        output.push_back(message_item(reply, parsed.content, true));
    for (const ToolCall& call : parsed.calls)
        output.push_back(function_call_item(call, true));
    const bool cut = incomplete(result, parsed);
    json::object out = response_base(reply, cut ? "incomplete" : "completed");
    if (cut)
        out["incomplete_details"] = json::object{{"reason", "max_output_tokens"}};
    out["output"] = std::move(output);
    out["usage"] = responses_usage(result.usage);
    return out;
}

json::object failed_response_json(const ResponsesReply& reply, const ApiError& error) {
    json::object out = response_base(reply, "failed");
    out["error"] = json::object{{"code", type_name(error.kind())}, {"message", error.what()}};
    return out;
}

json::object deleted_response_json(const std::string& id) {
    return {{"id", id}, {"object", "response"}, {"deleted", true}};
}

}  // namespace strata::daemon
