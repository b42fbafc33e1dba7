// chat/ast.h — the syntax tree of a parsed template: expressions and statements as the
// parser builds them and the interpreter walks them. Must not touch: lexing, evaluation.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace strata::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
    enum class Kind {
        Literal,   // value
        Name,      // name
        Attr,      // a.name
        Item,      // a[b]
        Slice,     // a[b:c:d] (b, c, d may be null)
        Call,      // a(args, kwargs)
        Filter,    // a | name(args, kwargs); a is null in a filter block's chain
        Test,      // a is [not] name(args)   (negated)
        Unary,     // name is "-", "+" or "not"; operand a
        Binary,    // a name b: + - * / // % ** ~ == != < > <= >= in "not in"
        And,
        Or,
        Cond,      // a if b else c (c may be null)
        ListLit,   // args
        TupleLit,  // args
        DictLit,   // kwargs-like pairs in dict_items
    };
    Kind kind;
    int line = 0;
    Value value;
    std::string name;
    bool negated = false;
    ExprPtr a, b, c;
    std::vector<ExprPtr> args;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    std::vector<std::pair<ExprPtr, ExprPtr>> dict_items;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct MacroParam {
    std::string name;
    ExprPtr default_value;  // null: required
};

struct Stmt {
    enum class Kind {
        Text,       // text
        Output,     // {{ expr }}
        If,         // branches (cond, body); else_body
        For,        // targets in expr [if cond] body [else else_body]
        Set,        // targets (or ns.attr via attr_of) = expr
        SetBlock,   // {% set name [| filters] %}body{% endset %}: filter chain in expr (may be null)
        Macro,      // name(params) body
        CallBlock,  // {% call[(params)] expr %}body{% endcall %}
        FilterBlock,  // {% filter chain %}body{% endfilter %}
        Break,
        Continue,
    };
    Kind kind;
    int line = 0;
    std::string text;
    ExprPtr expr, cond;
    std::vector<std::string> targets;
    std::string attr_of;  // Set: "ns" in ns.attr = ..., then targets[0] is attr
    std::vector<std::pair<ExprPtr, Body>> branches;
    Body body, else_body;
    std::vector<MacroParam> params;
};

}  // namespace strata::chat
