// daemon/protocol/fields.cpp — typed reading of request fields (see fields.h).
#include "protocol/fields.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "protocol/errors.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

std::string kind_text(const json::value& value) {
    switch (value.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a number with a fraction or an exponent";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
    }
    return "a value";
}

[[noreturn]] void wrong_type(const json::value& value, const std::string& field, const std::string& expected) {
    throw invalid_params(field, field + " must be " + expected + ", got " + kind_text(value));
}

std::string range_text(int64_t lo, int64_t hi) {
    return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

// JSON numbers with a fraction or an exponent ("1e12", "100.0") arrive as doubles: a
// whole one is taken (or said to be out of range), any other is named as it was written.
int64_t whole_number(double d, const std::string& field, int64_t lo, int64_t hi) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.17g", d);
    if (!std::isfinite(d) || std::trunc(d) != d)
        throw invalid_params(field, field + " must be " + range_text(lo, hi) + ", got " + shown);
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
        throw invalid_params(field, field + " = " + shown + " is out of range: expected " + range_text(lo, hi));
    return static_cast<int64_t>(d);
}

}  // namespace

int64_t integer_value(const json::value& value, const std::string& field, int64_t lo, int64_t hi) {
    if (value.is_uint64()) {
        const uint64_t u = value.get_uint64();
        if (u > static_cast<uint64_t>(hi))
            throw invalid_params(field, field + " = " + std::to_string(u) + " is out of range: expected " +
                                            range_text(lo, hi));
        return static_cast<int64_t>(u);
    }
    if (value.is_double())
        return whole_number(value.get_double(), field, lo, hi);
    if (!value.is_int64())
        wrong_type(value, field, range_text(lo, hi));
    const int64_t v = value.get_int64();
    if (v < lo || v > hi)
        throw invalid_params(field, field + " = " + std::to_string(v) + " is out of range: expected " +
                                        range_text(lo, hi));
    return v;
}

uint64_t unsigned_value(const json::value& value, const std::string& field) {
    if (value.is_uint64())
        return value.get_uint64();
    if (value.is_int64() && value.get_int64() >= 0)
        return static_cast<uint64_t>(value.get_int64());
    if (value.is_double())
        return static_cast<uint64_t>(whole_number(value.get_double(), field, 0, INT64_MAX));
    if (value.is_int64())
        throw invalid_params(field, field + " is out of range: expected an integer from 0 to 18446744073709551615");
    wrong_type(value, field, "an integer from 0 to 18446744073709551615");
}

double number_value(const json::value& value, const std::string& field) {
    if (value.is_int64())
        return static_cast<double>(value.get_int64());
    if (value.is_uint64())
        return static_cast<double>(value.get_uint64());
    if (!value.is_double())
        wrong_type(value, field, "a number");
    if (!std::isfinite(value.get_double()))
        throw invalid_params(field, field + " must be a finite number");
    return value.get_double();
}

bool boolean_value(const json::value& value, const std::string& field) {
    if (!value.is_bool())
        wrong_type(value, field, "true or false");
    return value.get_bool();
}

const std::string_view string_value(const json::value& value, const std::string& field, size_t max_bytes) {
    if (!value.is_string())
        wrong_type(value, field, "a string");
    const json::string& s = value.get_string();
    if (s.size() > max_bytes)
        throw invalid_params(field, field + " is too long: " + std::to_string(s.size()) + " bytes, at most " +
                                        std::to_string(max_bytes));
    return {s.data(), s.size()};
}

const json::array& array_value(const json::value& value, const std::string& field, size_t max_items) {
    if (!value.is_array())
        wrong_type(value, field, "an array");
    if (value.get_array().size() > max_items)
        throw invalid_params(field, field + " has " + std::to_string(value.get_array().size()) +
                                        " entries, at most " + std::to_string(max_items) + " are allowed");
    return value.get_array();
}

const json::object& object_value(const json::value& value, const std::string& field) {
    if (!value.is_object())
        wrong_type(value, field, "an object");
    return value.get_object();
}

Fields::Fields(const json::object& object, std::string path) : object_(object), path_(std::move(path)) {}

const json::value* Fields::find(std::string_view key) const {
    const json::value* value = object_.if_contains(key);
    return value == nullptr || value->is_null() ? nullptr : value;
}

const json::value& Fields::required(std::string_view key) const {
    const json::value* value = find(key);
    if (value == nullptr)
        throw invalid_params(name(key), name(key) + " is missing");
    return *value;
}

std::string Fields::name(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::optional<int64_t> Fields::integer(std::string_view key, int64_t lo, int64_t hi) const {
    const json::value* v = find(key);
    return v ? std::optional(integer_value(*v, name(key), lo, hi)) : std::nullopt;
}

std::optional<uint64_t> Fields::unsigned64(std::string_view key) const {
    const json::value* v = find(key);
    return v ? std::optional(unsigned_value(*v, name(key))) : std::nullopt;
}

std::optional<double> Fields::number(std::string_view key) const {
    const json::value* v = find(key);
    return v ? std::optional(number_value(*v, name(key))) : std::nullopt;
}

std::optional<bool> Fields::boolean(std::string_view key) const {
    const json::value* v = find(key);
    return v ? std::optional(boolean_value(*v, name(key))) : std::nullopt;
}

std::optional<std::string> Fields::string(std::string_view key, size_t max_bytes) const {
    const json::value* v = find(key);
    return v ? std::optional(std::string(string_value(*v, name(key), max_bytes))) : std::nullopt;
}

void Fields::allow_only(std::initializer_list<std::string_view> known) const {
    for (const auto& member : object_) {
        const std::string_view key = member.key();
        if (std::find(known.begin(), known.end(), key) == known.end())
            throw invalid_params(name(key), "unknown field '" + name(key) + "'");
    }
}

}  // namespace strata::daemon
