// chat/builtins.cpp — jinja2's filters and tests, Python's str/dict/list methods and the
// globals, with the semantics of jinja2 3.1 and CPython. Must not touch: statements,
// scopes, output (interpreter).
#include "chat/builtins.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "chat/text.h"

namespace strata::chat {

namespace {

using Kind = Value::Kind;

[[noreturn]] void fail(const std::string& what) { throw TemplateError(what); }

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string object_name(const Value& v) { return "'" + v.type_name() + " object'"; }

Value missing_attribute(const Value& obj, std::string_view name) {
    return Value::undefined(object_name(obj) + " has no attribute '" + std::string(name) + "'");
}

int64_t to_int_arg(const std::optional<Value>& v, int64_t fallback, const char* what) {
    if (!v || v->is_none()) return fallback;
    if (v->kind() != Kind::Int && v->kind() != Kind::Bool) fail(std::string(what) + " must be an integer, not " + v->type_name());
    return v->as_int();
}

std::string string_arg(const std::optional<Value>& v, const char* what) {
    if (!v || !v->is_string()) fail(std::string(what) + " must be a string" + (v ? ", not " + v->type_name() : ""));
    return v->as_string();
}

const std::string& self_string(const Value& v) {
    if (!v.is_string()) fail("expected a string, not " + v.type_name());
    return v.as_string();
}

// ---- str methods ----------------------------------------------------------------------

List split(const std::string& s, const std::optional<Value>& sep_arg, int64_t maxsplit) {
    List out;
    if (!sep_arg || sep_arg->is_none()) {
        const std::u32string cps = text::decode(s);
        size_t i = 0;
        while (i < cps.size()) {
            while (i < cps.size() && text::is_space(cps[i])) ++i;
            if (i == cps.size()) break;
            if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
                size_t e = cps.size();
                while (e > i && text::is_space(cps[e - 1])) --e;
                out.emplace_back(text::encode(std::u32string_view(cps).substr(i, e - i)));
                break;
            }
            size_t j = i;
            while (j < cps.size() && !text::is_space(cps[j])) ++j;
            out.emplace_back(text::encode(std::u32string_view(cps).substr(i, j - i)));
            i = j;
        }
        return out;
    }
    const std::string sep = string_arg(sep_arg, "the separator");
    if (sep.empty()) fail("empty separator");
    size_t start = 0;
    for (size_t p; (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) && (p = s.find(sep, start)) != std::string::npos;
         start = p + sep.size())
        out.emplace_back(s.substr(start, p - start));
    out.emplace_back(s.substr(start));
    return out;
}

std::string replace(const std::string& s, const std::string& old, const std::string& now, int64_t count) {
    if (old.empty()) {  // Python inserts `now` between every character
        const std::u32string cps = text::decode(s);
        std::string out;
        int64_t n = 0;
        for (size_t i = 0; i <= cps.size(); ++i) {
            if (count < 0 || n < count) out += now, ++n;
            if (i < cps.size()) out += text::encode(std::u32string_view(cps).substr(i, 1));
        }
        return out;
    }
    std::string out;
    size_t start = 0;
    int64_t n = 0;
    for (size_t p; (count < 0 || n < count) && (p = s.find(old, start)) != std::string::npos; start = p + old.size(), ++n)
        out += s.substr(start, p - start) + now;
    return out + s.substr(start);
}

bool affix_matches(const std::string& s, const Value& affix, bool prefix) {
    if (affix.kind() == Kind::Tuple) {
        const List& items = affix.as_list();
        return std::any_of(items.begin(), items.end(), [&](const Value& a) { return affix_matches(s, a, prefix); });
    }
    const std::string& a = self_string(affix);
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
}

std::string capitalize(const std::string& s) {
    std::u32string cps = text::decode(s);
    for (size_t i = 0; i < cps.size(); ++i) cps[i] = i == 0 ? text::upper(cps[i]) : text::lower(cps[i]);
    return text::encode(cps);
}

std::string title(const std::string& s) {
    std::u32string cps = text::decode(s);
    bool prev_cased = false;
    for (auto& c : cps) {
        const bool cased = text::upper(c) != text::lower(c);
        c = cased ? (prev_cased ? text::lower(c) : text::upper(c)) : c;
        prev_cased = cased;
    }
    return text::encode(cps);
}

std::string join(const List& items, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + to_str(items[i]);
    return out;
}

int64_t code_point_find(const std::string& s, const std::string& sub, bool reverse) {
    const size_t p = reverse ? s.rfind(sub) : s.find(sub);
    if (p == std::string::npos) return -1;
    return static_cast<int64_t>(text::decode(std::string_view(s).substr(0, p)).size());
}

// str.format with {} / {0} / {name} fields (no format specs).
std::string format(const std::string& fmt, CallArgs& a) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if ((c == '{' || c == '}') && i + 1 < fmt.size() && fmt[i + 1] == c) {
            out += c;
            ++i;
        } else if (c == '{') {
            const size_t e = fmt.find('}', i);
            if (e == std::string::npos) fail("Single '{' encountered in format string");
            const std::string field = fmt.substr(i + 1, e - i - 1);
            std::optional<Value> v;
            if (field.empty()) v = a.get(auto_index++, "\x01");
            else if (all_digits(field)) v = a.get(std::stoul(field), "\x01");
            else v = a.get(SIZE_MAX, field);
            if (!v) fail("format: no argument for field '{" + field + "}'");
            out += to_str(*v);
            i = e;
        } else {
            out += c;
        }
    }
    return out;
}

