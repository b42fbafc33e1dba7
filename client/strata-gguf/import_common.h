// client/strata-gguf/import_common.h — helpers the tokenizer readers share: reading a
// whole file, placing a token at an id, recognising special-looking token texts.
#pragma once

#include <string>
#include <string_view>

#include "import_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace strata::tool {

using tokenizer::TokenType;

std::string read_file(const std::string& path);
[[noreturn]] void fail(const std::string& path, const std::string& what);

// Sets token `id` (growing the vocabulary with empty slots as needed); scores are kept
// only for "llama" vocabularies.
void set_token(TokenizerSpec& spec, int64_t id, std::string text, TokenType type, float score);
// The id of the token whose text is `text`, or -1.
int32_t find_token(const TokenizerSpec& spec, std::string_view text);
// Calls f(line, number) for each line of `text`: numbers from 1, a trailing '\r' removed.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
    size_t number = 0;
    for (size_t pos = 0; pos < text.size();) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        f(line, ++number);
        pos = end + 1;
    }
}

// Added tokens such as <|im_start|> or <｜User｜> are control tokens even when the files do
// not mark them special (as llama.cpp's converter decides).
bool looks_special(std::string_view text);

}  // namespace strata::tool
