// tokenizer/byte_level.h — GPT-2's byte <-> printable-code-point map, the alphabet byte-level
// BPE vocabularies are written in. Must not touch: vocabularies, token ids, UTF-8 itself
// (utf8/utf8.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::tokenizer::byte_level {

// Every byte is written as one printable code point in the vocabulary ("Ġ" for a space).
// byte_to_code_point(b) gives that code point; the inverse gives -1 for code points that
// stand for no byte.
uint32_t byte_to_code_point(uint8_t b);
int code_point_to_byte(uint32_t cp);
// Bytes written in that alphabet, and back; nullopt when `text` has a character that
// stands for no byte (or is not valid UTF-8).
std::string encode(std::string_view bytes);
std::optional<std::string> decode(std::string_view text);

}  // namespace strata::tokenizer::byte_level
