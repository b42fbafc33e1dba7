// chat/parser.cpp — jinja2's grammar, recursive descent over the lexer's tokens, with a
// bound on nesting so that a hostile template cannot exhaust the stack. Must not touch:
// lexing, evaluation.
#include "chat/parser.h"

#include <charconv>
#include <cstdlib>
#include <initializer_list>

namespace strata::chat {

namespace {

constexpr int kMaxNesting = 100;

class Parser {
public:
    explicit Parser(const std::vector<Token>& t) : t_(t) {}

    Body run() {
        auto [body, end] = parse_body({});
        (void)end;
        return std::move(body);
    }

private:
    const std::vector<Token>& t_;
    size_t i_ = 0;
    int depth_ = 0;

    struct Nest {
        Parser& p;
        explicit Nest(Parser& parser) : p(parser) {
            if (++p.depth_ > kMaxNesting) p.fail("template nested more than " + std::to_string(kMaxNesting) + " deep");
        }
        ~Nest() { --p.depth_; }
    };

    const Token& cur() const { return t_[i_]; }
    const Token& next() { return t_[i_ < t_.size() - 1 ? i_++ : i_]; }
    [[noreturn]] void fail(const std::string& what) const {
        throw TemplateError("line " + std::to_string(cur().line) + ": " + what);
    }
    std::string describe() const {
        switch (cur().type) {
            case Token::Type::End: return "end of template";
            case Token::Type::BlockEnd: return "'%}'";
            case Token::Type::VarEnd: return "'}}'";
            case Token::Type::String: return "a string";
            default: return "'" + cur().text + "'";
        }
    }
    bool is_op(std::string_view op) const { return cur().type == Token::Type::Op && cur().text == op; }
    bool is_name(std::string_view n) const { return cur().type == Token::Type::Name && cur().text == n; }
    bool skip_op(std::string_view op) { return is_op(op) ? (next(), true) : false; }
    bool skip_name(std::string_view n) { return is_name(n) ? (next(), true) : false; }
    void expect_op(std::string_view op) {
        if (!skip_op(op)) fail("expected '" + std::string(op) + "', got " + describe());
    }
    std::string expect_name() {
        if (cur().type != Token::Type::Name) fail("expected a name, got " + describe());
        return next().text;
    }
    void expect_block_end() {
        if (cur().type != Token::Type::BlockEnd) fail("expected '%}', got " + describe());
        next();
    }

    static ExprPtr node(Expr::Kind k, int line) {
        auto e = std::make_unique<Expr>();
        e->kind = k;
        e->line = line;
        return e;
    }

    // Statements until a block tag whose name is one of `ends` (consumed up to the name).
    std::pair<Body, std::string> parse_body(std::initializer_list<std::string_view> ends) {
        Nest nest(*this);
        Body body;
        for (;;) {
            const Token& tok = cur();
            if (tok.type == Token::Type::End) {
                if (ends.size() == 0) return {std::move(body), ""};
                fail("unexpected end of template, expected '" + std::string(*ends.begin()) + "'");
            }
            if (tok.type == Token::Type::Text) {
                auto s = std::make_unique<Stmt>();
                s->kind = Stmt::Kind::Text;
                s->text = next().text;
                body.push_back(std::move(s));
            } else if (tok.type == Token::Type::VarBegin) {
                next();
                auto s = std::make_unique<Stmt>();
                s->kind = Stmt::Kind::Output;
                s->line = tok.line;
                s->expr = parse_tuple(true);
                if (cur().type != Token::Type::VarEnd) fail("expected '}}', got " + describe());
                next();
                body.push_back(std::move(s));
            } else {
                next();  // BlockBegin
                const std::string name = expect_name();
                for (auto e : ends)
                    if (name == e) return {std::move(body), name};
                parse_statement(name, tok.line, body);
            }
        }
    }

    void parse_statement(const std::string& name, int line, Body& out) {
        auto s = std::make_unique<Stmt>();
        s->line = line;
        if (name == "if") parse_if(*s);
        else if (name == "for") parse_for(*s);
        else if (name == "set") parse_set(*s);
        else if (name == "macro") parse_macro(*s);
        else if (name == "call") parse_call_block(*s);
        else if (name == "filter") parse_filter_block(*s);
        else if (name == "break" || name == "continue") {
            s->kind = name == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue;
            expect_block_end();
        } else if (name == "generation") {  // Hugging Face's assistant-mask marker: renders its body
            expect_block_end();
            auto [body, end] = parse_body({"endgeneration"});
            expect_block_end();
            for (auto& st : body) out.push_back(std::move(st));
            return;
        } else {
            fail("unknown statement '" + name + "'");
        }
        out.push_back(std::move(s));
    }

