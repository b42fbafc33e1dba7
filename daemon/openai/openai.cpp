// daemon/openai/openai.cpp — OpenAI request and response shapes (see openai.h).
#include "openai/openai.h"

#include <atomic>
#include <ctime>

#include "chat/json_value.h"
#include "grammar/json.h"
#include "protocol/fields.h"
#include "protocol/generate_params.h"
#include "protocol/json_schema.h"
#include "protocol/random_id.h"
#include "protocol/views.h"
#include "sampling/logprobs.h"
#include "utf8/utf8.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

[[noreturn]] void unsupported(const std::string& field, const std::string& what) {
    throw invalid_params(field, what + " is not supported by strata");
}

// Fields of the OpenAI API that strata does not implement, accepted only with their neutral value.
void reject_unsupported(const Fields& fields, OpenAiKind kind) {
    if (fields.integer("best_of", 1, INT32_MAX).value_or(1) != 1)
        unsupported("best_of", "best_of other than 1");
    if (fields.boolean("echo").value_or(false))
        unsupported("echo", "echo");
    if (!fields.string("suffix", SIZE_MAX).value_or("").empty())
        unsupported("suffix", "suffix");
    if (kind == OpenAiKind::Chat) {
        if (const json::value* v = fields.find("functions"); v && !(v->is_array() && v->get_array().empty()))
            unsupported("functions", "functions (the deprecated form of tools)");
        // Other outputs than text, and features that need a service strata is not.
        for (const char* key : {"audio", "prediction", "web_search_options", "function_call"})
            if (fields.find(key) != nullptr)
                unsupported(key, std::string(key));
        if (const auto tier = fields.string("service_tier", 32); tier && *tier != "auto" && *tier != "default")
            unsupported("service_tier", "service_tier \"" + *tier + "\"");
        if (fields.boolean("store").value_or(false))
            unsupported("store", "store (keeping completions for OpenAI's dashboard)");
        if (const json::value* modalities = fields.find("modalities")) {
            const json::array& list = array_value(*modalities, "modalities", 8);
            for (size_t i = 0; i < list.size(); ++i)
                if (string_value(list[i], "modalities[" + std::to_string(i) + "]", 16) != "text")
                    unsupported("modalities[" + std::to_string(i) + "]", "an output modality other than text");
        }
    }
}

// OpenAI's logprobs: chat `logprobs: true` with `top_logprobs` alternatives (0..20);
// completions `logprobs: N` alternatives (OpenAI allows 0..5; strata 0..20). -1: none.
int32_t requested_logprobs(const Fields& fields, OpenAiKind kind) {
    const int64_t most = sampling::kMaxTopLogprobs;
    if (kind == OpenAiKind::Completion)
        return static_cast<int32_t>(fields.integer("logprobs", 0, most).value_or(-1));
    const bool on = fields.boolean("logprobs").value_or(false);
    const auto top = fields.integer("top_logprobs", 0, most);
    if (top && !on)
        throw invalid_params("top_logprobs", "top_logprobs needs logprobs: true");
    return on ? static_cast<int32_t>(top.value_or(0)) : -1;
}

// response_format: "text" (free), "json_object" (any JSON object), "json_schema" (documents
// valid against json_schema.schema); null for free text.
std::shared_ptr<const grammar::Grammar> response_format_grammar(const Fields& fields) {
    const json::value* format = fields.find("response_format");
    if (format == nullptr)
        return nullptr;
    const Fields f(object_value(*format, "response_format"), "response_format");
    const std::string type = f.string("type", 64).value_or("text");
    if (type == "json_object")
        return compile_grammar(grammar::json_object_grammar(), "response_format");
    if (type == "json_schema") {
        const Fields spec(object_value(f.required("json_schema"), "response_format.json_schema"), "response_format.json_schema");
        spec.string("name", 256);
        spec.boolean("strict");
        return compile_grammar(schema_grammar(spec.required("schema"), "response_format.json_schema.schema"), "response_format.json_schema.schema");
    }
    if (type != "text")
        unsupported("response_format.type", "response_format type \"" + type + "\"");
    return nullptr;
}

std::string completion_prompt(const Fields& fields) {
    const json::value* prompt = &fields.required("prompt");
    if (prompt->is_array()) {
        const json::array& items = prompt->get_array();
        if (items.size() != 1)
            unsupported("prompt", "a prompt array with other than one entry");
        return std::string(string_value(items[0], "prompt[0]", SIZE_MAX));
    }
    return std::string(string_value(*prompt, "prompt", SIZE_MAX));
}

const char* object_name(OpenAiKind kind, bool chunk) {
    if (kind == OpenAiKind::Completion)
        return "text_completion";
    return chunk ? "chat.completion.chunk" : "chat.completion";
}

