// daemon/protocol/fields.h — typed, range-checked reading of request fields from JSON, with
// invalid_params errors that name the field ("max_tokens", "messages[2].role") and say
// what was expected and what came. Owns: the type and range checks of single values.
// Must not touch: which fields a method has (generate_params.cpp, methods.cpp, openai.cpp).
#pragma once

#include <boost/json/fwd.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace strata::daemon {

// One value, named `field` in errors.
int64_t integer_value(const boost::json::value& value, const std::string& field, int64_t lo, int64_t hi);
uint64_t unsigned_value(const boost::json::value& value, const std::string& field);
double number_value(const boost::json::value& value, const std::string& field);  // finite
bool boolean_value(const boost::json::value& value, const std::string& field);
const std::string_view string_value(const boost::json::value& value, const std::string& field, size_t max_bytes);
const boost::json::array& array_value(const boost::json::value& value, const std::string& field, size_t max_items);
const boost::json::object& object_value(const boost::json::value& value, const std::string& field);

// The fields of one object. A field that is absent or null reads as std::nullopt.
class Fields {
public:
    explicit Fields(const boost::json::object& object, std::string path = {});

    const boost::json::value* find(std::string_view key) const;
    // The field's value; throws invalid_params "<name> is missing" when it is absent or null.
    const boost::json::value& required(std::string_view key) const;
    std::string name(std::string_view key) const;  // the field's name in errors

    std::optional<int64_t> integer(std::string_view key, int64_t lo, int64_t hi) const;
    std::optional<uint64_t> unsigned64(std::string_view key) const;
    std::optional<double> number(std::string_view key) const;
    std::optional<bool> boolean(std::string_view key) const;
    std::optional<std::string> string(std::string_view key, size_t max_bytes) const;

    // Throws invalid_params naming the first field not in `known`.
    void allow_only(std::initializer_list<std::string_view> known) const;

private:
    const boost::json::object& object_;
    std::string path_;
};

}  // namespace strata::daemon