// Python's `fmt % args` for the format filter: %s, %r, %d/%i and %%.
std::string percent_format(const std::string& fmt, const CallArgs& a) {
    std::string out;
    size_t next = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i == fmt.size()) fail("incomplete format");
        const char c = fmt[i];
        if (c == '%') {
            out += '%';
            continue;
        }
        if (next >= a.positional.size()) fail("not enough arguments for format string");
        const Value& v = a.positional[next++];
        if (c == 's') out += to_str(v);
        else if (c == 'r') out += repr(v);
        else if ((c == 'd' || c == 'i') && v.is_number())
            out += std::to_string(v.kind() == Kind::Float ? static_cast<int64_t>(std::trunc(v.as_float())) : v.as_int());
        else fail(std::string("unsupported format character '") + c + "'");
    }
    if (next < a.positional.size()) fail("not all arguments converted during string formatting");
    return out;
}

Value string_method(const Value& self, const std::string& name, CallArgs& a) {
    const std::string& s = self.as_string();
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        const auto chars = a.get(0, "chars");
        const std::u32string set = chars && !chars->is_none() ? text::decode(string_arg(chars, "chars")) : U"";
        return text::strip(s, set, name != "rstrip", name != "lstrip");
    }
    if (name == "split") return Value(split(s, a.get(0, "sep"), to_int_arg(a.get(1, "maxsplit"), -1, "maxsplit")));
    if (name == "rsplit") {
        if (to_int_arg(a.get(1, "maxsplit"), -1, "maxsplit") >= 0) fail("rsplit with maxsplit is not supported");
        return Value(split(s, a.get(0, "sep"), -1));
    }
    if (name == "splitlines") {
        List out = split(s, Value("\n"), -1);
        if (!out.empty() && out.back().as_string().empty()) out.pop_back();
        return Value(std::move(out));
    }
    if (name == "startswith" || name == "endswith") {
        const auto affix = a.get(0, "prefix");
        if (!affix) fail(name + "() takes at least 1 argument");
        return Value(affix_matches(s, *affix, name == "startswith"));
    }
    if (name == "upper") return text::upper(s);
    if (name == "lower") return text::lower(s);
    if (name == "capitalize") return capitalize(s);
    if (name == "title") return title(s);
    if (name == "replace")
        return replace(s, string_arg(a.get(0, "old"), "old"), string_arg(a.get(1, "new"), "new"),
                       to_int_arg(a.get(2, "count"), -1, "count"));
    if (name == "find" || name == "rfind") return Value(code_point_find(s, string_arg(a.get(0, "sub"), "sub"), name == "rfind"));
    if (name == "count") {
        const std::string sub = string_arg(a.get(0, "sub"), "sub");
        if (sub.empty()) return Value(static_cast<int64_t>(text::decode(s).size() + 1));
        int64_t n = 0;
        for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
        return Value(n);
    }
    if (name == "join") {
        const auto items = a.get(0, "iterable");
        if (!items) fail("join() takes exactly one argument");
        return join(iterate(*items), s);
    }
    if (name == "format") return format(s, a);
    auto all = [&](auto pred) {
        const std::u32string cps = text::decode(s);
        return Value(!cps.empty() && std::all_of(cps.begin(), cps.end(), pred));
    };
    if (name == "isdigit") return all([](char32_t c) { return c >= '0' && c <= '9'; });
    if (name == "isspace") return all(text::is_space);
    if (name == "isalpha") return all([](char32_t c) { return text::upper(c) != text::lower(c) || c > 0x2E7F; });
    if (name == "isalnum") return all([](char32_t c) { return (c >= '0' && c <= '9') || text::upper(c) != text::lower(c) || c > 0x2E7F; });
    if (name == "islower") return Value(text::lower(s) == s && text::upper(s) != s);
    if (name == "isupper") return Value(text::upper(s) == s && text::lower(s) != s);
    fail("str has no method " + name);
}

const char* const kStringMethods[] = {"strip",   "lstrip", "rstrip",  "split",   "rsplit",  "splitlines", "startswith",
                                      "endswith", "upper",  "lower",   "capitalize", "title", "replace",    "find",
                                      "rfind",   "count",  "join",    "format",  "isdigit", "isspace",    "isalpha",
                                      "isalnum", "islower", "isupper"};
