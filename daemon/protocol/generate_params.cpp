// daemon/protocol/generate_params.cpp — generation request fields → engine::GenerateRequest (see
// generate_params.h).
#include "protocol/generate_params.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "chat/json_value.h"
#include "protocol/errors.h"
#include "protocol/json_text.h"
#include "protocol/json_schema.h"
#include "sampling/logprobs.h"
#include "sampling/params.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

// A double as float, saturating to ±infinity instead of overflowing (sampling::validate
// then reports the field as out of range).
float to_float(double value) {
    if (value > FLT_MAX)
        return std::numeric_limits<float>::infinity();
    if (value < -FLT_MAX)
        return -std::numeric_limits<float>::infinity();
    return static_cast<float>(value);
}

void read_float(const Fields& fields, std::string_view key, float& target) {
    if (const auto v = fields.number(key))
        target = to_float(*v);
}

void read_int32(const Fields& fields, std::string_view key, int32_t& target) {
    if (const auto v = fields.integer(key, INT32_MIN, INT32_MAX))
        target = static_cast<int32_t>(*v);
}

// A bias: a number, or false / "-inf" / "-infinity" for a banned token.
float bias_value(const json::value& value, const std::string& field) {
    if (value.is_bool() && !value.get_bool())
        return -std::numeric_limits<float>::infinity();
    if (value.is_string()) {
        const std::string_view text = value.get_string();
        if (text == "-inf" || text == "-infinity" || text == "-Infinity")
            return -std::numeric_limits<float>::infinity();
        throw invalid_params(field, field + " must be a number, false or \"-inf\"");
    }
    return to_float(number_value(value, field));
}

int32_t token_key(std::string_view key, const std::string& field) {
    int64_t id = 0;
    if (key.empty() || key.size() > 10)
        throw invalid_params(field, field + ": the key must be a token id");
    for (const char c : key) {
        if (c < '0' || c > '9')
            throw invalid_params(field, field + ": the key must be a token id");
        id = id * 10 + (c - '0');
    }
    if (id > INT32_MAX)
        throw invalid_params(field, field + ": token id " + std::string(key) + " is out of range");
    return static_cast<int32_t>(id);
}

std::vector<sampling::LogitBias> read_logit_bias(const json::value& value, const std::string& field) {
    std::vector<sampling::LogitBias> biases;
    if (value.is_object()) {
        for (const auto& member : value.get_object()) {
            const std::string entry = field + "." + std::string(member.key());
            biases.push_back({token_key(member.key(), entry), bias_value(member.value(), entry)});
        }
        return biases;
    }
    const json::array& pairs = array_value(value, field, sampling::kMaxLogitBiasEntries);
    for (size_t i = 0; i < pairs.size(); ++i) {
        const std::string entry = field + "[" + std::to_string(i) + "]";
        const json::array& pair = array_value(pairs[i], entry, 2);
        if (pair.size() != 2)
            throw invalid_params(entry, entry + " must be a [token id, bias] pair");
        biases.push_back({static_cast<int32_t>(integer_value(pair[0], entry + "[0]", 0, INT32_MAX)),
                          bias_value(pair[1], entry + "[1]")});
    }
    return biases;
}

sampling::SamplingParams read_sampling(const Fields& fields) {
    sampling::SamplingParams params;
    read_float(fields, "temperature", params.temperature);
    read_int32(fields, "top_k", params.top_k);
    read_float(fields, "top_p", params.top_p);
    read_float(fields, "min_p", params.min_p);
    read_float(fields, "typical_p", params.typical_p);
    read_float(fields, "repeat_penalty", params.repeat_penalty);
    read_float(fields, "frequency_penalty", params.frequency_penalty);
    read_float(fields, "presence_penalty", params.presence_penalty);
    read_int32(fields, "penalty_last_n", params.penalty_last_n);
    read_int32(fields, "min_keep", params.min_keep);
    if (const auto seed = fields.unsigned64("seed"))
        params.seed = *seed;
    else
        params.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
    if (const json::value* bias = fields.find("logit_bias"))
        params.logit_bias = read_logit_bias(*bias, fields.name("logit_bias"));
    return params;
}

