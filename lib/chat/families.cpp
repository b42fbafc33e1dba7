// chat/families.cpp — each chat family's prompt format, family detection and names.
// Owns: the C++ transcription of each supported Jinja chat template (as rendered by
// transformers: trim_blocks, lstrip_blocks, tools=None) and the templates' `| trim`.
// Must not touch: tokenizing, Jinja evaluation, GGUF files.
#include "chat/families.h"

#include <array>
#include <cstdint>
#include <cstdio>

#include "chat/text.h"
#include "utf8/utf8.h"

namespace strata::chat {
namespace {

struct FamilyName {
    ChatFamily family;
    std::string_view name;
};

// Canonical names first (chat_family_name returns the first match), then accepted aliases.
constexpr std::array<FamilyName, 11> kFamilyNames{{
    {ChatFamily::Llama31, "llama3.1"},
    {ChatFamily::Llama32, "llama3.2"},
    {ChatFamily::Qwen25, "qwen2.5"},
    {ChatFamily::Gemma2, "gemma2"},
    {ChatFamily::Phi3, "phi3"},
    {ChatFamily::Phi35, "phi3.5"},
    {ChatFamily::MistralNemo, "mistral-nemo"},
    {ChatFamily::DeepSeekR1, "deepseek-r1"},
    {ChatFamily::Plain, "plain"},
    {ChatFamily::Llama31, "llama3.3"},
    {ChatFamily::Gemma2, "gemma"},
}};
constexpr size_t kCanonicalNames = 9;

std::string known_family_names() {
    std::string names;
    for (size_t i = 0; i < kCanonicalNames; ++i) {
        if (i) names += ", ";
        names += kFamilyNames[i].name;
    }
    return names;
}

// ---------------------------------------------------------------------------------------
// Detection: every marker of a rule must occur and none of its exclusions; first rule wins.

struct DetectionRule {
    ChatFamily family;
    std::array<std::string_view, 4> all_of;   // empty entries are unused
    std::array<std::string_view, 2> none_of;  // empty entries are unused
};

bool contains(std::string_view text, std::string_view marker) {
    return text.find(marker) != std::string_view::npos;
}

bool matches(std::string_view jinja, const DetectionRule& rule) {
    for (std::string_view m : rule.all_of)
        if (!contains(jinja, m)) return false;
    for (std::string_view m : rule.none_of)
        if (!m.empty() && contains(jinja, m)) return false;
    return true;
}

constexpr DetectionRule kDetectionRules[] = {
    {ChatFamily::DeepSeekR1, {"<｜User｜>", "<｜Assistant｜>", "</think>"}, {}},
    {ChatFamily::Llama32, {"<|start_header_id|>", "<|eot_id|>", "Cutting Knowledge Date", "strftime_now"}, {}},
    {ChatFamily::Llama31, {"<|start_header_id|>", "<|eot_id|>", "Cutting Knowledge Date"}, {}},
    {ChatFamily::Qwen25, {"<|im_start|>", "<|im_end|>", "You are Qwen, created by Alibaba Cloud"}, {}},
    {ChatFamily::Gemma2, {"<start_of_turn>", "<end_of_turn>", "System role not supported"}, {}},
    // Phi-3.5 drops an empty system message (`message['role'] == 'system' and message['content']`);
    // the Phi-3 variant that starts with bos_token is a different format.
    {ChatFamily::Phi35, {"<|user|>", "<|assistant|>", "<|end|>", "and message['content']"}, {"bos_token"}},
    {ChatFamily::Phi35, {"<|user|>", "<|assistant|>", "<|end|>", "and message.content"}, {"bos_token"}},
    {ChatFamily::Phi3, {"<|user|>", "<|assistant|>", "<|end|>", "<|system|>"}, {"bos_token"}},
    // Tekken-era Mistral writes "[INST]" with no space after it; the SentencePiece-era
    // templates ("[INST] ") and the [SYSTEM_PROMPT] ones are different formats.
    {ChatFamily::MistralNemo, {"[INST]", "[/INST]"}, {"[INST] ", "[SYSTEM_PROMPT]"}},
};

uint64_t fnv1a64(std::string_view text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

// The template's first non-blank line, shortened, with anything but printable ASCII escaped.
std::string template_excerpt(std::string_view jinja) {
    size_t start = jinja.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) return "";
    std::string_view line = jinja.substr(start, jinja.find('\n', start) - start);
    constexpr size_t kMax = 60;
    std::string out;
    for (unsigned char c : line.substr(0, kMax)) {
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (line.size() > kMax) out += "...";
    return out;
}

// ---------------------------------------------------------------------------------------
// Python's str.strip() (the Jinja `trim` filter): strips code points for which str.isspace()
// is true. Bytes that do not decode as UTF-8 count as non-space and are kept as they are.

// Length of the whitespace code point starting at i, or 0.
size_t space_at(std::string_view s, size_t i) {
    const size_t len = utf8::valid_length(s, i);
    return len && text::is_space(utf8::decode(s, i, len)) ? len : 0;
}

// Length of the whitespace code point ending at `end`, or 0.
size_t space_before(std::string_view s, size_t end) {
    for (size_t len = 1; len <= 4 && len <= end; ++len) {
        if ((static_cast<unsigned char>(s[end - len]) & 0xc0) == 0x80) continue;
        return space_at(s, end - len) == len ? len : 0;
    }
    return 0;
}

std::string_view python_strip(std::string_view s) {
    size_t begin = 0, end = s.size();
    while (begin < end) {
        size_t len = space_at(s, begin);
        if (!len) break;
        begin += len;
    }
    while (end > begin) {
        size_t len = space_before(s, end);
        if (!len) break;
        end -= len;
    }
    return s.substr(begin, end - begin);
}

// ---------------------------------------------------------------------------------------
// Conversation checks shared by the families.

bool is_role(const Message& m, std::string_view role) { return m.role == role; }

void check_conversation(std::span<const Message> messages) {
    if (messages.empty()) throw ChatTemplateError("empty conversation: at least one message is needed");
    for (size_t i = 0; i < messages.size(); ++i) {
        const std::string& role = messages[i].role;
        if (role != "system" && role != "user" && role != "assistant")
            throw ChatTemplateError("message " + std::to_string(i + 1) + " has role '" +
                                    template_excerpt(role) +
                                    "'; expected system, user or assistant");
    }
}

// Gemma and Mistral Nemo: user turns at even positions, assistant turns at odd ones.
void check_alternation(std::span<const Message> messages, size_t offset, ChatFamily family) {
    for (size_t i = 0; i < messages.size(); ++i) {
        if (is_role(messages[i], "user") != (i % 2 == 0))
            throw ChatTemplateError(std::string(chat_family_name(family)) + ": message " +
                                    std::to_string(i + offset + 1) + " (" + messages[i].role +
                                    "): conversation roles must alternate user/assistant/user/...");
    }
}

// ---------------------------------------------------------------------------------------
// The families. Each mirrors its template's statements in order; comments name the template
// quirks that matter for byte identity.

std::string llama3_date(ChatFamily family, const ChatOptions& options) {
    if (options.date) return *options.date;
    return family == ChatFamily::Llama31 ? "26 Jul 2024" : chat_date_string(std::time(nullptr));
}

std::string render_llama3(ChatFamily family, std::span<const Message> messages, bool gen,
                          const ChatTokens& tokens, const ChatOptions& options) {
    std::string_view system;  // a leading system message is trimmed and moved into the header
    if (is_role(messages[0], "system")) {
        system = python_strip(messages[0].content);
        messages = messages.subspan(1);
    }
    std::string out = tokens.bos;
    out += "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n";
    out += "Today Date: " + llama3_date(family, options) + "\n\n";
    out += system;
    out += "<|eot_id|>";
    for (const Message& m : messages) {
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n";
        out += python_strip(m.content);
        out += "<|eot_id|>";
    }
    if (gen) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

std::string render_qwen25(std::span<const Message> messages, bool gen) {
    std::string out;
    if (is_role(messages[0], "system"))
        out = "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n";
    else
        out = "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n";
    for (size_t i = 0; i < messages.size(); ++i) {
        if (i == 0 && is_role(messages[i], "system")) continue;  // already rendered above
        out += "<|im_start|>" + messages[i].role + "\n" + messages[i].content + "<|im_end|>\n";
    }
    if (gen) out += "<|im_start|>assistant\n";
    return out;
}

std::string render_gemma2(std::span<const Message> messages, bool gen, const ChatTokens& tokens) {
    // The template only refuses a *leading* system message; one at an odd position passes the
    // alternation check and is rendered as a "system" turn, and so it is here.
    if (is_role(messages[0], "system"))
        throw ChatTemplateError("gemma2: system role not supported (the template has no system turn; "
                                "put the instructions in the first user message)");
    check_alternation(messages, 0, ChatFamily::Gemma2);
    std::string out = tokens.bos;
    for (const Message& m : messages) {
        out += "<start_of_turn>";
        out += is_role(m, "assistant") ? "model" : m.role;
        out += "\n";
        out += python_strip(m.content);
        out += "<end_of_turn>\n";
    }
    if (gen) out += "<start_of_turn>model\n";
    return out;
}

std::string render_phi3(std::span<const Message> messages, bool gen, const ChatTokens& tokens,
                        bool drop_empty_system) {
    std::string out;
    for (const Message& m : messages) {
        if (is_role(m, "system") && drop_empty_system && m.content.empty()) continue;
        out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
    }
    out += gen ? std::string("<|assistant|>\n") : tokens.eos;
    return out;
}

std::string render_mistral_nemo(std::span<const Message> messages, const ChatTokens& tokens) {
    std::optional<std::string_view> system;
    size_t offset = 0;
    if (is_role(messages[0], "system")) {
        system = messages[0].content;
        messages = messages.subspan(1);
        offset = 1;
    }
    for (size_t i = 0; i < messages.size(); ++i)
        if (is_role(messages[i], "system"))
            throw ChatTemplateError("mistral-nemo: message " + std::to_string(i + offset + 1) +
                                    " is a system message; only the first message may be one");
    check_alternation(messages, offset, ChatFamily::MistralNemo);
    std::string out = tokens.bos;
    for (size_t i = 0; i < messages.size(); ++i) {
        const Message& m = messages[i];
        if (is_role(m, "assistant")) {
            out += m.content + tokens.eos;
            continue;
        }
        out += "[INST]";
        // The system text goes into the *last* message if that is a user turn; a conversation
        // ending with an assistant turn loses it (the template does the same).
        if (system && i + 1 == messages.size()) {
            out += *system;
            out += "\n\n";
        }
        out += m.content + "[/INST]";
    }
    return out;
}

// The part of an assistant reply after its last "</think>" (the template's split('</think>')[-1]).
std::string_view without_thinking(std::string_view reply) {
    constexpr std::string_view kEnd = "</think>";
    size_t at = reply.rfind(kEnd);
    return at == std::string_view::npos ? reply : reply.substr(at + kEnd.size());
}

std::string render_deepseek_r1(std::span<const Message> messages, bool gen, const ChatTokens& tokens) {
    std::string_view system;  // the last system message wins, placed right after BOS
    for (const Message& m : messages)
        if (is_role(m, "system")) system = m.content;
    std::string out = tokens.bos;
    out += system;
    for (const Message& m : messages) {
        if (is_role(m, "user")) {
            out += "<｜User｜>" + m.content;
        } else if (is_role(m, "assistant")) {
            out += "<｜Assistant｜>";
            out += without_thinking(m.content);
            out += "<｜end▁of▁sentence｜>";
        }
    }
    if (gen) out += "<｜Assistant｜><think>\n";
    return out;
}

std::string render_plain(std::span<const Message> messages, bool gen) {
    std::string out;
    for (const Message& m : messages) {
        out += is_role(m, "system") ? "System: " : is_role(m, "user") ? "User: " : "Assistant: ";
        out += m.content + "\n";
    }
    if (gen) out += "Assistant:";
    return out;
}

}  // namespace

std::optional<ChatFamily> detect_chat_family(std::string_view jinja) {
    for (const DetectionRule& rule : kDetectionRules)
        if (matches(jinja, rule)) return rule.family;
    return std::nullopt;
}

ChatFamily chat_family_for_template(std::string_view jinja) {
    if (auto family = detect_chat_family(jinja)) return *family;
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a64(jinja)));
    std::string what = jinja.find_first_not_of(" \t\r\n") == std::string_view::npos
                           ? std::string("the chat template is empty")
                           : "unrecognised chat template (first line '" + template_excerpt(jinja) +
                                 "', " + std::to_string(jinja.size()) + " bytes, fnv1a64 " + hash + ")";
    throw ChatTemplateError(what + "; choose a chat family explicitly, one of: " + known_family_names());
}

ChatFamily chat_family_from_name(std::string_view name) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    for (const FamilyName& f : kFamilyNames) {
        if (f.name.size() != name.size()) continue;
        bool same = true;
        for (size_t i = 0; i < name.size() && same; ++i) same = lower(name[i]) == f.name[i];
        if (same) return f.family;
    }
    throw ChatTemplateError("unknown chat family '" + template_excerpt(name) +
                            "'; known families: " + known_family_names());
}