const char* const kDictMethods[] = {"get", "items", "keys", "values"};
const char* const kDictMutators[] = {"pop", "popitem", "update", "clear", "setdefault"};
const char* const kListMethods[] = {"index", "count"};
const char* const kListMutators[] = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};

template <size_t N>
bool one_of(const char* const (&names)[N], std::string_view name) {
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

List dict_items(const Dict& d) {
    List out;
    for (const auto& [k, v] : d.entries) out.emplace_back(List{k, v}, true);
    return out;
}

Value dict_method(const Value& self, const std::string& name, CallArgs& a) {
    const Dict& d = self.as_dict();
    if (name == "get") {
        const auto key = a.get(0, "key");
        if (!key) fail("get expected at least 1 argument");
        const Value* v = d.lookup(*key);
        return v ? *v : a.get(1, "default").value_or(Value::none());
    }
    if (name == "items") return Value(dict_items(d));
    List out;
    for (const auto& [k, v] : d.entries) out.push_back(name == "keys" ? k : v);
    return Value(std::move(out));
}

Value list_method(const Value& self, const std::string& name, CallArgs& a) {
    const List& l = self.as_list();
    const auto x = a.get(0, "value");
    if (!x) fail(name + "() takes exactly one argument");
    if (name == "count") return Value(static_cast<int64_t>(std::count_if(l.begin(), l.end(), [&](const Value& v) { return equal(v, *x); })));
    for (size_t i = 0; i < l.size(); ++i)
        if (equal(l[i], *x)) return Value(static_cast<int64_t>(i));
    fail(repr(*x) + " is not in list");
}

Value bound(const Value& self, std::string name, Value (*method)(const Value&, const std::string&, CallArgs&)) {
    return Value::function(name, [self, name, method](CallArgs& a) { return method(self, name, a); });
}

Value unsafe(const Value& obj, std::string_view name) {
    return Value::undefined("access to attribute '" + std::string(name) + "' of '" + obj.type_name() + "' object is unsafe.");
}

// ---- filters ------------------------------------------------------------------------

// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then item 0.
Value attr_path(const Value& v, const std::string& path) {
    Value cur = v;
    size_t start = 0;
    while (start <= path.size()) {
        size_t dot = path.find('.', start);
        if (dot == std::string::npos) dot = path.size();
        const std::string part = path.substr(start, dot - start);
        if (cur.is_undefined()) fail_undefined(cur);
        const bool numeric = all_digits(part);
        cur = numeric ? get_item(cur, Value(static_cast<int64_t>(std::stoll(part)))) : get_item(cur, Value(part));
        start = dot + 1;
    }
    return cur;
}

// The items of a filter's input, with an attribute= path applied when given.
std::optional<std::string> attribute_arg(const CallArgs& a, size_t pos) {
    const auto v = a.get(pos, "attribute");
    if (!v || v->is_none()) return std::nullopt;
    if (v->kind() == Kind::Int) return std::to_string(v->as_int());
    return string_arg(v, "attribute");
}

CallArgs rest_args(const CallArgs& a, size_t from) {
    CallArgs r;
    for (size_t i = from; i < a.positional.size(); ++i) r.positional.push_back(a.positional[i]);
    r.named = a.named;
    return r;
}

// select, reject, selectattr, rejectattr and map yield nothing for a false input (jinja2's
// `if value:`), so `none | selectattr(...)` is empty where `none | list` fails.
List iterate_if_true(const Value& input) {
    return truthy(input) ? iterate(input) : List{};
}

List select(const Value& input, CallArgs& a, bool by_attr, bool keep) {
    size_t pos = 0;
    std::optional<std::string> attr;
    if (by_attr) {
        attr = string_arg(a.get(0, "attribute"), "the attribute");
        pos = 1;
    }
    const auto test = a.get(pos, "\x01");
    CallArgs targs = rest_args(a, pos + 1);
    List out;
    for (const Value& item : iterate_if_true(input)) {
        const Value v = attr ? attr_path(item, *attr) : item;
        const bool pass = test ? apply_test(string_arg(test, "the test name"), v, targs) : truthy(v);
        if (pass == keep) out.push_back(item);
    }
    return out;
}

List map_items(const Value& input, CallArgs& a) {
    List out;
    if (const auto attr = a.get(SIZE_MAX, "attribute")) {
        const std::string path = attr->kind() == Kind::Int ? std::to_string(attr->as_int()) : string_arg(attr, "attribute");
        const auto fallback = a.get(SIZE_MAX, "default");
        for (const Value& item : iterate_if_true(input)) {
            Value v = attr_path(item, path);
            out.push_back(v.is_undefined() && fallback ? *fallback : v);
        }
        return out;
    }
    const std::string filter = string_arg(a.get(0, "filter"), "the filter name");
    CallArgs fargs = rest_args(a, 1);
    for (const Value& item : iterate_if_true(input)) out.push_back(apply_filter(filter, item, fargs));
    return out;
}

Value sort_key(const Value& v, bool case_sensitive) {
    return !case_sensitive && v.is_string() ? Value(text::lower(v.as_string())) : v;
}

List sorted(const Value& input, CallArgs& a) {
    const bool reverse = truthy(a.get(0, "reverse").value_or(false));
    const bool cs = truthy(a.get(1, "case_sensitive").value_or(false));
    const auto attr = attribute_arg(a, 2);
    List items = iterate(input);
    std::vector<std::pair<Value, Value>> keyed;
    for (auto& it : items) keyed.emplace_back(sort_key(attr ? attr_path(it, *attr) : it, cs), it);
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
        return reverse ? less(y.first, x.first) : less(x.first, y.first);
    });
    List out;
    for (auto& [k, v] : keyed) out.push_back(std::move(v));
    return out;
}

