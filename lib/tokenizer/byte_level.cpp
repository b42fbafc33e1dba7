// tokenizer/byte_level.cpp — GPT-2's byte <-> code point map (see byte_level.h).
#include "tokenizer/byte_level.h"

#include <array>

#include "utf8/utf8.h"

namespace strata::tokenizer::byte_level {
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

uint32_t byte_to_code_point(uint8_t b) { return byte_map().to_cp[b]; }

int code_point_to_byte(uint32_t cp) { return cp < byte_map().from_cp.size() ? byte_map().from_cp[cp] : -1; }

std::string encode(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char c : bytes) utf8::append(out, byte_to_code_point(static_cast<uint8_t>(c)));
    return out;
}

std::optional<std::string> decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        size_t len = utf8::valid_length(text, pos);
        if (!len) return std::nullopt;
        int b = code_point_to_byte(utf8::decode(text, pos, len));
        if (b < 0) return std::nullopt;
        out += static_cast<char>(b);
        pos += len;
    }
    return out;
}

}  // namespace strata::tokenizer::byte_level