std::string_view chat_family_name(ChatFamily family) {
    for (const FamilyName& f : kFamilyNames)
        if (f.family == family) return f.name;
    return "unknown";
}

bool chat_family_renders_bos(ChatFamily family) {
    switch (family) {
        case ChatFamily::Llama31: case ChatFamily::Llama32: case ChatFamily::Gemma2:
        case ChatFamily::MistralNemo: case ChatFamily::DeepSeekR1:
            return true;
        case ChatFamily::Qwen25: case ChatFamily::Phi3: case ChatFamily::Phi35: case ChatFamily::Plain:
            return false;
    }
    return false;
}

std::string chat_date_string(std::time_t when) {
    static constexpr std::array<std::string_view, 12> kMonths{
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::tm tm{};
    localtime_r(&when, &tm);
    char day[3] = {static_cast<char>('0' + tm.tm_mday / 10), static_cast<char>('0' + tm.tm_mday % 10), 0};
    return std::string(day) + " " + std::string(kMonths[static_cast<size_t>(tm.tm_mon)]) + " " +
           std::to_string(tm.tm_year + 1900);
}

std::string render_chat(ChatFamily family, std::span<const Message> messages,
                        bool add_generation_prompt, const ChatTokens& tokens, const ChatOptions& options) {
    check_conversation(messages);
    const bool gen = add_generation_prompt;
    switch (family) {
        case ChatFamily::Llama31: case ChatFamily::Llama32:
            return render_llama3(family, messages, gen, tokens, options);
        case ChatFamily::Qwen25: return render_qwen25(messages, gen);
        case ChatFamily::Gemma2: return render_gemma2(messages, gen, tokens);
        case ChatFamily::Phi3: return render_phi3(messages, gen, tokens, false);
        case ChatFamily::Phi35: return render_phi3(messages, gen, tokens, true);
        case ChatFamily::MistralNemo: return render_mistral_nemo(messages, tokens);
        case ChatFamily::DeepSeekR1: return render_deepseek_r1(messages, gen, tokens);
        case ChatFamily::Plain: return render_plain(messages, gen);
    }
    throw ChatTemplateError("render_chat: invalid chat family value");
}

}  // namespace strata::chat
