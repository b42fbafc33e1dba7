// chat/text.cpp — code points, Python whitespace and case mapping for the interpreter.
// Must not touch: values, templates.
#include "chat/text.h"

#include <utility>

namespace strata::chat::text {

bool is_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(std::string_view s, std::u32string_view chars, bool left, bool right) {
    const std::u32string cps = decode(s);
    auto drop = [&](char32_t c) { return chars.empty() ? is_space(c) : chars.find(c) != std::u32string_view::npos; };
    size_t b = 0, e = cps.size();
    if (left) while (b < e && drop(cps[b])) ++b;
    if (right) while (e > b && drop(cps[e - 1])) --e;
    return encode(std::u32string_view(cps).substr(b, e - b));
}

namespace {

// Latin Extended-A: the pairs whose capital is the even code point, and those where it is odd.
bool even_capital_pair(char32_t c) { return (c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177); }
bool odd_capital_pair(char32_t c) { return (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E); }

constexpr std::pair<char32_t, char32_t> kGreekAccents[] = {{0x3AC, 0x386}, {0x3AD, 0x388}, {0x3AE, 0x389}, {0x3AF, 0x38A},
                                                          {0x3CC, 0x38C}, {0x3CD, 0x38E}, {0x3CE, 0x38F}, {0x3C2, 0x3A3}};

}  // namespace

char32_t upper(char32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7) || (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) || (c >= 0x430 && c <= 0x44F))
        return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    if (c == 0xFF) return 0x178;
    if (c == 0xB5) return 0x39C;
    if (even_capital_pair(c)) return c & ~char32_t{1};
    if (odd_capital_pair(c) && (c & 1) == 0) return c - 1;
    for (auto [small, capital] : kGreekAccents)
        if (c == small) return capital;
    return c;
}

char32_t lower(char32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) || (c >= 0x410 && c <= 0x42F))
        return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    if (c == 0x178) return 0xFF;
    if (even_capital_pair(c)) return c | 1;
    if (odd_capital_pair(c) && (c & 1) == 1) return c + 1;
    for (auto [small, capital] : kGreekAccents)
        if (c == capital && capital != 0x3A3) return small;
    return c;
}

namespace {
template <class F>
std::string map_chars(std::string_view s, F f) {
    std::u32string cps = decode(s);
    for (auto& c : cps) c = f(c);
    return encode(cps);
}
}  // namespace

std::string upper(std::string_view s) { return map_chars(s, [](char32_t c) { return upper(c); }); }
std::string lower(std::string_view s) { return map_chars(s, [](char32_t c) { return lower(c); }); }

}  // namespace strata::chat::text
