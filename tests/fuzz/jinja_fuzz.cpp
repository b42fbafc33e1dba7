// tests/fuzz/jinja_fuzz.cpp — libFuzzer target for the chat template interpreter: the input
// is template text, parsed and rendered (small bounds) for a conversation with a system
// message, two turns, a tool call and tools. Crashes, sanitizer reports and hangs are
// findings; TemplateError (syntax errors, raise_exception, exceeded bounds) is not.
#include <cstdint>
#include <string_view>

#include "chat/chat.h"

using namespace strata::chat;

namespace {

Value message(const char* role, Value content) {
    Dict d;
    d.set("role", Value(role));
    d.set("content", std::move(content));
    return Value(std::move(d));
}

const ChatInput& input() {
    static const ChatInput in = [] {
        ChatInput c;
        Dict call, function, args;
        args.set("city", Value("Paris"));
        function.set("name", Value("get_weather"));
        function.set("arguments", Value(std::move(args)));
        call.set("id", Value("call12345"));
        call.set("function", Value(function));
        Value assistant = message("assistant", Value::none());
        Dict with_call = assistant.as_dict();
        with_call.set("tool_calls", Value(List{Value(std::move(call))}));
        c.messages = Value(List{message("system", Value("Be brief.")), message("user", Value("Hi é 🙂")), Value(std::move(with_call)),
                                message("tool", Value("{\"t\": 21}")), message("user", Value("  Thanks\n"))});
        Dict tool;
        tool.set("type", Value("function"));
        tool.set("function", Value(std::move(function)));
        c.tools = Value(List{Value(std::move(tool))});
        c.bos_token = "<s>";
        c.eos_token = "</s>";
        c.date = parse_date("26 Jul 2024");
        return c;
    }();
    return in;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    RenderLimits limits;
    limits.max_output = 1 << 16;
    limits.max_steps = 20000;
    limits.max_call_depth = 16;
    try {
        const Template t(std::string_view(reinterpret_cast<const char*>(data), size));
        apply_chat_template(t, input(), limits);
    } catch (const TemplateError&) {
    }
    return 0;
}