Value min_max(const Value& input, CallArgs& a, bool want_max) {
    const bool cs = truthy(a.get(0, "case_sensitive").value_or(false));
    const auto attr = attribute_arg(a, 1);
    const List items = iterate(input);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    const Value* best = &items[0];
    for (const Value& it : items) {
        const Value k = sort_key(attr ? attr_path(it, *attr) : it, cs);
        const Value bk = sort_key(attr ? attr_path(*best, *attr) : *best, cs);
        if (want_max ? less(bk, k) : less(k, bk)) best = &it;
    }
    return *best;
}

List unique(const Value& input, CallArgs& a) {
    const bool cs = truthy(a.get(0, "case_sensitive").value_or(false));
    const auto attr = attribute_arg(a, 1);
    List out, seen;
    for (const Value& it : iterate(input)) {
        const Value k = sort_key(attr ? attr_path(it, *attr) : it, cs);
        if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, k); })) {
            seen.push_back(k);
            out.push_back(it);
        }
    }
    return out;
}

std::string indent(const std::string& s, CallArgs& a) {
    const auto width = a.get(0, "width");
    const std::string pad = width && width->is_string() ? width->as_string() : std::string(static_cast<size_t>(to_int_arg(width, 4, "width")), ' ');
    const bool first = truthy(a.get(1, "first").value_or(false));
    const bool blank = truthy(a.get(2, "blank").value_or(false));
    List lines = split(s + "\n", Value("\n"), -1);
    lines.pop_back();
    std::string rv = lines.empty() ? "" : lines[0].as_string();
    for (size_t i = 1; i < lines.size(); ++i) {
        const std::string& line = lines[i].as_string();
        rv += "\n" + (blank || !line.empty() ? pad + line : line);
    }
    return first ? pad + rv : rv;
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

Value to_int(const Value& v, CallArgs& a) {
    const Value fallback = a.get(0, "default").value_or(Value(0));
    switch (v.kind()) {
        case Kind::Bool:
        case Kind::Int: return Value(v.as_int());
        case Kind::Float: return std::isfinite(v.as_float()) ? Value(static_cast<int64_t>(std::trunc(v.as_float()))) : fallback;
        case Kind::String: {
            const std::string t = text::strip(v.as_string(), U"", true, true);
            try {
                size_t used = 0;
                const int64_t i = std::stoll(t, &used, static_cast<int>(to_int_arg(a.get(1, "base"), 10, "base")));
                if (used == t.size()) return Value(i);
                const double d = std::stod(t, &used);
                if (used == t.size() && std::isfinite(d)) return Value(static_cast<int64_t>(std::trunc(d)));
            } catch (const std::exception&) {
            }
            return fallback;
        }
        default: return fallback;
    }
}

Value to_float(const Value& v, CallArgs& a) {
    const Value fallback = a.get(0, "default").value_or(Value(0.0));
    if (v.is_number()) return Value(v.as_float());
    if (v.is_string()) {
        try {
            size_t used = 0;
            const std::string t = text::strip(v.as_string(), U"", true, true);
            const double d = std::stod(t, &used);
            if (used == t.size()) return Value(d);
        } catch (const std::exception&) {
        }
    }
    return fallback;
}

Value round_filter(const Value& v, CallArgs& a) {
    if (!v.is_number()) fail("round: expected a number, not " + v.type_name());
    const int64_t precision = to_int_arg(a.get(0, "precision"), 0, "precision");
    const std::string method = a.get(1, "method") ? string_arg(a.get(1, "method"), "method") : "common";
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.as_float() * scale;
    double r;
    if (method == "common") r = std::nearbyint(x);  // Python's round(): half to even
    else if (method == "floor") r = std::floor(x);
    else if (method == "ceil") r = std::ceil(x);
    else fail("method must be common, ceil or floor");
    return Value(r / scale);
}

Value tojson(const Value& v, CallArgs& a) {
    JsonOptions o;
    if (const auto ind = a.get(0, "indent"); ind && !ind->is_none()) o.indent = static_cast<int>(to_int_arg(ind, 0, "indent"));
    o.ensure_ascii = truthy(a.get(1, "ensure_ascii").value_or(false));
    if (const auto sep = a.get(2, "separators"); sep && !sep->is_none()) {
        if (!sep->is_sequence() || sep->as_list().size() != 2) fail("separators must be a pair of strings");
        o.item_separator = self_string(sep->as_list()[0]);
        o.key_separator = self_string(sep->as_list()[1]);
        if (o.item_separator.empty()) fail("an empty item separator is not supported");
    }
    o.sort_keys = truthy(a.get(3, "sort_keys").value_or(false));
    return to_json(v, o);
}

size_t length(const Value& v) {
    switch (v.kind()) {
        case Kind::Undefined: return 0;
        case Kind::String: return text::decode(v.as_string()).size();
        case Kind::List:
        case Kind::Tuple: return v.as_list().size();
        case Kind::Dict: return v.as_dict().entries.size();
        default: fail("object of type '" + v.type_name() + "' has no len()");
    }
}

Value first_or_last(const Value& v, bool first) {
    if (v.is_undefined()) return Value::undefined("No first item, sequence was empty.");
    const List items = iterate(v);
    if (items.empty()) return Value::undefined(first ? "No first item, sequence was empty." : "No last item, sequence was empty.");
    return first ? items.front() : items.back();
}

Value sum(const Value& v, CallArgs& a) {
    const auto attr = attribute_arg(a, 0);
    Value total = a.get(1, "start").value_or(Value(0));
    for (const Value& it : iterate(v)) {
        const Value x = attr ? attr_path(it, *attr) : it;
        if (!x.is_number() || !total.is_number()) fail("sum: unsupported operand types");
        total = total.kind() == Kind::Float || x.kind() == Kind::Float ? Value(total.as_float() + x.as_float()) : Value(total.as_int() + x.as_int());
    }
    return total;
}

List dictsort(const Value& v, CallArgs& a) {
    if (v.kind() != Kind::Dict) fail("dictsort: expected a dict, not " + v.type_name());
    const bool cs = truthy(a.get(0, "case_sensitive").value_or(false));
    const std::string by = a.get(1, "by") ? string_arg(a.get(1, "by"), "by") : "key";
    const bool reverse = truthy(a.get(2, "reverse").value_or(false));
    List items = dict_items(v.as_dict());
    const size_t pos = by == "key" ? 0 : by == "value" ? 1 : 2;
    if (pos == 2) fail("You can only sort by either \"key\" or \"value\"");
    std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
        const Value kx = sort_key(x.as_list()[pos], cs), ky = sort_key(y.as_list()[pos], cs);
        return reverse ? less(ky, kx) : less(kx, ky);
    });
    return items;
}

