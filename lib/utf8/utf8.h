// utf8/utf8.h — UTF-8, the one definition every concern and the client use: strict
// validation (no overlongs, no surrogates, nothing past U+10FFFF), decoding and encoding
// code points, the incomplete tail a stream must hold back, replacement of invalid bytes
// with U+FFFD, and Latin-1 input. Depends on nothing. Must not touch: tokens, vocabularies
// (GPT-2's byte map is tokenizer/byte_level.h), Python's string semantics (chat/text.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::utf8 {

// The length (1..4) of the sequence a lead byte starts, or 0 when it can start none.
size_t sequence_length(uint8_t lead);

// Length of the longest prefix of a valid sequence starting at s[pos] (0..4): how many
// bytes an incomplete or broken sequence spans before it goes wrong. 0 when s[pos] can
// start no sequence at all.
size_t valid_prefix_length(std::string_view s, size_t pos);

// Length (1..4) of the valid UTF-8 sequence starting at s[pos], or 0 when the bytes there
// do not start a complete valid sequence (invalid, or cut short by the end of s).
size_t valid_length(std::string_view s, size_t pos);

// The offset of the first byte that starts no valid sequence, or nullopt when s is valid.
std::optional<size_t> first_invalid(std::string_view s);
bool is_valid(std::string_view s);

// The code point of the valid sequence of `len` bytes at s[pos] (from valid_length).
uint32_t decode(std::string_view s, size_t pos, size_t len);
// The code points of s; each byte that starts no valid sequence becomes U+FFFD.
std::u32string decode(std::string_view s);

// Appends the UTF-8 encoding of code point cp (which must be <= U+10FFFF).
void append(std::string& out, uint32_t cp);
// The code points as UTF-8.
std::string encode(std::u32string_view s);

// How many bytes at the end of s form the beginning of a valid sequence that more bytes
// could still complete (0..3).
size_t incomplete_tail(std::string_view s);

// s with every maximal invalid subpart replaced by U+FFFD (the Unicode-recommended
// practice); valid text comes back unchanged.
std::string replace_invalid(std::string_view s);

// Latin-1 (ISO-8859-1) text as UTF-8: each byte is the code point of its value.
std::string from_latin1(std::string_view s);

}  // namespace strata::utf8
