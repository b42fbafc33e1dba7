// chat/chat.cpp — the variables and globals of Hugging Face's apply_chat_template.
// Must not touch: JSON libraries, tokenizing, GGUF files.
#include "chat/chat.h"

namespace strata::chat {

std::tm parse_date(std::string_view text) {
    std::tm tm{};
    const std::string s(text);
    const char* end = strptime(s.c_str(), "%d %b %Y", &tm);
    if (end == nullptr || *end != '\0') throw TemplateError("date \"" + s + "\" is not of the form \"26 Jul 2024\"");
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_isdst = -1;
    std::tm copy = tm;
    if (timegm(&copy) == -1) throw TemplateError("date \"" + s + "\" is out of range");
    tm.tm_wday = copy.tm_wday;
    tm.tm_yday = copy.tm_yday;
    return tm;
}

std::tm today() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    return tm;
}

std::string apply_chat_template(const Template& tmpl, const ChatInput& input, const RenderLimits& limits) {
    Dict vars = input.extra;
    vars.set("messages", input.messages);
    vars.set("tools", input.tools);
    vars.set("documents", Value::none());
    vars.set("add_generation_prompt", Value(input.add_generation_prompt));
    vars.set("bos_token", Value(input.bos_token));
    vars.set("eos_token", Value(input.eos_token));
    vars.set("raise_exception", Value::function("raise_exception", [](CallArgs& a) -> Value {
                 throw TemplateRaised(a.positional.empty() ? "" : to_str(a.positional[0]));
             }));
    const std::tm date = input.date;
    vars.set("strftime_now", Value::function("strftime_now", [date](CallArgs& a) -> Value {
                 const auto fmt = a.get(0, "format");
                 if (!fmt || !fmt->is_string()) throw TemplateError("strftime_now expects a format string");
                 char buf[512];
                 const size_t n = std::strftime(buf, sizeof buf, fmt->as_string().c_str(), &date);
                 if (n == 0 && !fmt->as_string().empty()) throw TemplateError("strftime_now: the formatted date is too long");
                 return Value(std::string(buf, n));
             }));
    return tmpl.render(vars, limits);
}

}  // namespace strata::chat
