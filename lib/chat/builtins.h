// chat/builtins.h — what a template can call without defining it: jinja2's filters and
// tests, the Python methods of str/dict/list that templates use (through attribute lookup,
// with the mutating ones refused as the immutable sandbox refuses them), and the globals
// range(), namespace() and dict(). Must not touch: statements, scopes, output (interpreter).
#pragma once

#include <string_view>

#include "chat/value.h"

namespace strata::chat {

// jinja2's getattr(obj, name): a bound method of str/dict/list, else the dict key or
// namespace attribute, else an undefined value that names what was missing.
Value get_attribute(const Value& obj, std::string_view name);
// jinja2's getitem(obj, key): dict key, list/str index (negative from the end), else as
// get_attribute for string keys, else undefined.
Value get_item(const Value& obj, const Value& key);
// Python slicing obj[start:stop:step] of a str, list or tuple (null parts = omitted).
Value slice(const Value& obj, const Value* start, const Value* stop, const Value* step);

// Filter `name` applied to `input`; a TemplateError for unknown filters and bad arguments.
Value apply_filter(std::string_view name, const Value& input, CallArgs& args);
// Test `name` of `input`.
bool apply_test(std::string_view name, const Value& input, CallArgs& args);
// str + str; with a Markup operand the other one is HTML-escaped and the sum is Markup.
Value concat(const Value& a, const Value& b);
// Python's `needle in haystack`.
bool contains(const Value& haystack, const Value& needle);
// The items `for x in v` visits: list/tuple items, dict keys (of any type), str characters;
// undefined is empty.
List iterate(const Value& v);

// range, namespace and dict; `max_items` bounds range().
Dict builtin_globals(size_t max_items);

// A TemplateError for using an undefined value (its message names what was undefined).
[[noreturn]] void fail_undefined(const Value& v);

}  // namespace strata::chat