using Filter = Value (*)(const Value&, CallArgs&);

const std::map<std::string_view, Filter>& filters() {
    static const std::map<std::string_view, Filter> table = {
        {"abs", [](const Value& v, CallArgs&) -> Value {
             if (v.kind() == Kind::Float) return Value(std::fabs(v.as_float()));
             if (v.is_number()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
             fail("bad operand type for abs(): '" + v.type_name() + "'");
         }},
        {"attr", [](const Value& v, CallArgs& a) { return get_attribute(v, string_arg(a.get(0, "name"), "the attribute name")); }},
        {"capitalize", [](const Value& v, CallArgs&) { return Value(capitalize(to_str(v))); }},
        {"count", [](const Value& v, CallArgs&) { return Value(static_cast<int64_t>(length(v))); }},
        {"default", [](const Value& v, CallArgs& a) {
             const bool boolean = truthy(a.get(1, "boolean").value_or(false));
             return v.is_undefined() || (boolean && !truthy(v)) ? a.get(0, "default_value").value_or(Value("")) : v;
         }},
        {"dictsort", [](const Value& v, CallArgs& a) { return Value(dictsort(v, a)); }},
        {"escape", [](const Value& v, CallArgs&) { return v.is_markup() ? v : Value::markup(html_escape(to_str(v))); }},
        {"first", [](const Value& v, CallArgs&) { return first_or_last(v, true); }},
        {"float", to_float},
        {"indent", [](const Value& v, CallArgs& a) { return Value(indent(to_str(v), a)); }},
        {"format", [](const Value& v, CallArgs& a) { return Value(percent_format(to_str(v), a)); }},
        {"int", to_int},
        {"items", [](const Value& v, CallArgs&) -> Value {
             if (v.is_undefined()) return Value(List{});
             if (v.kind() != Kind::Dict) fail("Can only get item pairs from a mapping.");
             return Value(dict_items(v.as_dict()));
         }},
        {"join", [](const Value& v, CallArgs& a) {
             const std::string sep = a.get(0, "d") ? to_str(*a.get(0, "d")) : "";
             List items = iterate(v);
             if (const auto attr = attribute_arg(a, 1))
                 for (auto& it : items) it = attr_path(it, *attr);
             return Value(join(items, sep));
         }},
        {"last", [](const Value& v, CallArgs&) { return first_or_last(v, false); }},
        {"length", [](const Value& v, CallArgs&) { return Value(static_cast<int64_t>(length(v))); }},
        {"list", [](const Value& v, CallArgs&) { return Value(iterate(v)); }},
        {"lower", [](const Value& v, CallArgs&) { return Value(text::lower(to_str(v))); }},
        {"map", [](const Value& v, CallArgs& a) { return Value(map_items(v, a)); }},
        {"max", [](const Value& v, CallArgs& a) { return min_max(v, a, true); }},
        {"min", [](const Value& v, CallArgs& a) { return min_max(v, a, false); }},
        {"reject", [](const Value& v, CallArgs& a) { return Value(select(v, a, false, false)); }},
        {"rejectattr", [](const Value& v, CallArgs& a) { return Value(select(v, a, true, false)); }},
        {"replace", [](const Value& v, CallArgs& a) {
             return Value(replace(to_str(v), to_str(a.get(0, "old").value_or(Value(""))), to_str(a.get(1, "new").value_or(Value(""))),
                                  to_int_arg(a.get(2, "count"), -1, "count")));
         }},
        {"reverse", [](const Value& v, CallArgs&) -> Value {
             if (v.is_string()) {
                 std::u32string cps = text::decode(v.as_string());
                 std::reverse(cps.begin(), cps.end());
                 return Value(text::encode(cps));
             }
             List items = iterate(v);
             std::reverse(items.begin(), items.end());
             return Value(std::move(items));
         }},
        {"round", round_filter},
        {"safe", [](const Value& v, CallArgs&) { return v.is_markup() ? v : Value::markup(to_str(v)); }},
        {"select", [](const Value& v, CallArgs& a) { return Value(select(v, a, false, true)); }},
        {"selectattr", [](const Value& v, CallArgs& a) { return Value(select(v, a, true, true)); }},
        {"sort", [](const Value& v, CallArgs& a) { return Value(sorted(v, a)); }},
        {"string", [](const Value& v, CallArgs&) { return Value(to_str(v)); }},
        {"sum", sum},
        {"title", [](const Value& v, CallArgs&) { return Value(title(to_str(v))); }},
        {"tojson", tojson},
        {"trim", [](const Value& v, CallArgs& a) {
             const auto chars = a.get(0, "chars");
             return Value(text::strip(to_str(v), chars && !chars->is_none() ? text::decode(to_str(*chars)) : U"", true, true));
         }},
        {"unique", [](const Value& v, CallArgs& a) { return Value(unique(v, a)); }},
        {"upper", [](const Value& v, CallArgs&) { return Value(text::upper(to_str(v))); }},
        {"wordcount", [](const Value& v, CallArgs&) { return Value(static_cast<int64_t>(split(to_str(v), std::nullopt, -1).size())); }},
    };
    return table;
}

// ---- tests ----------------------------------------------------------------------------

using Test = bool (*)(const Value&, CallArgs&);

const Value& test_arg(CallArgs& a) {
    if (a.positional.empty()) fail("the test needs an argument");
    return a.positional[0];
}

const std::map<std::string_view, Test>& tests() {
    static const std::map<std::string_view, Test> table = {
        {"boolean", [](const Value& v, CallArgs&) { return v.kind() == Kind::Bool; }},
        {"callable", [](const Value& v, CallArgs&) { return v.kind() == Kind::Callable; }},
        {"defined", [](const Value& v, CallArgs&) { return !v.is_undefined(); }},
        {"divisibleby", [](const Value& v, CallArgs& a) {
             const int64_t n = to_int_arg(test_arg(a), 1, "divisibleby");
             if (n == 0 || !v.is_number()) fail("divisibleby: bad operands");
             return v.as_int() % n == 0;
         }},
        {"eq", [](const Value& v, CallArgs& a) { return equal(v, test_arg(a)); }},
        {"even", [](const Value& v, CallArgs&) { return v.is_number() && v.as_int() % 2 == 0; }},
        {"false", [](const Value& v, CallArgs&) { return v.kind() == Kind::Bool && !v.as_bool(); }},
        {"float", [](const Value& v, CallArgs&) { return v.kind() == Kind::Float; }},
        {"ge", [](const Value& v, CallArgs& a) { return !less(v, test_arg(a)); }},
        {"gt", [](const Value& v, CallArgs& a) { return less(test_arg(a), v); }},
        {"in", [](const Value& v, CallArgs& a) { return contains(test_arg(a), v); }},
        {"integer", [](const Value& v, CallArgs&) { return v.kind() == Kind::Int; }},
        {"iterable", [](const Value& v, CallArgs&) { return v.is_string() || v.is_sequence() || v.kind() == Kind::Dict || v.is_undefined(); }},
        {"le", [](const Value& v, CallArgs& a) { return !less(test_arg(a), v); }},
        {"lower", [](const Value& v, CallArgs&) { return v.is_string() && text::lower(v.as_string()) == v.as_string(); }},
        {"lt", [](const Value& v, CallArgs& a) { return less(v, test_arg(a)); }},
        {"mapping", [](const Value& v, CallArgs&) { return v.kind() == Kind::Dict; }},
        {"ne", [](const Value& v, CallArgs& a) { return !equal(v, test_arg(a)); }},
        {"none", [](const Value& v, CallArgs&) { return v.is_none(); }},
        {"number", [](const Value& v, CallArgs&) { return v.is_number(); }},
        {"odd", [](const Value& v, CallArgs&) { return v.is_number() && v.as_int() % 2 != 0; }},
        {"sameas", [](const Value& v, CallArgs& a) {
             const Value& o = test_arg(a);
             return (v.kind() == o.kind() && (v.is_none() || v.is_undefined() || v.kind() == Kind::Bool)) ? equal(v, o)
                                                                                                        : v.is_mapping() && equal(v, o);
         }},
        {"sequence", [](const Value& v, CallArgs&) { return v.is_string() || v.is_sequence() || v.kind() == Kind::Dict || v.is_undefined(); }},
        {"string", [](const Value& v, CallArgs&) { return v.is_string(); }},
        {"true", [](const Value& v, CallArgs&) { return v.kind() == Kind::Bool && v.as_bool(); }},
        {"undefined", [](const Value& v, CallArgs&) { return v.is_undefined(); }},
        {"upper", [](const Value& v, CallArgs&) { return v.is_string() && text::upper(v.as_string()) == v.as_string(); }},
    };
    return table;
}

std::string_view test_alias(std::string_view name) {
    if (name == "==" || name == "equalto") return "eq";
    if (name == "!=") return "ne";
    if (name == "<" || name == "lessthan") return "lt";
    if (name == "<=") return "le";
    if (name == ">" || name == "greaterthan") return "gt";
    if (name == ">=") return "ge";
    return name;
}

int64_t checked_index(int64_t i, size_t n) {
    return i < 0 ? i + static_cast<int64_t>(n) : i;
}

}  // namespace

