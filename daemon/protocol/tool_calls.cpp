// daemon/protocol/tool_calls.cpp — tools, tool_choice, call formats, grammars and parsing (see tool_calls.h).
#include "protocol/tool_calls.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/stream_parser.hpp>
#include <boost/json/serialize.hpp>

#include "protocol/errors.h"
#include "protocol/json_schema.h"
#include "protocol/random_id.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

constexpr std::string_view kHermesOpen = "<tool_call>", kHermesClose = "</tool_call>";
constexpr std::string_view kMistralTag = "[TOOL_CALLS]", kPythonTag = "<|python_tag|>";

// The key a format writes the arguments under.
const char* arguments_key(ToolFormat format) { return format == ToolFormat::Llama3 ? "parameters" : "arguments"; }

std::string call_id() { return "call_" + random_hex(24); }

std::string_view trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

const Tool* find_tool(const std::vector<Tool>& tools, std::string_view name) {
    for (const Tool& t : tools)
        if (t.name == name) return &t;
    return nullptr;
}

// One call object {"name", "arguments"|"parameters", "id"?} naming a known tool.
std::optional<ToolCall> call_of(const json::value& v, const std::vector<Tool>& tools) {
    if (!v.is_object()) return std::nullopt;
    const json::object& o = v.get_object();
    const json::value* name = o.if_contains("name");
    if (name == nullptr || !name->is_string() || find_tool(tools, name->get_string()) == nullptr) return std::nullopt;
    const json::value* args = o.if_contains("arguments");
    if (args == nullptr) args = o.if_contains("parameters");
    json::value arguments = args ? *args : json::object{};
    if (arguments.is_string()) {  // arguments given as a JSON string
        boost::system::error_code ec;
        json::value inner = json::parse(arguments.get_string(), ec);
        if (ec) return std::nullopt;
        arguments = std::move(inner);
    }
    if (!arguments.is_object()) return std::nullopt;
    const json::value* id = o.if_contains("id");
    return ToolCall{id && id->is_string() && !id->get_string().empty() ? std::string(id->get_string()) : call_id(),
                    std::string(name->get_string()), json::serialize(arguments)};
}

// JSON documents, one after another (separated by spaces or ';', as Llama 3.x writes several
// calls), each one call or an array of calls; empty when the text is anything else.
std::vector<ToolCall> calls_in_json(std::string_view text, const std::vector<Tool>& tools) {
    std::vector<ToolCall> calls;
    json::stream_parser parser;
    for (std::string_view rest = text; !rest.empty();) {
        boost::system::error_code ec;
        parser.reset();
        const size_t used = parser.write_some(rest.data(), rest.size(), ec);
        if (ec || !parser.done()) return {};
        const json::value doc = parser.release();
        const json::array items = doc.is_array() ? doc.get_array() : json::array{doc};
        for (const json::value& item : items) {
            auto call = call_of(item, tools);
            if (!call) return {};
            calls.push_back(std::move(*call));
        }
        rest = trim(rest.substr(used));
        if (rest.starts_with(';')) rest = trim(rest.substr(1));
    }
    return calls;
}

ParsedReply parse_hermes(std::string_view text, const std::vector<Tool>& tools) {
    ParsedReply out;
    size_t at = 0;
    while (at < text.size()) {
        const size_t open = text.find(kHermesOpen, at);
        if (open == std::string_view::npos) break;
        const size_t body = open + kHermesOpen.size();
        const size_t close = text.find(kHermesClose, body);
        const std::string_view inner = text.substr(body, close == std::string_view::npos ? std::string_view::npos : close - body);
        auto calls = calls_in_json(trim(inner), tools);
        if (calls.empty()) break;  // not a call: the rest is content
        out.content += text.substr(at, open - at);
        for (auto& c : calls) out.calls.push_back(std::move(c));
        at = close == std::string_view::npos ? text.size() : close + kHermesClose.size();
    }
    out.content += text.substr(std::min(at, text.size()));
    if (!out.calls.empty()) out.content = std::string(trim(out.content));
    return out;
}

}  // namespace

ToolFormat tool_format(std::string_view source) {
    if (source.find(kHermesOpen) != std::string_view::npos) return ToolFormat::Hermes;
    if (source.find(kMistralTag) != std::string_view::npos) return ToolFormat::Mistral;
    if (source.find(kPythonTag) != std::string_view::npos || source.find("ipython") != std::string_view::npos) return ToolFormat::Llama3;
    return ToolFormat::Json;
}

const char* tool_format_name(ToolFormat format) {
    switch (format) {
        case ToolFormat::Hermes: return "hermes";
        case ToolFormat::Llama3: return "llama3";
        case ToolFormat::Mistral: return "mistral";
        case ToolFormat::Json: return "json";
    }
    return "json";
}

std::vector<Fields> tool_entries(const Fields& fields) {
    std::vector<Fields> entries;
    const json::value* list = fields.find("tools");
    if (list == nullptr) return entries;
    const json::array& items = array_value(*list, "tools", kMaxTools);
    for (size_t i = 0; i < items.size(); ++i) {
        const std::string field = "tools[" + std::to_string(i) + "]";
        entries.emplace_back(object_value(items[i], field), field);
    }
    return entries;
}