std::vector<std::string> read_stop(const json::value& value, const std::string& field) {
    if (value.is_string())
        return {std::string(value.get_string())};
    std::vector<std::string> stops;
    const json::array& items = array_value(value, field, SIZE_MAX);
    for (size_t i = 0; i < items.size(); ++i)
        stops.emplace_back(string_value(items[i], field + "[" + std::to_string(i) + "]", SIZE_MAX));
    return stops;
}

// OpenAI content parts: [{"type":"text","text":"..."}] joined.
std::string content_parts(const json::array& parts, const std::string& field) {
    std::string text;
    for (size_t i = 0; i < parts.size(); ++i) {
        const std::string part_field = field + "[" + std::to_string(i) + "]";
        const Fields part(object_value(parts[i], part_field), part_field);
        if (part.string("type", 16).value_or("") != "text")
            throw invalid_params(part_field + ".type", part_field + ".type must be \"text\" (only text is supported)");
        text += part.string("text", SIZE_MAX).value_or("");
    }
    return text;
}

// The engine checks the role; OpenAI's "developer" is the system role.
std::string role_of(const Fields& message, bool openai) {
    const std::string role(string_value(message.required("role"), message.name("role"), SIZE_MAX));
    return openai && role == "developer" ? "system" : role;
}

// An assistant turn's OpenAI tool_calls as a chat template sees them: the arguments (a JSON
// string in OpenAI's API) parsed into an object, as Hugging Face templates expect.
chat::Value read_tool_calls(const json::value& value, const std::string& field) {
    const json::array& items = array_value(value, field, 128);
    chat::List calls;
    for (size_t i = 0; i < items.size(); ++i) {
        const std::string item_field = field + "[" + std::to_string(i) + "]";
        const Fields call(object_value(items[i], item_field), item_field);
        const Fields f(object_value(call.required("function"), call.name("function")), call.name("function"));
        const std::string name(string_value(f.required("name"), f.name("name"), 256));
        const std::string arguments_text = f.string("arguments", SIZE_MAX).value_or("{}");
        json::value arguments;
        try {
            arguments = parse_json_text(arguments_text, 64, f.name("arguments"));
        } catch (const ApiError& e) {
            throw invalid_params(f.name("arguments"), f.name("arguments") + " must be a JSON object in a string: " + e.what());
        }
        calls.push_back(tool_call_value(call.string("id", 256).value_or(""), name, arguments));
    }
    return chat::Value(std::move(calls));
}

}  // namespace

chat::Value tool_call_value(const std::string& id, const std::string& name, const json::value& arguments) {
    chat::Dict fn;
    fn.set("name", chat::Value(name));
    fn.set("arguments", chat::to_value(arguments));
    chat::Dict d;
    d.set("id", chat::Value(id));
    d.set("type", chat::Value(std::string("function")));
    d.set("function", chat::Value(std::move(fn)));
    return chat::Value(std::move(d));
}

// A request's own deadline: seconds (fractions allowed) after it is accepted, more than 0
// and at most 30 days; at least 1 ms.
std::chrono::milliseconds request_timeout(double seconds, const std::string& field) {
    constexpr double kMaxSeconds = 30.0 * 86400;
    if (!(seconds > 0) || seconds > kMaxSeconds)
        throw invalid_params(field, field + " must be a number of seconds above 0 and at most 2592000 (30 days)");
    return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(seconds * 1000))));
}

std::shared_ptr<const grammar::Grammar> compile_grammar(std::string_view text, const std::string& field) {
    try {
        return std::make_shared<const grammar::Grammar>(grammar::Grammar::parse(text));
    } catch (const grammar::GrammarError& e) {
        throw invalid_params(field, field + ": " + e.what());
    }
}

std::string session_name(const json::value& value, const std::string& field) {
    return std::string(string_value(value, field, SIZE_MAX));
}