    void parse_if(Stmt& s) {
        s.kind = Stmt::Kind::If;
        for (;;) {
            ExprPtr cond = parse_tuple(true);
            expect_block_end();
            auto [body, end] = parse_body({"elif", "else", "endif"});
            s.branches.emplace_back(std::move(cond), std::move(body));
            if (end == "elif") continue;
            if (end == "else") {
                expect_block_end();
                s.else_body = parse_body({"endif"}).first;
            }
            expect_block_end();
            return;
        }
    }

    void parse_targets(Stmt& s) {
        const bool paren = skip_op("(");
        do s.targets.push_back(expect_name());
        while (skip_op(","));
        if (paren) expect_op(")");
    }

    void parse_for(Stmt& s) {
        s.kind = Stmt::Kind::For;
        parse_targets(s);
        if (!skip_name("in")) fail("expected 'in', got " + describe());
        s.expr = parse_tuple(false);
        if (skip_name("if")) s.cond = parse_expression(true);
        if (is_name("recursive")) fail("recursive for loops are not supported");
        expect_block_end();
        auto [body, end] = parse_body({"else", "endfor"});
        s.body = std::move(body);
        if (end == "else") {
            expect_block_end();
            s.else_body = parse_body({"endfor"}).first;
        }
        expect_block_end();
    }

    void parse_set(Stmt& s) {
        const std::string first = expect_name();
        if (skip_op(".")) {
            s.attr_of = first;
            s.targets.push_back(expect_name());
        } else {
            s.targets.push_back(first);
            while (skip_op(",")) s.targets.push_back(expect_name());
        }
        if (skip_op("=")) {
            s.kind = Stmt::Kind::Set;
            s.expr = parse_tuple(true);
            expect_block_end();
            return;
        }
        if (s.targets.size() != 1 || !s.attr_of.empty()) fail("expected '=' in a set statement");
        s.kind = Stmt::Kind::SetBlock;
        if (is_op("|")) s.expr = parse_filter_chain(nullptr);
        expect_block_end();
        s.body = parse_body({"endset"}).first;
        expect_block_end();
    }

    void parse_params(Stmt& s) {
        expect_op("(");
        while (!skip_op(")")) {
            if (!s.params.empty()) expect_op(",");
            if (skip_op(")")) break;
            MacroParam p{expect_name(), nullptr};
            if (skip_op("=")) p.default_value = parse_expression(true);
            s.params.push_back(std::move(p));
        }
    }

    void parse_macro(Stmt& s) {
        s.kind = Stmt::Kind::Macro;
        s.text = expect_name();
        parse_params(s);
        expect_block_end();
        s.body = parse_body({"endmacro"}).first;
        if (cur().type == Token::Type::Name) next();  // {% endmacro name %}
        expect_block_end();
    }

    void parse_call_block(Stmt& s) {
        s.kind = Stmt::Kind::CallBlock;
        if (is_op("(")) parse_params(s);
        s.expr = parse_expression(true);
        if (s.expr->kind != Expr::Kind::Call) fail("expected a call in a call block");
        expect_block_end();
        s.body = parse_body({"endcall"}).first;
        expect_block_end();
    }

    void parse_filter_block(Stmt& s) {
        s.kind = Stmt::Kind::FilterBlock;
        s.expr = parse_filter_chain(nullptr, false);
        expect_block_end();
        s.body = parse_body({"endfilter"}).first;
        expect_block_end();
    }

    // ---- expressions -------------------------------------------------------------------

    ExprPtr parse_tuple(bool with_condexpr) {
        const int line = cur().line;
        ExprPtr first = parse_expression(with_condexpr);
        if (!is_op(",")) return first;
        auto t = node(Expr::Kind::TupleLit, line);
        t->args.push_back(std::move(first));
        while (skip_op(",")) {
            if (at_tuple_end()) break;
            t->args.push_back(parse_expression(with_condexpr));
        }
        return t;
    }

    bool at_tuple_end() const {
        return cur().type == Token::Type::VarEnd || cur().type == Token::Type::BlockEnd || is_op(")") || is_name("if") ||
               is_name("in");
    }

    ExprPtr parse_expression(bool with_condexpr) {
        Nest nest(*this);
        ExprPtr e = parse_or();
        while (with_condexpr && is_name("if")) {
            const int line = next().line;
            auto c = node(Expr::Kind::Cond, line);
            c->b = parse_or();
            if (skip_name("else")) c->c = parse_expression(true);
            c->a = std::move(e);
            e = std::move(c);
        }
        return e;
    }

