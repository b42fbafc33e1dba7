// gguf/utf8.h — strict UTF-8 validation (no overlongs, no surrogates, nothing past
// U+10FFFF): the one definition, used by the GGUF reader (its strings must be UTF-8) and,
// through tokenizer/utf8.h, by the tokenizers, the daemon and the client.
// Must not touch: decoding, replacement, byte maps (tokenizer/utf8.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace strata::gguf::utf8 {

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

}  // namespace strata::gguf::utf8
