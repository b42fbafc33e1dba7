// chat/template.cpp — the interpreter: scopes as jinja2 sees them (a for-loop iteration and
// a macro call open one, if does not), statements, expressions with Python's operators,
// macros and call blocks, and the step / size / depth bounds. Must not touch: lexing and
// parsing details (lexer, parser), the builtin filters and methods (builtins).
#include "chat/template.h"

#include <cmath>
#include <unordered_map>

#include "chat/ast.h"
#include "chat/builtins.h"
#include "chat/lexer.h"
#include "chat/parser.h"

namespace strata::chat {

namespace {

using Kind = Value::Kind;

[[noreturn]] void fail(const std::string& what) { throw TemplateError(what); }

struct Scope {
    std::unordered_map<std::string, Value> vars;
    std::shared_ptr<Scope> parent;
};
using ScopePtr = std::shared_ptr<Scope>;

ScopePtr child(const ScopePtr& parent) {
    auto s = std::make_shared<Scope>();
    s->parent = parent;
    return s;
}

enum class Flow { Normal, Break, Continue };

template <class Op>
int64_t checked(Op op, int64_t x, int64_t y) {
    int64_t r = 0;
    if (op(x, y, &r)) fail("integer overflow");
    return r;
}

Value arith(const std::string& op, const Value& a, const Value& b) {
    const bool ints = a.kind() != Kind::Float && b.kind() != Kind::Float;
    const int64_t x = a.as_int(), y = b.as_int();
    const double fx = a.as_float(), fy = b.as_float();
    auto add = [](int64_t p, int64_t q, int64_t* r) { return __builtin_add_overflow(p, q, r); };
    auto sub = [](int64_t p, int64_t q, int64_t* r) { return __builtin_sub_overflow(p, q, r); };
    auto mul = [](int64_t p, int64_t q, int64_t* r) { return __builtin_mul_overflow(p, q, r); };
    if (op == "+") return ints ? Value(checked(add, x, y)) : Value(fx + fy);
    if (op == "-") return ints ? Value(checked(sub, x, y)) : Value(fx - fy);
    if (op == "*") return ints ? Value(checked(mul, x, y)) : Value(fx * fy);
    if (op == "/") {
        if (fy == 0) fail("division by zero");
        return Value(fx / fy);
    }
    if (op == "//" || op == "%") {
        if (ints ? y == 0 : fy == 0) fail(op == "//" ? "integer division or modulo by zero" : "modulo by zero");
        if (ints) {
            int64_t q = x / y, m = x % y;
            if (m != 0 && ((m < 0) != (y < 0))) --q, m += y;
            return op == "//" ? Value(q) : Value(m);
        }
        const double q = std::floor(fx / fy);
        return op == "//" ? Value(q) : Value(fx - q * fy);
    }
    // "**"
    if (ints && y >= 0) {
        int64_t acc = 1;
        for (int64_t i = 0; i < y; ++i) {
            acc = checked(mul, acc, x);
            if (acc == 0 || acc == 1) break;
        }
        return Value(acc);
    }
    return Value(std::pow(fx, fy));
}

std::string repeat(const std::string& s, int64_t n, size_t max) {
    if (n <= 0) return "";
    if (s.size() * static_cast<size_t>(n) > max) fail("string repetition longer than " + std::to_string(max) + " bytes");
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += s;
    return out;
}

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
    fail("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

class Interp {
public:
    Interp(const RenderLimits& limits, std::string& out) : lim_(limits), out_(&out) {}
    // A namespace can be made to hold itself (set ns.a = ns), a cycle of shared pointers:
    // every namespace written is emptied when the render ends, since none outlives it.
    ~Interp() {
        for (auto& [dict, ns] : written_) ns.namespace_dict().entries.clear();
    }
    Interp(const Interp&) = delete;
    Interp& operator=(const Interp&) = delete;

    Flow exec(const Body& body, const ScopePtr& scope) {
        for (const auto& s : body) {
            const Flow f = exec_stmt(*s, scope);
            if (f != Flow::Normal) return f;
        }
        return Flow::Normal;
    }

private:
    const RenderLimits& lim_;
    std::string* out_;
    std::unordered_map<const Dict*, Value> written_;  // the namespaces assigned into
    uint64_t steps_ = 0;
    int depth_ = 0;

    void step() {
        if (++steps_ > lim_.max_steps) fail("the template ran more than " + std::to_string(lim_.max_steps) + " steps");
    }

    void write(const std::string& s) {
        *out_ += s;
        if (out_->size() > lim_.max_output) fail("the output is longer than " + std::to_string(lim_.max_output) + " bytes");
    }

    // Renders `body` into a string of its own.
    std::string capture(const Body& body, const ScopePtr& scope) {
        std::string buf;
        std::string* saved = out_;
        out_ = &buf;
        try {
            exec(body, scope);
        } catch (...) {
            out_ = saved;
            throw;
        }
        out_ = saved;
        return buf;
    }

    Flow exec_stmt(const Stmt& s, const ScopePtr& scope) {
        step();
        try {
            return run(s, scope);
        } catch (const TemplateRaised&) {
            throw;
        } catch (const TemplateError& e) {
            const std::string msg = e.what();
            if (msg.rfind("line ", 0) == 0 || s.line == 0) throw;
            throw TemplateError("line " + std::to_string(s.line) + ": " + msg);
        }
    }

    Flow run(const Stmt& s, const ScopePtr& scope) {
        switch (s.kind) {
            case Stmt::Kind::Text: write(s.text); return Flow::Normal;
            case Stmt::Kind::Output: write(to_str(eval(*s.expr, scope))); return Flow::Normal;
            case Stmt::Kind::If:
                for (const auto& [cond, body] : s.branches)
                    if (truthy(eval(*cond, scope))) return exec(body, scope);
                return exec(s.else_body, scope);
            case Stmt::Kind::For: return run_for(s, scope);
            case Stmt::Kind::Set: assign(s, eval(*s.expr, scope), scope); return Flow::Normal;
            case Stmt::Kind::SetBlock: {
                Value v(capture(s.body, scope));
                if (s.expr) v = apply_chain(*s.expr, std::move(v), scope);
                scope->vars[s.targets[0]] = std::move(v);
                return Flow::Normal;
            }
            case Stmt::Kind::Macro: scope->vars[s.text] = make_macro(s, s.text, scope); return Flow::Normal;
            case Stmt::Kind::CallBlock: {
                Value caller = make_macro(s, "caller", scope);
                write(to_str(call(*s.expr, scope, &caller)));
                return Flow::Normal;
            }
            case Stmt::Kind::FilterBlock: write(to_str(apply_chain(*s.expr, Value(capture(s.body, scope)), scope))); return Flow::Normal;
            case Stmt::Kind::Break: return Flow::Break;
            case Stmt::Kind::Continue: return Flow::Continue;
        }
        return Flow::Normal;
    }

    static void bind(const std::vector<std::string>& targets, const Value& v, Scope& scope) {
        if (targets.size() == 1) {
            scope.vars[targets[0]] = v;
            return;
        }
        const List items = iterate(v);
        if (items.size() != targets.size())
            fail("cannot unpack " + std::to_string(items.size()) + " values into " + std::to_string(targets.size()) + " names");
        for (size_t i = 0; i < targets.size(); ++i) scope.vars[targets[i]] = items[i];
    }

    void assign(const Stmt& s, const Value& v, const ScopePtr& scope) {
        if (s.attr_of.empty()) {
            bind(s.targets, v, *scope);
            return;
        }
        const Value ns = lookup(s.attr_of, scope);
        if (ns.kind() != Kind::Namespace) fail("cannot assign attribute on non-namespace object");
        written_.emplace(&ns.namespace_dict(), ns);
        ns.namespace_dict().set(s.targets[0], v);
    }

    Flow run_for(const Stmt& s, const ScopePtr& scope) {
        List items = iterate(eval(*s.expr, scope));
        if (s.cond) {
            List kept;
            for (auto& it : items) {
                auto probe = child(scope);
                bind(s.targets, it, *probe);
                if (truthy(eval(*s.cond, probe))) kept.push_back(std::move(it));
            }
            items = std::move(kept);
        }
        if (items.empty()) return exec(s.else_body, scope);
        const size_t n = items.size();
        for (size_t i = 0; i < n; ++i) {
            step();
            auto iter = child(scope);
            bind(s.targets, items[i], *iter);
            iter->vars["loop"] = loop_object(items, i);
            if (exec(s.body, iter) == Flow::Break) break;
        }
        return Flow::Normal;
    }

    static Value loop_object(const List& items, size_t i) {
        const auto n = static_cast<int64_t>(items.size());
        const auto k = static_cast<int64_t>(i);
        Dict d;
        d.set("index", Value(k + 1));
        d.set("index0", Value(k));
        d.set("revindex", Value(n - k));
        d.set("revindex0", Value(n - k - 1));
        d.set("first", Value(k == 0));
        d.set("last", Value(k == n - 1));
        d.set("length", Value(n));
        d.set("depth", Value(1));
        d.set("depth0", Value(0));
        d.set("previtem", k > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
        d.set("nextitem", k < n - 1 ? items[i + 1] : Value::undefined("there is no next item"));
        d.set("cycle", Value::function("cycle", [k](CallArgs& a) {
                  if (a.positional.empty()) fail("no items for cycling given");
                  return a.positional[static_cast<size_t>(k) % a.positional.size()];
              }));
        return Value(std::move(d));
    }

    Value make_macro(const Stmt& s, const std::string& name, const ScopePtr& scope) {
        // The defining scope is held weakly: the macro usually lives in it.
        std::weak_ptr<Scope> weak = scope;
        return Value::function(name, [this, &s, name, weak](CallArgs& a) {
            const ScopePtr defined_in = weak.lock();
            if (!defined_in) fail("macro '" + name + "' called outside the block that defined it");
            if (++depth_ > lim_.max_call_depth) {
                --depth_;
                fail("macro calls nested more than " + std::to_string(lim_.max_call_depth) + " deep");
            }
            try {
                Value out = call_macro(s, name, defined_in, a);
                --depth_;
                return out;
            } catch (...) {
                --depth_;
                throw;
            }
        });
    }

    Value call_macro(const Stmt& s, const std::string& name, const ScopePtr& defined_in, CallArgs& a) {
        auto frame = child(defined_in);
        if (a.positional.size() > s.params.size())
            fail("macro '" + name + "' takes not more than " + std::to_string(s.params.size()) + " argument(s)");
        for (const auto& kv : a.named) {
            const std::string& k = kv.first;
            const bool known = k == "caller" || std::any_of(s.params.begin(), s.params.end(), [&](const MacroParam& p) { return p.name == k; });
            if (!known) fail("macro '" + name + "' takes no keyword argument '" + k + "'");
            frame->vars[k] = kv.second;
        }
        for (size_t i = 0; i < s.params.size(); ++i) {
            const MacroParam& p = s.params[i];
            if (i < a.positional.size()) frame->vars[p.name] = a.positional[i];
            else if (frame->vars.count(p.name)) continue;
            else if (p.default_value) frame->vars[p.name] = eval(*p.default_value, frame);
            else frame->vars[p.name] = Value::undefined("parameter '" + p.name + "' was not provided");
        }
        return Value(capture(s.body, frame));
    }

    static Value lookup(const std::string& name, const ScopePtr& scope) {
        for (const Scope* s = scope.get(); s; s = s->parent.get()) {
            auto it = s->vars.find(name);
            if (it != s->vars.end()) return it->second;
        }
        return Value::undefined("'" + name + "' is undefined");
    }

    CallArgs eval_args(const Expr& e, const ScopePtr& scope) {
        CallArgs a;
        for (const auto& x : e.args) a.positional.push_back(eval(*x, scope));
        for (const auto& [k, x] : e.kwargs) a.named.emplace_back(k, eval(*x, scope));
        return a;
    }

    Value call(const Expr& e, const ScopePtr& scope, const Value* caller = nullptr) {
        const Value f = eval(*e.a, scope);
        if (f.is_undefined()) fail_undefined(f);
        if (f.kind() != Kind::Callable) fail("'" + f.type_name() + "' object is not callable");
        CallArgs a = eval_args(e, scope);
        if (caller) a.named.emplace_back("caller", *caller);
        return f.as_callable().call(a);
    }

    // A filter chain whose innermost input is `input` (the chain's null leaf).
    Value apply_chain(const Expr& e, Value input, const ScopePtr& scope) {
        Value in = e.a ? apply_chain(*e.a, std::move(input), scope) : std::move(input);
        CallArgs a = eval_args(e, scope);
        return apply_filter(e.name, in, a);
    }

    Value eval(const Expr& e, const ScopePtr& scope) {
        step();
        Value v = eval_node(e, scope);
        if ((v.is_string() && v.as_string().size() > lim_.max_output) || (v.is_sequence() && v.as_list().size() > lim_.max_output))
            fail("a value larger than " + std::to_string(lim_.max_output) + " was built");
        return v;
    }

    Value eval_node(const Expr& e, const ScopePtr& scope) {
        switch (e.kind) {
            case Expr::Kind::Literal: return e.value;
            case Expr::Kind::Name: return lookup(e.name, scope);
            case Expr::Kind::Attr: return get_attribute(eval(*e.a, scope), e.name);
            case Expr::Kind::Item: return get_item(eval(*e.a, scope), eval(*e.b, scope));
            case Expr::Kind::Slice: {
                const Value obj = eval(*e.a, scope);
                Value parts[3];
                for (int i = 0; i < 3; ++i)
                    if (e.args[i]) parts[i] = eval(*e.args[i], scope);
                return slice(obj, e.args[0] ? &parts[0] : nullptr, e.args[1] ? &parts[1] : nullptr, e.args[2] ? &parts[2] : nullptr);
            }
            case Expr::Kind::Call: return call(e, scope);
            case Expr::Kind::Filter: {
                const Value in = eval(*e.a, scope);
                CallArgs a = eval_args(e, scope);
                return apply_filter(e.name, in, a);
            }
            case Expr::Kind::Test: {
                const Value in = eval(*e.a, scope);
                CallArgs a = eval_args(e, scope);
                return Value(apply_test(e.name, in, a) != e.negated);
            }
            case Expr::Kind::Unary: return unary(e.name, eval(*e.a, scope));
            case Expr::Kind::Binary: return binary(e.name, eval(*e.a, scope), eval(*e.b, scope));
            case Expr::Kind::And: {
                Value l = eval(*e.a, scope);
                return truthy(l) ? eval(*e.b, scope) : l;
            }
            case Expr::Kind::Or: {
                Value l = eval(*e.a, scope);
                return truthy(l) ? l : eval(*e.b, scope);
            }
            case Expr::Kind::Cond:
                if (truthy(eval(*e.b, scope))) return eval(*e.a, scope);
                return e.c ? eval(*e.c, scope) : Value::undefined("the inline if expression evaluated to false and no else section was defined");
            case Expr::Kind::ListLit:
            case Expr::Kind::TupleLit: {
                List items;
                for (const auto& x : e.args) items.push_back(eval(*x, scope));
                return Value(std::move(items), e.kind == Expr::Kind::TupleLit);
            }
            case Expr::Kind::DictLit: {
                Dict d;
                for (const auto& [k, x] : e.dict_items) {
                    const Value key = eval(*k, scope);
                    if (key.kind() == Value::Kind::List || key.kind() == Value::Kind::Dict)
                        fail("unhashable type: '" + key.type_name() + "'");
                    d.set(key, eval(*x, scope));
                }
                return Value(std::move(d));
            }
        }
        return {};
    }

    static Value unary(const std::string& op, const Value& v) {
        if (op == "not") return Value(!truthy(v));
        if (v.is_undefined()) fail_undefined(v);
        if (!v.is_number()) fail("bad operand type for unary " + op + ": '" + v.type_name() + "'");
        if (op == "+") return v.kind() == Kind::Float ? v : Value(v.as_int());
        return v.kind() == Kind::Float ? Value(-v.as_float()) : Value(arith("-", Value(0), v));
    }

    Value binary(const std::string& op, const Value& a, const Value& b) {
        if (op == "==") return Value(equal(a, b));
        if (op == "!=") return Value(!equal(a, b));
        if (op == "in") return Value(contains(b, a));
        if (op == "not in") return Value(!contains(b, a));
        if (op == "~") return Value(to_str(a) + to_str(b));
        if (op == "<") return Value(less(a, b));
        if (op == ">") return Value(less(b, a));
        if (op == "<=") return Value(!less(b, a));
        if (op == ">=") return Value(!less(a, b));
        if (a.is_undefined()) fail_undefined(a);
        if (b.is_undefined()) fail_undefined(b);
        if (a.is_number() && b.is_number()) return arith(op, a, b);
        if (op == "+") {
            if (a.is_string() && b.is_string()) return concat(a, b);
            if (a.is_sequence() && a.kind() == b.kind()) {
                List items = a.as_list();
                items.insert(items.end(), b.as_list().begin(), b.as_list().end());
                return Value(std::move(items), a.kind() == Kind::Tuple);
            }
            if (a.is_string()) fail("can only concatenate str (not \"" + b.type_name() + "\") to str");
        }
        if (op == "*") {
            const Value& seq = a.is_number() ? b : a;
            const Value& n = a.is_number() ? a : b;
            if (n.kind() == Kind::Int || n.kind() == Kind::Bool) {
                if (seq.is_string()) return Value(repeat(seq.as_string(), n.as_int(), lim_.max_output));
                if (seq.is_sequence()) {
                    if (n.as_int() > 0 && seq.as_list().size() * static_cast<size_t>(n.as_int()) > lim_.max_output)
                        fail("list repetition longer than " + std::to_string(lim_.max_output) + " items");
                    List items;
                    for (int64_t i = 0; i < n.as_int(); ++i) items.insert(items.end(), seq.as_list().begin(), seq.as_list().end());
                    return Value(std::move(items), seq.kind() == Kind::Tuple);
                }
            }
        }
        unsupported(op, a, b);
    }
};

}  // namespace

Template::Template(std::string_view source) : body_(std::make_unique<Body>(parse(lex(source)))) {}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const Dict& variables, const RenderLimits& limits) const {
    auto globals = std::make_shared<Scope>();
    for (auto& [k, v] : builtin_globals(limits.max_output).entries) globals->vars[to_str(k)] = v;
    for (const auto& [k, v] : variables.entries) globals->vars[to_str(k)] = v;
    auto top = child(globals);
    std::string out;
    try {
        Interp(limits, out).exec(*body_, top);
    } catch (const TemplateError&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {  // a library error inside a builtin: still the template's failure
        throw TemplateError(e.what());
    }
    return out;
}

}  // namespace strata::chat
