// grammar/json.h — the grammar rules of JSON values (OpenAI's response_format json_object,
// and the building blocks of grammars made from JSON schemas).
// Owns: those rules' text. Whitespace between tokens is bounded (one space, or a newline
// and up to 20 spaces or tabs, llama.cpp's space rule) and so are numbers (at most 16 digits
// before the point, after it and in the exponent, as llama.cpp's), so a model cannot pad a
// reply with spaces or zeros until max_tokens.
#pragma once

#include <string>
#include <string_view>

namespace strata::grammar {

// Rules value, object, member, array, char, string, number, integer, boolean, null, ws.
inline constexpr std::string_view kJsonRules = R"(value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( "," ws member )* )? "}"
member ::= string ws ":" ws value ws
array  ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
char   ::= [^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
string ::= "\"" char* "\""
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,16} )?
integer ::= "-"? ( "0" | [1-9] [0-9]{0,15} )
boolean ::= "true" | "false"
null   ::= "null"
ws     ::= ( " " | "\n" [ \t]{0,20} )?
)";

// Any JSON object.
inline std::string json_object_grammar() {
    return "root ::= object\n" + std::string(kJsonRules);
}

}  // namespace strata::grammar