std::vector<Tool> read_tools(const Fields& fields) {
    std::vector<Tool> tools;
    for (const Fields& tool : tool_entries(fields)) {
        if (tool.string("type", 32).value_or("function") != "function")
            throw invalid_params(tool.name("type"), tool.name("type") + " must be \"function\"");
        const Fields f(object_value(tool.required("function"), tool.name("function")), tool.name("function"));
        const auto name = f.string("name", 64);
        if (!name || name->empty()) throw invalid_params(f.name("name"), f.name("name") + " is missing");
        if (find_tool(tools, *name)) throw invalid_params(f.name("name"), "two tools are named \"" + *name + "\"");
        f.string("description", SIZE_MAX);
        const json::value* parameters = f.find("parameters");
        if (parameters) object_value(*parameters, f.name("parameters"));
        tools.push_back({*name, parameters ? *parameters : json::value(json::object{{"type", "object"}})});
    }
    return tools;
}

ToolChoice read_tool_choice(const Fields& fields, const std::vector<Tool>& tools) {
    const json::value* v = fields.find("tool_choice");
    ToolChoice choice;
    if (v == nullptr) return choice;
    if (v->is_string()) {
        const std::string_view mode = v->get_string();
        if (mode == "auto") choice.mode = ToolChoice::Auto;
        else if (mode == "none") choice.mode = ToolChoice::None;
        else if (mode == "required") choice.mode = ToolChoice::Required;
        else throw invalid_params("tool_choice", "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\":\"function\",\"function\":{\"name\":...}}");
    } else {
        const Fields named(object_value(*v, "tool_choice"), "tool_choice");
        const auto name = Fields(object_value(named.required("function"), "tool_choice.function"), "tool_choice.function").string("name", 64);
        if (!name || !find_tool(tools, *name))
            throw invalid_params("tool_choice.function.name", "tool_choice.function.name must name one of the tools");
        choice = {ToolChoice::Named, *name};
    }
    if (tools.empty() && (choice.mode == ToolChoice::Required || choice.mode == ToolChoice::Named))
        throw invalid_params("tool_choice", "tool_choice requires a call, but the request has no tools");
    return choice;
}

std::string call_grammar(const std::vector<Tool>& tools, const ToolChoice& choice, ToolFormat format, bool parallel) {
    json::array calls;
    for (const Tool& t : tools) {
        if (choice.mode == ToolChoice::Named && t.name != choice.name) continue;
        calls.push_back(json::object{{"type", "object"},
                                     {"properties", json::object{{"name", json::object{{"const", t.name}}}, {arguments_key(format), t.parameters}}},
                                     {"required", json::array{"name", arguments_key(format)}},
                                     {"additionalProperties", false}});
    }
    const json::value call = calls.size() == 1 ? calls[0] : json::value(json::object{{"anyOf", calls}});
    switch (format) {
        case ToolFormat::Hermes: return schema_grammar(call, "tools", std::string(kHermesOpen) + "\n", "\n" + std::string(kHermesClose));
        case ToolFormat::Mistral:
        {
            json::object array{{"type", "array"}, {"items", call}, {"minItems", 1}};
            if (!parallel)
                array["maxItems"] = 1;
            return schema_grammar(array, "tools");
        }
        default: return schema_grammar(call, "tools");
    }
}

ParsedReply parse_tool_calls(std::string_view text, ToolFormat format, const std::vector<Tool>& tools) {
    if (format == ToolFormat::Hermes) return parse_hermes(text, tools);
    std::string_view body = trim(text);
    for (std::string_view tag : {kPythonTag, kMistralTag})
        if (body.starts_with(tag)) body = trim(body.substr(tag.size()));
    std::vector<ToolCall> calls = calls_in_json(body, tools);
    if (calls.empty()) return {std::string(text), {}};
    return {"", std::move(calls)};
}

ParsedReply parse_reply(const ToolUse& use, std::string_view text) {
    ParsedReply parsed = parse_tool_calls(text, use.format, use.tools);
    if (!use.parallel && parsed.calls.size() > 1)
        parsed.calls.resize(1);
    return parsed;
}

void add_tool(std::vector<Tool>& tools, json::array& template_tools, const std::string& name, const std::string& name_field,
              const std::string& description, const json::value& schema) {
    if (std::any_of(tools.begin(), tools.end(), [&](const Tool& t) { return t.name == name; }))
        throw invalid_params(name_field, "two tools are named \"" + name + "\"");
    tools.push_back({name, schema});
    template_tools.push_back(json::object{
        {"type", "function"},
        {"function", json::object{{"name", name}, {"description", description}, {"parameters", schema}}}});
}

size_t content_prefix(std::string_view text, ToolFormat format) {
    if (format == ToolFormat::Hermes) {
        if (const size_t open = text.find(kHermesOpen); open != std::string_view::npos) return open;
        // a tail that may be the start of the tag is held back
        for (size_t keep = std::min(text.size(), kHermesOpen.size() - 1); keep > 0; --keep)
            if (kHermesOpen.starts_with(text.substr(text.size() - keep))) return text.size() - keep;
        return text.size();
    }
    // The other formats are a whole reply: held while it may still become one.
    const std::string_view body = trim(text);
    if (body.empty()) return 0;
    const bool may_be_call = body.front() == '{' || body.front() == '[' || kPythonTag.starts_with(body.substr(0, kPythonTag.size())) ||
                             kMistralTag.starts_with(body.substr(0, kMistralTag.size()));
    return may_be_call ? 0 : text.size();
}

}  // namespace strata::daemon