std::vector<engine::Message> read_messages(const json::value& value, const std::string& field, bool openai) {
    const json::array& items = array_value(value, field, SIZE_MAX);
    if (items.empty())
        throw invalid_params(field, field + " must not be empty");
    std::vector<engine::Message> messages;
    for (size_t i = 0; i < items.size(); ++i) {
        const std::string item_field = field + "[" + std::to_string(i) + "]";
        const Fields message(object_value(items[i], item_field), item_field);
        const std::string role = role_of(message, openai);
        const json::value* content = message.find("content");
        const json::value* calls = openai ? message.find("tool_calls") : nullptr;
        if (content == nullptr && calls == nullptr)
            throw invalid_params(message.name("content"), message.name("content") + " is missing");
        engine::Message m{role, ""};
        if (content != nullptr && openai && content->is_array())
            m.content = content_parts(content->get_array(), message.name("content"));
        else if (content != nullptr)
            m.content = std::string(string_value(*content, message.name("content"), SIZE_MAX));
        if (calls != nullptr)
            m.tool_calls = read_tool_calls(*calls, message.name("tool_calls"));
        if (openai && role == "tool") {
            m.tool_call_id = message.string("tool_call_id", 256).value_or("");
            if (m.tool_call_id.empty())
                throw invalid_params(message.name("tool_call_id"), message.name("tool_call_id") + " is missing");
        }
        messages.push_back(std::move(m));
    }
    return messages;
}

void read_template_variables(const Fields& fields, engine::GenerateRequest& request) {
    if (const json::value* kwargs = fields.find("chat_template_kwargs"))
        for (const auto& [key, value] : object_value(*kwargs, "chat_template_kwargs"))
            request.template_variables.set(chat::Value(std::string(key)), chat::to_value(value));
    if (const auto effort = fields.string("reasoning_effort", 32))
        request.template_variables.set(chat::Value(std::string("reasoning_effort")), chat::Value(*effort));
}

void read_common_fields(const Fields& fields, const RequestContext& context, std::string_view max_tokens_key,
                        engine::GenerateRequest& request) {
    request.uid = context.uid;
    if (const json::value* session = fields.find("session"))
        request.session = session_name(*session, fields.name("session"));
    request.max_tokens = static_cast<int32_t>(
        fields.integer(max_tokens_key, INT32_MIN, INT32_MAX).value_or(context.limits.default_max_tokens));
    request.sampling = read_sampling(fields);
    if (const json::value* stop = fields.find("stop"))
        request.stop = read_stop(*stop, fields.name("stop"));
    request.chat_template = fields.string("chat_template", SIZE_MAX).value_or("");
    read_template_variables(fields, request);
    request.ignore_eos = fields.boolean("ignore_eos").value_or(false);
    if (const auto mode = fields.string("speculative", 16)) {
        request.speculative = engine::speculative_from_name(*mode);
        if (!request.speculative)
            throw invalid_params(fields.name("speculative"), fields.name("speculative") + " must be off, ngram, draft or auto");
    }
    if (const auto seconds = fields.number("timeout"))
        request.timeout = request_timeout(*seconds, fields.name("timeout"));
}

GenerateCall parse_generate(const json::object& params, const RequestContext& context) {
    const Fields fields(params);
    fields.allow_only({"session", "prompt", "messages", "stream", "max_tokens", "temperature", "top_k", "top_p",
                       "min_p", "typical_p", "repeat_penalty", "frequency_penalty", "presence_penalty",
                       "penalty_last_n", "min_keep", "seed", "logit_bias", "stop", "chat_template", "ignore_eos", "grammar", "json_schema",
                       "timeout", "logprobs", "chat_template_kwargs", "reasoning_effort", "speculative"});
    GenerateCall call;
    call.request.logprobs = static_cast<int32_t>(fields.integer("logprobs", 0, sampling::kMaxTopLogprobs).value_or(-1));
    const json::value* schema = fields.find("json_schema");
    if (const auto grammar = fields.string("grammar", SIZE_MAX)) {
        if (schema != nullptr)
            throw invalid_params("json_schema", "give grammar or json_schema, not both");
        call.request.grammar = compile_grammar(*grammar, "grammar");
    }
    if (schema != nullptr)
        call.request.grammar = compile_grammar(schema_grammar(*schema, "json_schema"), "json_schema");
    const json::value* messages = fields.find("messages");
    call.request.prompt = fields.string("prompt", SIZE_MAX);
    if (call.request.prompt.has_value() == (messages != nullptr))
        throw invalid_params("prompt", "exactly one of prompt and messages must be given");
    if (messages != nullptr)
        call.request.messages = read_messages(*messages, "messages", /*openai=*/false);
    call.stream = fields.boolean("stream").value_or(true);
    read_common_fields(fields, context, "max_tokens", call.request);
    return call;
}

}  // namespace strata::daemon
