// client/strata/prompt.cpp — prompt assembly and generate params.
#include "prompt.h"

#include <boost/json/array.hpp>
#include <cstdio>
#include <stdexcept>

#include "utf8/utf8.h"

namespace strata::client {

namespace json = boost::json;

std::string assemble_prompt(const std::vector<std::string>& words, const std::optional<std::string>& piped) {
    std::string prompt;
    for (const std::string& w : words) {
        if (!prompt.empty()) prompt += ' ';
        prompt += w;
    }
    std::string tail = piped.value_or("");
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
    if (!prompt.empty() && !tail.empty()) prompt += "\n\n";
    prompt += tail;
    if (prompt.empty()) throw UsageError("no prompt: give it as arguments or on standard input");
    return prompt;
}

bool use_chat(const Options& options, const std::string& chat_template) {
    return !options.raw && !chat_template.empty();
}

namespace {

json::object message(const char* role, const std::string& content) {
    return {{"role", role}, {"content", content}};
}

void add_sampling(json::object& params, const Sampling& s) {
    if (s.max_tokens) params["max_tokens"] = *s.max_tokens;
    if (s.temperature) params["temperature"] = *s.temperature;
    if (s.top_k) params["top_k"] = *s.top_k;
    if (s.top_p) params["top_p"] = *s.top_p;
    if (s.min_p) params["min_p"] = *s.min_p;
    if (s.repeat_penalty) params["repeat_penalty"] = *s.repeat_penalty;
    if (s.seed) params["seed"] = *s.seed;
    if (!s.stop.empty()) params["stop"] = json::array(s.stop.begin(), s.stop.end());
    if (s.speculative) params["speculative"] = *s.speculative;
}

}  // namespace

std::string as_text(std::string bytes, Encoding encoding, const std::string& where) {
    if (encoding == Encoding::Latin1) return utf8::from_latin1(bytes);
    const auto bad = utf8::first_invalid(bytes);
    if (!bad) return bytes;
    if (encoding == Encoding::Replace) return utf8::replace_invalid(bytes);
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(bytes[*bad])));
    throw std::runtime_error(where + " is not valid UTF-8: byte " + byte + " at offset " + std::to_string(*bad) +
                             "; if it is Latin-1 text use --encoding latin1, or --encoding replace to replace "
                             "invalid bytes with U+FFFD");
}

Options with_text(Options options) {
    for (size_t i = 0; i < options.words.size(); ++i)
        options.words[i] = as_text(std::move(options.words[i]), options.encoding, "argument " + std::to_string(i + 1));
    if (options.system) options.system = as_text(std::move(*options.system), options.encoding, "--system");
    return options;
}

json::object generate_params(const Options& options, const std::string& text, bool chat, bool with_system) {
    json::object params;
    if (options.session) params["session"] = *options.session;
    if (options.timeout) params["timeout"] = *options.timeout;
    const bool system = with_system && options.system;
    if (chat) {
        json::array messages;
        if (system) messages.push_back(message("system", *options.system));
        messages.push_back(message("user", text));
        params["messages"] = std::move(messages);
    } else {
        params["prompt"] = system ? *options.system + "\n\n" + text : text;
    }
    params["stream"] = true;
    add_sampling(params, options.sampling);
    return params;
}

}  // namespace strata::client
