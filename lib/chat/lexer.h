// chat/lexer.h — template source text to tokens, the way jinja2's lexer splits it under
// Hugging Face's settings: newlines normalised and one trailing newline dropped,
// {{ }} / {% %} / {# #} tags with their '-' / '+' whitespace control, trim_blocks (the
// newline after a block or comment tag goes) and lstrip_blocks (spaces before a block or
// comment tag on its own line go). Must not touch: the grammar of
// statements and expressions (parser), values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::chat {

struct Token {
    enum class Type { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, End };
    Type type;
    std::string text;  // Text: the literal text; String: the unescaped value; Name/Op/Int/Float: as written
    int line;
};

// The tokens of a template, ending with an End token; a TemplateError names the line of an
// unterminated tag or string, or a character that starts no token.
std::vector<Token> lex(std::string_view source);

}  // namespace strata::chat