[[noreturn]] void fail_undefined(const Value& v) {
    fail(v.undefined_name().empty() ? "undefined value" : v.undefined_name());
}

Value get_attribute(const Value& obj, std::string_view name) {
    switch (obj.kind()) {
        case Kind::Undefined: fail_undefined(obj);
        case Kind::String:
            if (one_of(kStringMethods, name)) return bound(obj, std::string(name), string_method);
            break;
        case Kind::Dict: {
            if (one_of(kDictMethods, name)) return bound(obj, std::string(name), dict_method);
            if (one_of(kDictMutators, name)) return unsafe(obj, name);
            if (const Value* v = obj.as_dict().find(name)) return *v;
            break;
        }
        case Kind::Namespace:
            if (const Value* v = obj.namespace_dict().find(name)) return *v;
            break;
        case Kind::List:
        case Kind::Tuple:
            if (one_of(kListMethods, name)) return bound(obj, std::string(name), list_method);
            if (obj.kind() == Kind::List && one_of(kListMutators, name)) return unsafe(obj, name);
            break;
        default: break;
    }
    return missing_attribute(obj, name);
}

Value get_item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) fail_undefined(obj);
    if (obj.kind() == Kind::Dict) {
        if (const Value* v = obj.as_dict().lookup(key)) return *v;
        if (key.is_string()) return Value::undefined(object_name(obj) + " has no attribute '" + key.as_string() + "'");
    }
    if ((obj.is_sequence() || obj.is_string()) && (key.kind() == Kind::Int || key.kind() == Kind::Bool)) {
        if (obj.is_string()) {
            const std::u32string cps = text::decode(obj.as_string());
            const int64_t i = checked_index(key.as_int(), cps.size());
            if (i >= 0 && i < static_cast<int64_t>(cps.size())) return text::encode(std::u32string_view(cps).substr(static_cast<size_t>(i), 1));
        } else {
            const List& l = obj.as_list();
            const int64_t i = checked_index(key.as_int(), l.size());
            if (i >= 0 && i < static_cast<int64_t>(l.size())) return l[static_cast<size_t>(i)];
        }
        return Value::undefined(object_name(obj) + " has no element " + std::to_string(key.as_int()));
    }
    if (key.is_string()) return get_attribute(obj, key.as_string());
    return Value::undefined(object_name(obj) + " has no element " + repr(key));
}

