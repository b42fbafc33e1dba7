// gguf/utf8.cpp — strict UTF-8 validation (see utf8.h).
#include "gguf/utf8.h"

namespace strata::gguf::utf8 {
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

}  // namespace strata::gguf::utf8
