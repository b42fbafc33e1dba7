// tokenizer/utf8.cpp — UTF-8 decoding, replacement and GPT-2's byte map (see utf8.h;
// validation is gguf/utf8.cpp).
#include "tokenizer/utf8.h"

#include <array>

namespace strata::tokenizer::utf8 {
namespace {

// Bytes GPT-2 keeps as their own code point; the others are numbered from 256 on.
bool printable_byte(unsigned b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }

struct ByteMap {
    std::array<uint32_t, 256> to_cp{};
    std::array<int16_t, 324> from_cp{};  // code points 0..323 are the only ones used
    ByteMap() {
        from_cp.fill(-1);
        uint32_t next = 256;
        for (unsigned b = 0; b < 256; ++b) {
            to_cp[b] = printable_byte(b) ? b : next++;
            from_cp[to_cp[b]] = static_cast<int16_t>(b);
        }
    }
};

const ByteMap& byte_map() {
    static const ByteMap map;
    return map;
}

}  // namespace

uint32_t decode(std::string_view s, size_t pos, size_t len) {
    auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(s[pos + i])); };
    switch (len) {
        case 1: return byte(0);
        case 2: return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
        case 3: return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
        default: return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
    }
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

bool is_valid(std::string_view s) { return !first_invalid(s); }

std::string from_latin1(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) append(out, static_cast<uint8_t>(c));
    return out;
}

uint32_t byte_to_code_point(uint8_t b) { return byte_map().to_cp[b]; }

int code_point_to_byte(uint32_t cp) { return cp < byte_map().from_cp.size() ? byte_map().from_cp[cp] : -1; }

std::string byte_level_encode(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char c : bytes) append(out, byte_to_code_point(static_cast<uint8_t>(c)));
    return out;
}

std::optional<std::string> byte_level_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        size_t len = valid_length(text, pos);
        if (!len) return std::nullopt;
        int b = code_point_to_byte(decode(text, pos, len));
        if (b < 0) return std::nullopt;
        out += static_cast<char>(b);
        pos += len;
    }
    return out;
}

}  // namespace strata::tokenizer::utf8
