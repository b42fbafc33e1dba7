// chat/json_value.cpp — JSON to template values (see json_value.h).
#include "chat/json_value.h"

#include <string>

namespace strata::chat {

Value to_value(const boost::json::value& v) {
    namespace json = boost::json;
    switch (v.kind()) {
        case json::kind::null: return Value::none();
        case json::kind::bool_: return Value(v.get_bool());
        case json::kind::int64: return Value(static_cast<int64_t>(v.get_int64()));
        case json::kind::uint64: return Value(static_cast<double>(v.get_uint64()));
        case json::kind::double_: return Value(v.get_double());
        case json::kind::string: return Value(std::string(v.get_string()));
        case json::kind::array: {
            List items;
            for (const auto& x : v.get_array()) items.push_back(to_value(x));
            return Value(std::move(items));
        }
        case json::kind::object: {
            Dict d;
            for (const auto& kv : v.get_object()) d.set(std::string(kv.key()), to_value(kv.value()));
            return Value(std::move(d));
        }
    }
    return {};
}

}  // namespace strata::chat
