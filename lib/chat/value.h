// chat/value.h — the values a chat template computes with, and how Python prints them.
// Owns: the dynamic value type of the Jinja interpreter (undefined, none, bool, int, float,
// string, list, tuple, dict, namespace, callable; a string may be Markup), its Python semantics (truth, equality,
// ordering, str() and repr()) and its JSON text (Python's json.dumps). Must not touch: JSON
// libraries (the daemon and the tools convert their JSON into Value), parsing or evaluating
// templates.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::chat {

// Any failure while parsing or rendering a template; the message says what and where.
class TemplateError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// raise_exception("...") called by the template: what() is exactly the template's message.
class TemplateRaised : public TemplateError {
public:
    using TemplateError::TemplateError;
};

class Value;
using List = std::vector<Value>;

// Insertion-ordered mapping (Python dict): keys are strings, or numbers, None and tuples as
// a template's dict literal may have them ({0: 0, 512: 128}); keys equal as Python compares
// them (1 == 1.0 == True) are one key.
struct Dict {
    std::vector<std::pair<Value, Value>> entries;
    // The value of string key, or nullptr.
    const Value* find(std::string_view key) const;
    // The value of any key, or nullptr.
    const Value* lookup(const Value& key) const;
    void set(Value key, Value value);
};

struct CallArgs;
// A function value: a global, a bound method, a macro or a caller().
struct Callable {
    std::string name;
    std::function<Value(CallArgs&)> call;
};

class Value {
public:
    enum class Kind { Undefined, None, Bool, Int, Float, String, List, Tuple, Dict, Namespace, Callable };

    Value() = default;  // undefined
    static Value none();
    static Value undefined(std::string name = {});
    Value(bool b);
    Value(int64_t i);
    Value(int i) : Value(static_cast<int64_t>(i)) {}
    Value(double d);
    Value(std::string s);
    Value(const char* s) : Value(std::string(s)) {}
    Value(List items, bool tuple = false);
    Value(Dict d);
    static Value namespace_of(Dict d);
    // A string marked safe (markupsafe's Markup, made by the safe and escape filters): what
    // + joins to it is HTML-escaped first. Otherwise it is a string like any other.
    static Value markup(std::string s);
    static Value function(std::string name, std::function<Value(CallArgs&)> fn);

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::Undefined; }
    bool is_none() const { return kind_ == Kind::None; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_markup() const { return kind_ == Kind::String && markup_; }
    bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
    bool is_sequence() const { return kind_ == Kind::List || kind_ == Kind::Tuple; }
    bool is_mapping() const { return kind_ == Kind::Dict || kind_ == Kind::Namespace; }

    bool as_bool() const { return b_; }
    int64_t as_int() const { return i_; }
    double as_float() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
    const std::string& as_string() const { return *s_; }
    const List& as_list() const { return *list_; }
    const Dict& as_dict() const { return *dict_; }
    Dict& namespace_dict() const { return *dict_; }  // namespaces are the one mutable value
    const Callable& as_callable() const { return *fn_; }
    // The name an undefined value was looked up by (for error messages).
    const std::string& undefined_name() const;

    // Python's type name: 'str', 'int', 'list', 'dict', ...
    std::string type_name() const;

private:
    Kind kind_ = Kind::Undefined;
    bool b_ = false;
    bool markup_ = false;
    int64_t i_ = 0;
    double d_ = 0;
    std::shared_ptr<const std::string> s_;  // the string, or an undefined value's name
    std::shared_ptr<const List> list_;
    std::shared_ptr<Dict> dict_;
    std::shared_ptr<const Callable> fn_;
};

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> named;
    // Positional i, else the named argument, else nullopt.
    std::optional<Value> get(size_t i, std::string_view name) const;
};

// Python truth: empty strings and containers, zero, None and undefined are false.
bool truthy(const Value& v);
// Python ==: numbers across int/float/bool, deep for containers; undefined equals undefined.
bool equal(const Value& a, const Value& b);
// Python <: numbers, strings (by code point), sequences; other pairs are a TemplateError.
bool less(const Value& a, const Value& b);
// Python str(): strings as they are, None -> "None", True -> "True", containers as repr;
// undefined -> "".
std::string to_str(const Value& v);
// Python repr(): strings quoted and escaped the way Python does.
std::string repr(const Value& v);
// Python repr() of a float (shortest round-trip digits, "1.0", "1e-05", "inf").
std::string float_repr(double d);

struct JsonOptions {
    std::optional<int> indent;
    bool ensure_ascii = false;
    std::string item_separator;  // "" = Python's default (", " or "," with indent)
    std::string key_separator = ": ";
    bool sort_keys = false;
};
// json.dumps(v, ...): a TemplateError for values JSON cannot hold (undefined, callables).
std::string to_json(const Value& v, const JsonOptions& options = {});

}  // namespace strata::chat