json::object envelope(const OpenAiReply& reply, bool chunk, json::array choices) {
    return {{"id", reply.id},
            {"object", object_name(reply.kind, chunk)},
            {"created", reply.created},
            {"model", reply.model},
            {"system_fingerprint", nullptr},
            {"choices", std::move(choices)}};
}

// The legacy completions shape: parallel lists, alternatives as {token: logprob} objects,
// text_offset the byte offset of each token in the generated text.
json::object completion_logprobs_json(std::span<const engine::TokenLogprobs> tokens) {
    json::array text, logprobs, top, offsets;
    size_t offset = 0;
    for (const engine::TokenLogprobs& t : tokens) {
        text.push_back(json::string(utf8::replace_invalid(t.token.bytes)));
        logprobs.push_back(logprob_value(t.token.logprob));
        json::object alternatives;
        for (const engine::TokenChoice& a : t.top)
            alternatives[utf8::replace_invalid(a.bytes)] = logprob_value(a.logprob);
        top.push_back(std::move(alternatives));
        offsets.push_back(offset);
        offset += t.token.bytes.size();
    }
    return {{"tokens", std::move(text)}, {"token_logprobs", std::move(logprobs)}, {"top_logprobs", std::move(top)},
            {"text_offset", std::move(offsets)}};
}

// A choice's "logprobs": null when none were asked for (or none came with this chunk).
json::value choice_logprobs(OpenAiKind kind, std::span<const engine::TokenLogprobs> tokens) {
    if (tokens.empty())
        return nullptr;
    if (kind == OpenAiKind::Chat)
        return json::object{{"content", logprobs_json(tokens)}, {"refusal", nullptr}};
    return completion_logprobs_json(tokens);
}

