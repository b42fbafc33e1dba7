// chat/value.cpp — template values with Python's semantics: truth, ==, <, str(), repr()
// and json.dumps. Must not touch: parsing or evaluating templates.
#include "chat/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/text.h"

namespace strata::chat {

const Value* Dict::find(std::string_view key) const {
    for (const auto& [k, v] : entries)
        if (k.is_string() && k.as_string() == key) return &v;
    return nullptr;
}

const Value* Dict::lookup(const Value& key) const {
    for (const auto& [k, v] : entries)
        if (equal(k, key)) return &v;
    return nullptr;
}

void Dict::set(Value key, Value value) {
    for (auto& [k, v] : entries)
        if (equal(k, key)) {
            v = std::move(value);
            return;
        }
    entries.emplace_back(std::move(key), std::move(value));
}

std::optional<Value> CallArgs::get(size_t i, std::string_view name) const {
    if (i < positional.size()) return positional[i];
    for (const auto& [k, v] : named)
        if (k == name) return v;
    return std::nullopt;
}

Value Value::none() {
    Value v;
    v.kind_ = Kind::None;
    return v;
}

Value Value::undefined(std::string name) {
    Value v;
    v.s_ = std::make_shared<const std::string>(std::move(name));
    return v;
}

Value::Value(bool b) : kind_(Kind::Bool), b_(b), i_(b ? 1 : 0) {}
Value::Value(int64_t i) : kind_(Kind::Int), i_(i) {}
Value::Value(double d) : kind_(Kind::Float), d_(d) {}
Value::Value(std::string s) : kind_(Kind::String), s_(std::make_shared<const std::string>(std::move(s))) {}
Value::Value(List items, bool tuple)
    : kind_(tuple ? Kind::Tuple : Kind::List), list_(std::make_shared<const List>(std::move(items))) {}
Value::Value(Dict d) : kind_(Kind::Dict), dict_(std::make_shared<Dict>(std::move(d))) {}

Value Value::markup(std::string s) {
    Value v(std::move(s));
    v.markup_ = true;
    return v;
}

Value Value::namespace_of(Dict d) {
    Value v(std::move(d));
    v.kind_ = Kind::Namespace;
    return v;
}

Value Value::function(std::string name, std::function<Value(CallArgs&)> fn) {
    Value v;
    v.kind_ = Kind::Callable;
    v.fn_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(fn)});
    return v;
}

const std::string& Value::undefined_name() const {
    static const std::string none;
    return s_ ? *s_ : none;
}

std::string Value::type_name() const {
    switch (kind_) {
        case Kind::Undefined: return "Undefined";
        case Kind::None: return "NoneType";
        case Kind::Bool: return "bool";
        case Kind::Int: return "int";
        case Kind::Float: return "float";
        case Kind::String: return "str";
        case Kind::List: return "list";
        case Kind::Tuple: return "tuple";
        case Kind::Dict: return "dict";
        case Kind::Namespace: return "Namespace";
        case Kind::Callable: return "function";
    }
    return "?";
}

bool truthy(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined:
        case Value::Kind::None: return false;
        case Value::Kind::Bool: return v.as_bool();
        case Value::Kind::Int: return v.as_int() != 0;
        case Value::Kind::Float: return v.as_float() != 0.0;
        case Value::Kind::String: return !v.as_string().empty();
        case Value::Kind::List:
        case Value::Kind::Tuple: return !v.as_list().empty();
        case Value::Kind::Dict: return !v.as_dict().entries.empty();
        case Value::Kind::Namespace:
        case Value::Kind::Callable: return true;
    }
    return false;
}

bool equal(const Value& a, const Value& b) {
    using K = Value::Kind;
    if (a.is_number() && b.is_number()) {
        if (a.kind() == K::Float || b.kind() == K::Float) return a.as_float() == b.as_float();
        return a.as_int() == b.as_int();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case K::Undefined:
        case K::None: return true;
        case K::String: return a.as_string() == b.as_string();
        case K::List:
        case K::Tuple:
            return std::equal(a.as_list().begin(), a.as_list().end(), b.as_list().begin(), b.as_list().end(), equal);
        case K::Dict: {
            const auto& x = a.as_dict().entries;
            const auto& y = b.as_dict();
            if (x.size() != y.entries.size()) return false;
            return std::all_of(x.begin(), x.end(), [&](const auto& kv) {
                const Value* o = y.lookup(kv.first);
                return o && equal(kv.second, *o);
            });
        }
        case K::Namespace: return &a.namespace_dict() == &b.namespace_dict();
        case K::Callable: return &a.as_callable() == &b.as_callable();
        default: return false;
    }
}