    ExprPtr binary(Expr::Kind k, std::string op, ExprPtr l, ExprPtr r, int line) {
        auto e = node(k, line);
        e->name = std::move(op);
        e->a = std::move(l);
        e->b = std::move(r);
        return e;
    }

    ExprPtr parse_or() {
        ExprPtr l = parse_and();
        while (is_name("or")) {
            const int line = next().line;
            l = binary(Expr::Kind::Or, "or", std::move(l), parse_and(), line);
        }
        return l;
    }

    ExprPtr parse_and() {
        ExprPtr l = parse_not();
        while (is_name("and")) {
            const int line = next().line;
            l = binary(Expr::Kind::And, "and", std::move(l), parse_not(), line);
        }
        return l;
    }

    ExprPtr parse_not() {
        Nest nest(*this);
        if (is_name("not")) {
            auto e = node(Expr::Kind::Unary, next().line);
            e->name = "not";
            e->a = parse_not();
            return e;
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        ExprPtr l = parse_math1();
        for (;;) {
            const int line = cur().line;
            std::string op;
            if (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">=")) op = next().text;
            else if (skip_name("in")) op = "in";
            else if (is_name("not") && t_[i_ + 1].type == Token::Type::Name && t_[i_ + 1].text == "in") {
                next();
                next();
                op = "not in";
            } else {
                return l;
            }
            l = binary(Expr::Kind::Binary, op, std::move(l), parse_math1(), line);
        }
    }

    template <class Sub>
    ExprPtr left_assoc(std::initializer_list<std::string_view> ops, Sub sub) {
        ExprPtr l = (this->*sub)();
        for (;;) {
            bool matched = false;
            for (auto op : ops)
                if (is_op(op)) {
                    const Token& t = next();
                    l = binary(Expr::Kind::Binary, t.text, std::move(l), (this->*sub)(), t.line);
                    matched = true;
                    break;
                }
            if (!matched) return l;
        }
    }

    ExprPtr parse_math1() { return left_assoc({"+", "-"}, &Parser::parse_concat); }
    ExprPtr parse_concat() { return left_assoc({"~"}, &Parser::parse_math2); }
    ExprPtr parse_math2() { return left_assoc({"*", "/", "//", "%"}, &Parser::parse_pow); }
    ExprPtr parse_pow() { return left_assoc({"**"}, &Parser::parse_unary_filtered); }
    ExprPtr parse_unary_filtered() { return parse_unary(true); }

    ExprPtr parse_unary(bool with_filter) {
        Nest nest(*this);
        ExprPtr e;
        if (is_op("-") || is_op("+")) {
            const Token& t = next();
            e = node(Expr::Kind::Unary, t.line);
            e->name = t.text;
            e->a = parse_unary(false);
        } else {
            e = parse_primary();
        }
        e = parse_postfix(std::move(e));
        return with_filter ? parse_filter_expr(std::move(e)) : std::move(e);
    }

    ExprPtr parse_primary() {
        const Token& t = cur();
        switch (t.type) {
            case Token::Type::Name: {
                next();
                auto e = node(Expr::Kind::Literal, t.line);
                if (t.text == "true" || t.text == "True") e->value = Value(true);
                else if (t.text == "false" || t.text == "False") e->value = Value(false);
                else if (t.text == "none" || t.text == "None") e->value = Value::none();
                else {
                    e->kind = Expr::Kind::Name;
                    e->name = t.text;
                }
                return e;
            }
            case Token::Type::String: {
                std::string s;
                while (cur().type == Token::Type::String) s += next().text;
                auto e = node(Expr::Kind::Literal, t.line);
                e->value = Value(std::move(s));
                return e;
            }
            case Token::Type::Int: {
                next();
                int64_t v = 0;
                auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
                if (r.ec != std::errc()) fail("integer " + t.text + " is too large");
                auto e = node(Expr::Kind::Literal, t.line);
                e->value = Value(v);
                return e;
            }
            case Token::Type::Float: {
                next();
                auto e = node(Expr::Kind::Literal, t.line);
                e->value = Value(std::strtod(t.text.c_str(), nullptr));  // 1e999 is inf, as in Python
                return e;
            }
            default: break;
        }
        if (skip_op("(")) {
            if (skip_op(")")) {
                auto e = node(Expr::Kind::TupleLit, t.line);
                return e;
            }
            ExprPtr e = parse_tuple(true);
            expect_op(")");
            return e;
        }
        if (skip_op("[")) {
            auto e = node(Expr::Kind::ListLit, t.line);
            while (!skip_op("]")) {
                if (!e->args.empty()) expect_op(",");
                if (skip_op("]")) break;
                e->args.push_back(parse_expression(true));
            }
            return e;
        }
        if (skip_op("{")) {
            auto e = node(Expr::Kind::DictLit, t.line);
            while (!skip_op("}")) {
                if (!e->dict_items.empty()) expect_op(",");
                if (skip_op("}")) break;
                ExprPtr k = parse_expression(true);
                expect_op(":");
                e->dict_items.emplace_back(std::move(k), parse_expression(true));
            }
            return e;
        }
        fail("unexpected " + describe());
    }

