// daemon/protocol/json_text.cpp — depth-limited JSON parsing (see json_text.h).
#include "protocol/json_text.h"

#include <boost/json/error.hpp>
#include <boost/json/stream_parser.hpp>
#include <string>

#include "protocol/errors.h"

namespace strata::daemon {
namespace json = boost::json;

json::value parse_json_text(std::string_view text, unsigned max_depth, std::string_view what) {
    json::parse_options options;
    options.max_depth = max_depth;
    json::stream_parser parser({}, options);
    boost::system::error_code ec;
    const size_t used = parser.write(text.data(), text.size(), ec);
    if (!ec)
        parser.finish(ec);
    if (ec == json::error::too_deep)
        throw ApiError(ErrorKind::InvalidRequest,
                       std::string(what) + " is nested deeper than " + std::to_string(max_depth) + " levels");
    if (ec)
        throw ApiError(ErrorKind::ParseError, std::string(what) + " is not valid JSON (" + ec.message() + " at byte " +
                                                  std::to_string(used) + ")");
    return parser.release();
}

}  // namespace strata::daemon