bool less(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) return a.as_float() < b.as_float();
    if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order = code point order
    if (a.kind() == b.kind() && a.is_sequence()) {
        const List& x = a.as_list();
        const List& y = b.as_list();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i)
            if (!equal(x[i], y[i])) return less(x[i], y[i]);
        return x.size() < y.size();
    }
    throw TemplateError("'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);  // [-]d[.ddd]e[+-]XX
    const bool neg = sci[0] == '-';
    if (neg) sci.erase(0, 1);
    const size_t e = sci.find('e');
    const int exp = std::stoi(sci.substr(e + 1));
    std::string digits = sci.substr(0, e);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    std::string out;
    if (exp < -4 || exp >= 16) {
        out = digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char ebuf[16];
        std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        out += ebuf;
    } else if (exp < 0) {
        out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else {
        if (digits.size() <= static_cast<size_t>(exp) + 1) digits.append(static_cast<size_t>(exp) + 1 - digits.size(), '0');
        out = digits.substr(0, static_cast<size_t>(exp) + 1) + ".";
        const std::string frac = digits.substr(static_cast<size_t>(exp) + 1);
        out += frac.empty() ? "0" : frac;
    }
    return neg ? "-" + out : out;
}

namespace {

bool printable(char32_t c) {
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return false;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F)) return false;
    if (c == 0x3000 || c == 0xFEFF || (c >= 0xD800 && c <= 0xF8FF) || c >= 0xF0000) return false;
    return true;
}

std::string hex_escape(char32_t c) {
    char buf[16];
    if (c <= 0xFF) std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
    else if (c <= 0xFFFF) std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
    else std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
    return buf;
}

std::string string_repr(const std::string& s) {
    const bool has_single = s.find('\'') != std::string::npos;
    const char quote = has_single && s.find('"') == std::string::npos ? '"' : '\'';
    std::string result(1, quote);
    for (char32_t c : text::decode(s)) {
        if (c == '\\') result += "\\\\";
        else if (c == static_cast<char32_t>(quote)) result += std::string("\\") + quote;
        else if (c == '\n') result += "\\n";
        else if (c == '\r') result += "\\r";
        else if (c == '\t') result += "\\t";
        else if (!printable(c)) result += hex_escape(c);
        else result += text::encode(std::u32string_view(&c, 1));
    }
    return result + quote;
}

// Values nested deeper than Python's recursion limit (lists wrapped in a loop) are refused
// as Python refuses them, before the printers' recursion overflows the stack.
class NestingGuard {
public:
    explicit NestingGuard(const char* doing) {
        if (++depth_ > 1000) {
            --depth_;
            throw TemplateError(std::string("maximum recursion depth exceeded while ") + doing);
        }
    }
    ~NestingGuard() { --depth_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

private:
    static inline thread_local int depth_ = 0;
};

std::string sequence_repr(const Value& v) {
    const bool tuple = v.kind() == Value::Kind::Tuple;
    std::string out = tuple ? "(" : "[";
    const List& items = v.as_list();
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + repr(items[i]);
    if (tuple && items.size() == 1) out += ",";
    return out + (tuple ? ")" : "]");
}

// The dicts whose repr is being written on this thread: a namespace (the one mutable
// value) can hold itself, directly or through a list, and Python prints such a dict again
// as {...}.
thread_local std::vector<const Dict*> dicts_in_repr;

std::string dict_repr(const Dict& d) {
    if (std::find(dicts_in_repr.begin(), dicts_in_repr.end(), &d) != dicts_in_repr.end()) return "{...}";
    dicts_in_repr.push_back(&d);
    struct Pop {
        ~Pop() { dicts_in_repr.pop_back(); }
    } pop;
    std::string out = "{";
    for (size_t i = 0; i < d.entries.size(); ++i)
        out += (i ? ", " : "") + repr(d.entries[i].first) + ": " + repr(d.entries[i].second);
    return out + "}";
}

}  // namespace

