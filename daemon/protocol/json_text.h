// daemon/protocol/json_text.h — parsing untrusted JSON text with Boost.JSON under a nesting-depth
// limit, with errors in the protocol's terms. Owns: that one parse. Must not touch: what
// the document means.
#pragma once

#include <boost/json/value.hpp>
#include <string_view>

namespace strata::daemon {

// Throws ApiError: invalid_request when nested deeper than `max_depth`, parse_error when
// `text` is not one JSON value (`what` names it in the message: "the line", "the body").
boost::json::value parse_json_text(std::string_view text, unsigned max_depth, std::string_view what);

}  // namespace strata::daemon
