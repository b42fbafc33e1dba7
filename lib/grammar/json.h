// grammar/json.h — the grammar of a JSON object (OpenAI's response_format json_object).
// Owns: that grammar's text. Whitespace between tokens is bounded (one space, or a newline
// and up to 20 spaces or tabs) so a model cannot pad forever.
#pragma once

#include <string_view>

namespace strata::grammar {

inline constexpr std::string_view kJsonObjectGrammar = R"(root   ::= object
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( "," ws member )* )? "}"
member ::= string ws ":" ws value ws
array  ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws     ::= ( " " | "\n" [ \t]{0,20} )?
)";

}  // namespace strata::grammar