    ExprPtr parse_postfix(ExprPtr e) {
        for (;;) {
            const int line = cur().line;
            if (skip_op(".")) {
                if (cur().type == Token::Type::Int) {
                    auto item = node(Expr::Kind::Item, line);
                    item->a = std::move(e);
                    item->b = parse_primary();
                    e = std::move(item);
                } else {
                    auto attr = node(Expr::Kind::Attr, line);
                    attr->a = std::move(e);
                    attr->name = expect_name();
                    e = std::move(attr);
                }
            } else if (skip_op("[")) {
                e = parse_subscript(std::move(e), line);
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr parse_subscript(ExprPtr target, int line) {
        ExprPtr parts[3];
        int colons = 0;
        for (;;) {
            if (is_op("]")) break;
            if (skip_op(":")) {
                if (++colons > 2) fail("too many ':' in a slice");
                continue;
            }
            if (parts[colons]) fail("expected ']' or ':', got " + describe());
            parts[colons] = parse_expression(true);
        }
        expect_op("]");
        if (colons == 0) {
            if (!parts[0]) fail("expected an index");
            auto e = node(Expr::Kind::Item, line);
            e->a = std::move(target);
            e->b = std::move(parts[0]);
            return e;
        }
        auto e = node(Expr::Kind::Slice, line);
        e->a = std::move(target);
        e->args.push_back(std::move(parts[0]));
        e->args.push_back(std::move(parts[1]));
        e->args.push_back(std::move(parts[2]));
        return e;
    }

    void parse_call_args(Expr& e) {
        expect_op("(");
        bool first = true;
        while (!skip_op(")")) {
            if (!first) expect_op(",");
            first = false;
            if (skip_op(")")) break;
            if (cur().type == Token::Type::Name && t_[i_ + 1].type == Token::Type::Op && t_[i_ + 1].text == "=") {
                std::string k = next().text;
                next();
                e.kwargs.emplace_back(std::move(k), parse_expression(true));
            } else {
                if (!e.kwargs.empty()) fail("positional argument after a keyword argument");
                e.args.push_back(parse_expression(true));
            }
        }
    }

    ExprPtr parse_call(ExprPtr callee) {
        auto e = node(Expr::Kind::Call, cur().line);
        e->a = std::move(callee);
        parse_call_args(*e);
        return e;
    }

    std::string dotted_name() {
        std::string n = expect_name();
        while (skip_op(".")) n += "." + expect_name();
        return n;
    }

    ExprPtr parse_filter(ExprPtr target) {
        auto f = node(Expr::Kind::Filter, cur().line);
        f->a = std::move(target);
        f->name = dotted_name();
        if (is_op("(")) parse_call_args(*f);
        return f;
    }

    // `| f | g(...)`, starting at the first '|' when `leading_bar`.
    ExprPtr parse_filter_chain(ExprPtr target, bool leading_bar = true) {
        if (!leading_bar) target = parse_filter(std::move(target));
        while (skip_op("|")) target = parse_filter(std::move(target));
        return target;
    }

    ExprPtr parse_test(ExprPtr target) {
        auto t = node(Expr::Kind::Test, cur().line);
        t->negated = skip_name("not");
        t->a = std::move(target);
        t->name = dotted_name();
        if (is_op("(")) {
            parse_call_args(*t);
        } else if ((cur().type == Token::Type::Name || cur().type == Token::Type::String || cur().type == Token::Type::Int ||
                    cur().type == Token::Type::Float || is_op("[") || is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and")) {
            if (is_name("is")) fail("You cannot chain multiple tests with is");
            t->args.push_back(parse_postfix(parse_primary()));
        }
        return t;
    }

    ExprPtr parse_filter_expr(ExprPtr e) {
        for (;;) {
            if (skip_op("|")) e = parse_filter(std::move(e));
            else if (skip_name("is")) e = parse_test(std::move(e));
            else if (is_op("(")) e = parse_call(std::move(e));
            else return e;
        }
    }
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).run(); }

}  // namespace strata::chat