// OpenAI's tool_calls list; a streamed delta numbers the calls.
json::array tool_calls_json(const std::vector<ToolCall>& calls, bool streamed) {
    json::array out;
    for (size_t i = 0; i < calls.size(); ++i) {
        json::object call{{"id", calls[i].id}, {"type", "function"},
                          {"function", json::object{{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
        if (streamed)
            call["index"] = i;
        out.push_back(std::move(call));
    }
    return out;
}

// One choice of a streamed chunk: `delta` for chat, `text` for completions.
json::object chunk_choice(OpenAiKind kind, int32_t index, json::object delta, const std::string& text, json::value finish_reason,
                          std::span<const engine::TokenLogprobs> logprobs = {}) {
    if (kind == OpenAiKind::Chat)
        return {{"index", index}, {"delta", std::move(delta)}, {"logprobs", choice_logprobs(kind, logprobs)},
                {"finish_reason", std::move(finish_reason)}};
    return {{"index", index}, {"text", text}, {"logprobs", choice_logprobs(kind, logprobs)}, {"finish_reason", std::move(finish_reason)}};
}

json::object openai_usage(const engine::Usage& usage) {
    return {{"prompt_tokens", usage.prompt_tokens},
            {"completion_tokens", usage.completion_tokens},
            {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
            {"prompt_tokens_details", json::object{{"cached_tokens", usage.cached_tokens}}},
            {"dropped_messages", usage.dropped_messages}};
}

const char* error_type(ErrorKind kind) {
    switch (http_status(kind)) {
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable";
    default: return http_status(kind) >= 500 ? "server_error" : "invalid_request_error";
    }
}


// tools / tool_choice of a chat request: the tools go to the model's template; a required
// or named call constrains the output to one.
void read_tool_use(const Fields& fields, ToolFormat format, OpenAiCall& call) {
    std::vector<Tool> tools = read_tools(fields);
    const ToolChoice choice = read_tool_choice(fields, tools);
    const bool parallel = fields.boolean("parallel_tool_calls").value_or(true);
    if (tools.empty() || choice.mode == ToolChoice::None)
        return;
    call.request.tools = chat::to_value(*fields.find("tools"));
    if (choice.mode == ToolChoice::Required || choice.mode == ToolChoice::Named) {
        if (call.request.grammar)
            throw invalid_params("tool_choice", "a required tool call and response_format exclude each other");
        call.request.grammar = compile_grammar(call_grammar(tools, choice, format, parallel), "tools");
    }
    call.tools = std::make_shared<const ToolUse>(ToolUse{std::move(tools), format, parallel});
}

}  // namespace

OpenAiCall parse_openai(OpenAiKind kind, const json::object& body, const RequestContext& context, ToolFormat format) {
    const Fields fields(body);
    reject_unsupported(fields, kind);
    OpenAiCall call;
    call.kind = kind;
    if (kind == OpenAiKind::Chat) {
        call.request.messages = read_messages(fields.required("messages"), "messages", /*openai=*/true);
    } else {
        call.request.prompt = completion_prompt(fields);
    }
    fields.string("model", 256);  // any model name is accepted: one model is loaded
    call.stream = fields.boolean("stream").value_or(false);
    if (const json::value* options = fields.find("stream_options"))
        call.include_usage =
            Fields(object_value(*options, "stream_options"), "stream_options").boolean("include_usage").value_or(false);
    const bool completion_tokens_key = kind == OpenAiKind::Chat && fields.find("max_completion_tokens") != nullptr;
    read_common_fields(fields, context, completion_tokens_key ? "max_completion_tokens" : "max_tokens", call.request);
    call.request.grammar = response_format_grammar(fields);
    if (kind == OpenAiKind::Chat)
        read_tool_use(fields, format, call);
    call.request.logprobs = requested_logprobs(fields, kind);
    call.n = static_cast<int32_t>(fields.integer("n", 1, kMaxChoices).value_or(1));
    if (call.n > 1 && !call.request.session.empty())
        throw invalid_params("n", "n > 1 needs a request without a session (the choices would all continue it)");
    return call;
}

OpenAiReply new_reply(OpenAiKind kind, const std::string& model) {
    return {kind, std::string(kind == OpenAiKind::Chat ? "chatcmpl-" : "cmpl-") + random_hex(24),
            static_cast<int64_t>(std::time(nullptr)), model};
}

engine::Usage choices_usage(std::span<const engine::Result> results) {
    engine::Usage usage = results.front().usage;
    for (const engine::Result& r : results.subspan(1))
        usage.completion_tokens += r.usage.completion_tokens;
    return usage;
}

json::object response_json(const OpenAiReply& reply, std::span<const engine::Result> results) {
    json::array choices;
    for (size_t i = 0; i < results.size(); ++i) {
        const engine::Result& result = results[i];
        json::object choice{{"index", i}, {"logprobs", choice_logprobs(reply.kind, result.logprobs)}, {"finish_reason", result.finish_reason}};
        if (reply.kind == OpenAiKind::Chat) {
            const ChatReply parsed = parse_chat_reply(result.text, reply.reasoning, reply.tools);
            json::object message{{"role", "assistant"}, {"refusal", nullptr}};
            const ParsedReply& answer = parsed.answer;
            message["content"] = answer.content.empty() && !answer.calls.empty() ? json::value(nullptr) : json::value(answer.content);
            if (!answer.calls.empty())
                message["tool_calls"] = tool_calls_json(answer.calls, false);
            if (!parsed.reasoning.empty())
                message["reasoning_content"] = parsed.reasoning;
            choice["message"] = std::move(message);
            choice["finish_reason"] = finish_reason_of(answer, result.finish_reason);
        } else {
            choice["text"] = result.text;
        }
        choices.push_back(std::move(choice));
    }
    json::object out = envelope(reply, false, std::move(choices));
    out["usage"] = openai_usage(choices_usage(results));
    return out;
}

json::object role_chunk_json(const OpenAiReply& reply, int32_t index) {
    return envelope(reply, true,
                    json::array{chunk_choice(reply.kind, index, {{"role", "assistant"}, {"content", ""}}, "", nullptr)});
}

json::object text_chunk_json(const OpenAiReply& reply, int32_t index, const std::string& text,
                             std::span<const engine::TokenLogprobs> logprobs) {
    return envelope(reply, true, json::array{chunk_choice(reply.kind, index, {{"content", text}}, text, nullptr, logprobs)});
}

json::object reasoning_chunk_json(const OpenAiReply& reply, int32_t index, const std::string& text) {
    return envelope(reply, true, json::array{chunk_choice(reply.kind, index, {{"reasoning_content", text}}, "", nullptr)});
}

json::object final_chunk_json(const OpenAiReply& reply, int32_t index, const std::string& finish_reason,
                              std::span<const engine::TokenLogprobs> logprobs) {
    return envelope(reply, true, json::array{chunk_choice(reply.kind, index, {}, "", json::value(finish_reason), logprobs)});
}

json::object usage_chunk_json(const OpenAiReply& reply, const engine::Usage& usage) {
    json::object out = envelope(reply, true, json::array{});
    out["usage"] = openai_usage(usage);
    return out;
}

json::object tool_calls_chunk_json(const OpenAiReply& reply, int32_t index, const std::vector<ToolCall>& calls) {
    return envelope(reply, true, json::array{chunk_choice(reply.kind, index, {{"tool_calls", tool_calls_json(calls, true)}}, "", nullptr)});
}

std::string finish_reason_of(const ParsedReply& parsed, const std::string& finish_reason) {
    return parsed.calls.empty() ? finish_reason : "tool_calls";
}

json::object error_json(const ApiError& error) {
    json::object body{{"message", error.what()}, {"type", error_type(error.kind())}, {"code", type_name(error.kind())}};
    body["param"] = error.field().empty() ? json::value(nullptr) : json::value(error.field());
    return {{"error", std::move(body)}};
}

json::object model_json(const std::string& model, int64_t created) {
    return {{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "strata"}};
}

json::object models_json(const std::string& model, int64_t created) {
    return {{"object", "list"}, {"data", json::array{model_json(model, created)}}};
}

}  // namespace strata::daemon