Value slice(const Value& obj, const Value* start, const Value* stop, const Value* step) {
    if (obj.is_undefined()) fail_undefined(obj);
    auto bound_arg = [](const Value* v, const char* what) -> std::optional<int64_t> {
        if (!v || v->is_none()) return std::nullopt;
        if (v->kind() != Kind::Int && v->kind() != Kind::Bool) fail(std::string("slice ") + what + " must be an integer or None");
        return v->as_int();
    };
    const int64_t st = bound_arg(step, "step").value_or(1);
    if (st == 0) fail("slice step cannot be zero");
    std::u32string cps;
    const bool is_str = obj.is_string();
    if (is_str) cps = text::decode(obj.as_string());
    else if (!obj.is_sequence()) fail("'" + obj.type_name() + "' object is not subscriptable");
    const int64_t n = static_cast<int64_t>(is_str ? cps.size() : obj.as_list().size());
    auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
        if (!v) return dflt;
        int64_t i = *v < 0 ? *v + n : *v;
        if (st > 0) return std::clamp<int64_t>(i, 0, n);
        return std::clamp<int64_t>(i, -1, n - 1);
    };
    const int64_t b = clamp(bound_arg(start, "start"), st > 0 ? 0 : n - 1);
    const int64_t e = clamp(bound_arg(stop, "stop"), st > 0 ? n : -1);
    std::u32string s_out;
    List l_out;
    for (int64_t i = b; st > 0 ? i < e : i > e; i += st) {
        if (is_str) s_out.push_back(cps[static_cast<size_t>(i)]);
        else l_out.push_back(obj.as_list()[static_cast<size_t>(i)]);
    }
    if (is_str) return text::encode(s_out);
    return Value(std::move(l_out), obj.kind() == Kind::Tuple);
}