std::string to_str(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined: return "";
        case Value::Kind::String: return v.as_string();
        default: return repr(v);
    }
}

std::string repr(const Value& v) {
    const NestingGuard guard("getting the repr of an object");
    switch (v.kind()) {
        case Value::Kind::Undefined: return "Undefined";
        case Value::Kind::None: return "None";
        case Value::Kind::Bool: return v.as_bool() ? "True" : "False";
        case Value::Kind::Int: return std::to_string(v.as_int());
        case Value::Kind::Float: return float_repr(v.as_float());
        case Value::Kind::String: return string_repr(v.as_string());
        case Value::Kind::List:
        case Value::Kind::Tuple: return sequence_repr(v);
        case Value::Kind::Dict: return dict_repr(v.as_dict());
        case Value::Kind::Namespace: return "<Namespace " + dict_repr(v.namespace_dict()) + ">";
        case Value::Kind::Callable: return "<function " + v.as_callable().name + ">";
    }
    return "";
}

namespace {

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
    out += '"';
    for (char32_t c : text::decode(s)) {
        switch (c) {
            case '"': out += "\\\""; continue;
            case '\\': out += "\\\\"; continue;
            case '\n': out += "\\n"; continue;
            case '\r': out += "\\r"; continue;
            case '\t': out += "\\t"; continue;
            case '\b': out += "\\b"; continue;
            case '\f': out += "\\f"; continue;
            default: break;
        }
        char buf[16];
        if (c < 0x20 || (ensure_ascii && c >= 0x7F && c <= 0xFFFF)) {
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            out += buf;
        } else if (ensure_ascii && c > 0xFFFF) {
            const unsigned u = static_cast<unsigned>(c) - 0x10000;
            std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (u >> 10), 0xDC00 + (u & 0x3FF));
            out += buf;
        } else {
            out += text::encode(std::u32string_view(&c, 1));
        }
    }
    out += '"';
}

struct JsonWriter {
    const JsonOptions& o;
    std::string item_sep;
    std::string out;

    void newline(int depth) {
        if (!o.indent) return;
        out += '\n';
        out.append(static_cast<size_t>(*o.indent * depth), ' ');
    }

    template <class Items, class Each>
    void container(char open, char close, const Items& items, int depth, Each each) {
        out += open;
        if (items.empty()) {
            out += close;
            return;
        }
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += item_sep;
            newline(depth + 1);
            each(items[i]);
        }
        newline(depth);
        out += close;
    }

    // json.dumps writes a non-string key as the text of its JSON scalar (1 -> "1", True -> "true").
    std::string key_text(const Value& k) const {
        if (k.is_string()) return k.as_string();
        if (!k.is_number() && !k.is_none()) throw TemplateError("keys must be str, int, float, bool or None, not " + k.type_name());
        return to_json(k, o);
    }

    void write(const Value& v, int depth) {
        const NestingGuard guard("encoding a JSON object");
        using K = Value::Kind;
        switch (v.kind()) {
            case K::None: out += "null"; return;
            case K::Bool: out += v.as_bool() ? "true" : "false"; return;
            case K::Int: out += std::to_string(v.as_int()); return;
            case K::Float: {
                const double d = v.as_float();
                out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : float_repr(d);
                return;
            }
            case K::String: json_string(out, v.as_string(), o.ensure_ascii); return;
            case K::List:
            case K::Tuple: container('[', ']', v.as_list(), depth, [&](const Value& x) { write(x, depth + 1); }); return;
            case K::Dict: {
                auto entries = v.as_dict().entries;
                if (o.sort_keys)
                    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return less(a.first, b.first); });
                container('{', '}', entries, depth, [&](const auto& kv) {
                    json_string(out, key_text(kv.first), o.ensure_ascii);
                    out += o.key_separator;
                    write(kv.second, depth + 1);
                });
                return;
            }
            default: throw TemplateError("Object of type " + v.type_name() + " is not JSON serializable");
        }
    }
};

}  // namespace

std::string to_json(const Value& v, const JsonOptions& options) {
    JsonWriter w{options, options.item_separator.empty() ? (options.indent ? "," : ", ") : options.item_separator, {}};
    w.write(v, 0);
    return std::move(w.out);
}

}  // namespace strata::chat
