// tokenizer/wpm.cpp — WordPiece (see wpm.h).
#include "tokenizer/wpm.h"

#include "utf8/utf8.h"

namespace strata::tokenizer {
namespace {

// U+00C0..U+017F decomposed (NFD), lowercased, accents dropped, as UTF-8 (generated with
// Python's unicodedata).
constexpr const char* kLatinFold[192] = {
    "a", "a", "a", "a", "a", "a", "\xc3\xa6", "c", "e", "e", "e", "e",  // U+00C0
    "i", "i", "i", "i", "\xc3\xb0", "n", "o", "o", "o", "o", "o", "\xc3\x97",  // U+00CC
    "\xc3\xb8", "u", "u", "u", "u", "y", "\xc3\xbe", "\xc3\x9f", "a", "a", "a", "a",  // U+00D8
    "a", "a", "\xc3\xa6", "c", "e", "e", "e", "e", "i", "i", "i", "i",  // U+00E4
    "\xc3\xb0", "n", "o", "o", "o", "o", "o", "\xc3\xb7", "\xc3\xb8", "u", "u", "u",  // U+00F0
    "u", "y", "\xc3\xbe", "y", "a", "a", "a", "a", "a", "a", "c", "c",  // U+00FC
    "c", "c", "c", "c", "c", "c", "d", "d", "\xc4\x91", "\xc4\x91", "e", "e",  // U+0108
    "e", "e", "e", "e", "e", "e", "e", "e", "g", "g", "g", "g",  // U+0114
    "g", "g", "g", "g", "h", "h", "\xc4\xa7", "\xc4\xa7", "i", "i", "i", "i",  // U+0120
    "i", "i", "i", "i", "i", "\xc4\xb1", "\xc4\xb3", "\xc4\xb3", "j", "j", "k", "k",  // U+012C
    "\xc4\xb8", "l", "l", "l", "l", "l", "l", "\xc5\x80", "\xc5\x80", "\xc5\x82", "\xc5\x82", "n",  // U+0138
    "n", "n", "n", "n", "n", "\xc5\x89", "\xc5\x8b", "\xc5\x8b", "o", "o", "o", "o",  // U+0144
    "o", "o", "\xc5\x93", "\xc5\x93", "r", "r", "r", "r", "r", "r", "s", "s",  // U+0150
    "s", "s", "s", "s", "s", "s", "t", "t", "t", "t", "\xc5\xa7", "\xc5\xa7",  // U+015C
    "u", "u", "u", "u", "u", "u", "u", "u", "u", "u", "u", "u",  // U+0168
    "w", "w", "y", "y", "y", "z", "z", "z", "z", "z", "z", "\xc5\xbf",  // U+0174
};

bool is_whitespace(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_control(uint32_t c) { return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0xFFFD; }

// Characters that are a word of their own: punctuation, ASCII symbols, CJK ideographs.
bool stands_alone(uint32_t c) {
    if (c < 0x80) return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
    return c == 0xA1 || c == 0xA7 || c == 0xAB || c == 0xB6 || c == 0xB7 || c == 0xBB || c == 0xBF || (c >= 0x2010 && c <= 0x2027) ||
           (c >= 0x2030 && c <= 0x205E) || (c >= 0x3001 && c <= 0x3003) || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
           (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2CEAF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// The character lowercased and without its accent, as UTF-8 ("" for a lone accent).
std::string fold(uint32_t c) {
    if (c >= 'A' && c <= 'Z') return std::string(1, static_cast<char>(c - 'A' + 'a'));
    if (c >= 0x300 && c <= 0x36F) return {};
    if (c >= 0xC0 && c <= 0x17F) return kLatinFold[c - 0xC0];
    std::string s;
    utf8::append(s, c);
    return s;
}

}  // namespace

WpmModel::WpmModel(const Vocab& vocab) : vocab_(vocab) {
    for (const auto& t : vocab.text) longest_ = std::max(longest_, t.size());
}

std::vector<std::string> WpmModel::words(std::string_view text) {
    std::vector<std::string> words(1);
    for (size_t pos = 0; pos < text.size();) {
        const size_t len = utf8::valid_length(text, pos);
        if (len == 0) {  // invalid bytes read as U+FFFD, which is dropped
            ++pos;
            continue;
        }
        const uint32_t c = utf8::decode(text, pos, len);
        pos += len;
        if (is_whitespace(c)) {
            if (!words.back().empty()) words.emplace_back();
        } else if (c != 0 && !is_control(c)) {
            const std::string s = fold(c);
            if (stands_alone(c)) {
                if (!words.back().empty()) words.emplace_back();
                words.back() = s;
                words.emplace_back();
            } else {
                words.back() += s;
            }
        }
    }
    if (words.back().empty()) words.pop_back();
    return words;
}

void WpmModel::encode(std::string_view text, std::vector<int32_t>& out) const {
    for (const std::string& word : words(text)) {
        const std::string w = "\xE2\x96\x81" + word;
        const size_t start = out.size();
        for (size_t i = 0; i < w.size();) {
            size_t j = std::min(w.size(), i + longest_);
            int32_t id = -1;
            for (; j > i && (id = vocab_.find(std::string_view(w).substr(i, j - i))) < 0; --j) {}
            if (id < 0) {
                out.resize(start);
                break;
            }
            out.push_back(id);
            i = j;
        }
        if (out.size() == start) out.push_back(vocab_.unk);
    }
}

}  // namespace strata::tokenizer