Value apply_filter(std::string_view name, const Value& input, CallArgs& args) {
    if (name == "d") name = "default";
    if (name == "e") name = "escape";
    const auto& table = filters();
    const auto it = table.find(name);
    if (it == table.end()) fail("no filter named '" + std::string(name) + "'");
    return it->second(input, args);
}

bool apply_test(std::string_view name, const Value& input, CallArgs& args) {
    const auto& table = tests();
    const auto it = table.find(test_alias(name));
    if (it == table.end()) fail("no test named '" + std::string(name) + "'");
    return it->second(input, args);
}

Value concat(const Value& a, const Value& b) {
    if (!a.is_markup() && !b.is_markup()) return Value(a.as_string() + b.as_string());
    auto safe_text = [](const Value& v) { return v.is_markup() ? v.as_string() : html_escape(v.as_string()); };
    return Value::markup(safe_text(a) + safe_text(b));
}

bool contains(const Value& haystack, const Value& needle) {
    switch (haystack.kind()) {
        case Kind::Undefined: return false;
        case Kind::String:
            if (!needle.is_string()) fail("'in <string>' requires string as left operand, not " + needle.type_name());
            return haystack.as_string().find(needle.as_string()) != std::string::npos;
        case Kind::List:
        case Kind::Tuple: {
            const List& l = haystack.as_list();
            return std::any_of(l.begin(), l.end(), [&](const Value& v) { return equal(v, needle); });
        }
        case Kind::Dict: return haystack.as_dict().lookup(needle) != nullptr;
        default: fail("argument of type '" + haystack.type_name() + "' is not iterable");
    }
}

List iterate(const Value& v) {
    switch (v.kind()) {
        case Kind::Undefined: return {};
        case Kind::List:
        case Kind::Tuple: return v.as_list();
        case Kind::Dict: {
            List keys;
            for (const auto& [k, x] : v.as_dict().entries) keys.push_back(k);
            return keys;
        }
        case Kind::String: {
            List chars;
            for (char32_t c : text::decode(v.as_string())) chars.emplace_back(text::encode(std::u32string_view(&c, 1)));
            return chars;
        }
        default: fail("'" + v.type_name() + "' object is not iterable");
    }
}

Dict builtin_globals(size_t max_items) {
    Dict g;
    g.set("range", Value::function("range", [max_items](CallArgs& a) {
              if (a.positional.empty() || a.positional.size() > 3) fail("range expected 1 to 3 arguments");
              const bool one = a.positional.size() == 1;
              const int64_t start = one ? 0 : to_int_arg(a.positional[0], 0, "range");
              const int64_t stop = to_int_arg(a.positional[one ? 0 : 1], 0, "range");
              const int64_t step = a.positional.size() == 3 ? to_int_arg(a.positional[2], 1, "range") : 1;
              if (step == 0) fail("range() arg 3 must not be zero");
              List out;
              for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                  if (out.size() >= max_items) fail("range() is longer than " + std::to_string(max_items) + " items");
                  out.emplace_back(i);
              }
              return Value(std::move(out));
          }));
    auto make_dict = [](CallArgs& a) {
        Dict d;
        for (const Value& p : a.positional) {
            if (p.kind() != Kind::Dict) fail("expected keyword arguments or a dict");
            for (const auto& [k, v] : p.as_dict().entries) d.set(k, v);
        }
        for (auto& [k, v] : a.named) d.set(k, v);
        return d;
    };
    g.set("namespace", Value::function("namespace", [make_dict](CallArgs& a) { return Value::namespace_of(make_dict(a)); }));
    g.set("dict", Value::function("dict", [make_dict](CallArgs& a) { return Value(make_dict(a)); }));
    return g;
}

}  // namespace strata::chat
