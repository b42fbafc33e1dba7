// chat/parser.h — tokens to a syntax tree, following jinja2's grammar for the statements
// chat templates use (if/elif/else, for/else with an inline filter, set and block set,
// macro, call, filter blocks, break/continue, generation) and its expression precedence.
// Must not touch: lexing, evaluation.
#pragma once

#include <vector>

#include "chat/ast.h"
#include "chat/lexer.h"

namespace strata::chat {

// The template's statements; a TemplateError names the line and what was expected.
Body parse(const std::vector<Token>& tokens);

}  // namespace strata::chat
