// utf8/utf8.cpp — UTF-8 validation, decoding, encoding and replacement (see utf8.h).
#include "utf8/utf8.h"

namespace strata::utf8 {
namespace {

// For a lead byte: the sequence length and the allowed range of the second byte (the
// only byte whose range depends on the lead; later bytes are always 0x80..0xBF).
struct Lead {
    uint8_t length = 0;
    uint8_t second_min = 0x80, second_max = 0xBF;
};

Lead lead_of(uint8_t b) {
    if (b < 0x80) return {1};
    if (b < 0xC2) return {0};
    if (b < 0xE0) return {2};
    if (b == 0xE0) return {3, 0xA0, 0xBF};  // no overlongs
    if (b == 0xED) return {3, 0x80, 0x9F};  // no surrogates
    if (b < 0xF0) return {3};
    if (b == 0xF0) return {4, 0x90, 0xBF};  // no overlongs
    if (b < 0xF4) return {4};
    if (b == 0xF4) return {4, 0x80, 0x8F};  // nothing past U+10FFFF
    return {0};
}

bool continuation_ok(const Lead& lead, size_t index, uint8_t b) {
    if (index == 1) return b >= lead.second_min && b <= lead.second_max;
    return b >= 0x80 && b <= 0xBF;
}

}  // namespace

size_t sequence_length(uint8_t lead) { return lead_of(lead).length; }

size_t valid_prefix_length(std::string_view s, size_t pos) {
    Lead lead = lead_of(static_cast<uint8_t>(s[pos]));
    if (lead.length == 0) return 0;
    size_t n = 1;
    while (n < lead.length && pos + n < s.size() && continuation_ok(lead, n, static_cast<uint8_t>(s[pos + n]))) ++n;
    return n;
}

size_t valid_length(std::string_view s, size_t pos) {
    const size_t length = sequence_length(static_cast<uint8_t>(s[pos]));
    if (length == 0) return 0;
    return valid_prefix_length(s, pos) == length ? length : 0;
}

std::optional<size_t> first_invalid(std::string_view s) {
    for (size_t pos = 0; pos < s.size();) {
        const size_t len = valid_length(s, pos);
        if (!len) return pos;
        pos += len;
    }
    return std::nullopt;
}

bool is_valid(std::string_view s) { return !first_invalid(s); }

uint32_t decode(std::string_view s, size_t pos, size_t len) {
    auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(s[pos + i])); };
    switch (len) {
        case 1: return byte(0);
        case 2: return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
        case 3: return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
        default: return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
    }
}

std::u32string decode(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const size_t n = valid_length(s, i);
        if (n == 0) {
            out.push_back(0xFFFD);
            ++i;
        } else {
            out.push_back(decode(s, i, n));
            i += n;
        }
    }
    return out;
}

void append(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string encode(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) append(out, c);
    return out;
}

size_t incomplete_tail(std::string_view s) {
    size_t look = s.size() < 3 ? s.size() : 3;
    for (size_t back = 1; back <= look; ++back) {
        size_t pos = s.size() - back;
        const size_t length = sequence_length(static_cast<uint8_t>(s[pos]));
        if (length == 0) continue;  // a continuation byte (or junk): look further back
        bool incomplete = length > back && valid_prefix_length(s, pos) == back;
        return incomplete ? back : 0;
    }
    return 0;
}

std::string replace_invalid(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    while (pos < s.size()) {
        size_t len = valid_length(s, pos);
        if (len) {
            out.append(s.substr(pos, len));
            pos += len;
        } else {
            out += "\xEF\xBF\xBD";
            size_t skip = valid_prefix_length(s, pos);
            pos += skip ? skip : 1;
        }
    }
    return out;
}

std::string from_latin1(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) append(out, static_cast<uint8_t>(c));
    return out;
}

}  // namespace strata::utf8
