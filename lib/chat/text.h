// chat/text.h — Python's view of strings for the template interpreter and the built-in
// families: code points, Unicode whitespace as str.isspace() sees it, and case mapping.
// Must not touch: values, templates, UTF-8 itself (utf8/utf8.h: decoding, encoding).
#pragma once

#include <string>
#include <string_view>

#include "utf8/utf8.h"

namespace strata::chat::text {

// The code points of UTF-8 text (each invalid byte becomes U+FFFD), and back.
using utf8::decode;
using utf8::encode;
// Python str.isspace() for one code point.
bool is_space(char32_t c);
// Python str.strip()/lstrip()/rstrip(): `chars` empty = whitespace.
std::string strip(std::string_view s, std::u32string_view chars, bool left, bool right);
// Python str.upper()/lower() for the letters of Latin-1, Latin Extended-A, Greek and Cyrillic
// (one-to-one mappings; other scripts are left as they are).
std::string upper(std::string_view s);
std::string lower(std::string_view s);
char32_t upper(char32_t c);
char32_t lower(char32_t c);

}  // namespace strata::chat::text
