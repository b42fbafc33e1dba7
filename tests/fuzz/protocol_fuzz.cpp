// tests/fuzz/protocol_fuzz.cpp — libFuzzer target for the daemon's request parsers: the
// protocol sniffer, the JSON-RPC envelope of a native request line (depth-limited JSON,
// UTF-8 checked), and the params of generate, of the OpenAI bodies and of Anthropic's
// /v1/messages bodies and of /v1/responses bodies (tools in two call formats; a
// previous_response_id finds stored items); and the same bytes as a model's reply, parsed for tool calls in every format.
// Every input must either parse or be refused with an ApiError: anything else (a crash,
// another exception, a sanitizer report) is a bug.
#include <boost/json/object.hpp>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "anthropic/messages.h"
#include "openai/openai.h"
#include "protocol/tool_calls.h"
#include "protocol/generate_params.h"
#include "responses/responses.h"
#include "rpc/jsonrpc.h"
#include "transport/sniff.h"

using namespace strata::daemon;

namespace {

RequestContext context() {
    RequestContext c;
    c.uid = 1000;
    return c;
}

template <typename Parse>
void refused_or_parsed(Parse parse) {
    try {
        parse();
    } catch (const ApiError&) {
    }
}

// A stored response's items, for any previous_response_id.
boost::json::array stored_items(const std::string&) {
    return boost::json::array{boost::json::object{{"type", "message"}, {"role", "user"}, {"content", "Hi"}},
                              boost::json::object{{"type", "function_call"}, {"call_id", "c"}, {"name", "f"}, {"arguments", "{}"}}};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    (void)sniff(bytes);
    try {
        const RpcRequest request = parse_request(bytes, 64);
        refused_or_parsed([&] { parse_generate(request.params, context()); });
        refused_or_parsed([&] { parse_openai(OpenAiKind::Completion, request.params, context()); });
        for (ToolFormat format : {ToolFormat::Json, ToolFormat::Hermes}) {
            refused_or_parsed([&] { parse_openai(OpenAiKind::Chat, request.params, context(), format); });
            for (MessagesKind kind : {MessagesKind::Create, MessagesKind::CountTokens})
                refused_or_parsed([&] { parse_messages(kind, request.params, context(), format); });
            refused_or_parsed([&] { parse_responses(request.params, context(), format, "m", stored_items); });
        }
    } catch (const BadRequest&) {
    }
    // The bytes as a model's reply: parsed for tool calls in every format, never failing.
    static const std::vector<Tool> tools = {{"f", boost::json::object{{"type", "object"}}}};
    for (ToolFormat format : {ToolFormat::Hermes, ToolFormat::Llama3, ToolFormat::Mistral, ToolFormat::Json}) {
        (void)parse_tool_calls(bytes, format, tools);
        if (content_prefix(bytes, format) > bytes.size())
            std::abort();
    }
    return 0;
}
