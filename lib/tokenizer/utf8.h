// tokenizer/utf8.h — UTF-8 facts the tokenizers and the streaming detokenizer share:
// strict sequence validation (no overlongs, no surrogates, nothing past U+10FFFF), the
// incomplete tail a stream must hold back, replacement of invalid bytes with U+FFFD, and
// GPT-2's byte <-> printable-code-point map used by byte-level BPE vocabularies.
// Must not touch: vocabularies, token ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <optional>
#include <string_view>

#include "gguf/utf8.h"

namespace strata::tokenizer::utf8 {

// Validation (valid_length, valid_prefix_length, first_invalid, sequence_length): one
// definition, in gguf/utf8.h, which the GGUF reader needs too.
using gguf::utf8::first_invalid;
using gguf::utf8::sequence_length;
using gguf::utf8::valid_length;
using gguf::utf8::valid_prefix_length;

// The code point of the valid sequence of `len` bytes at s[pos] (from valid_length).
uint32_t decode(std::string_view s, size_t pos, size_t len);

// Appends the UTF-8 encoding of code point cp (which must be <= U+10FFFF).
void append(std::string& out, uint32_t cp);

// How many bytes at the end of s form the beginning of a valid sequence that more bytes
// could still complete (0..3).
size_t incomplete_tail(std::string_view s);

// s with every maximal invalid subpart replaced by U+FFFD (the Unicode-recommended
// practice); valid text comes back unchanged.
std::string replace_invalid(std::string_view s);

bool is_valid(std::string_view s);
// Latin-1 (ISO-8859-1) text as UTF-8: each byte is the code point of its value.
std::string from_latin1(std::string_view s);

// GPT-2 byte-level BPE: every byte is written as one printable code point in the
// vocabulary ("Ġ" for a space). byte_to_code_point(b) gives that code point; the inverse
// gives -1 for code points that stand for no byte.
uint32_t byte_to_code_point(uint8_t b);
int code_point_to_byte(uint32_t cp);
// Bytes written in that alphabet, and back; nullopt when `text` has a character that
// stands for no byte (or is not valid UTF-8).
std::string byte_level_encode(std::string_view bytes);
std::optional<std::string> byte_level_decode(std::string_view text);

}  // namespace strata::tokenizer::utf8
