// daemon/protocol/json_text.cpp — depth-limited JSON parsing (see json_text.h).
#include "protocol/json_text.h"

#include <boost/json/error.hpp>
#include <boost/json/stream_parser.hpp>
#include <cstdio>
#include <string>

#include "protocol/errors.h"
#include "utf8/utf8.h"

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
    if (ec) {
        if (const auto bad = utf8::first_invalid(text)) {
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[*bad])));
            throw ApiError(ErrorKind::ParseError, std::string(what) + " is not valid UTF-8: byte " + byte +
                                                      " at offset " + std::to_string(*bad) +
                                                      " (JSON text must be UTF-8; convert Latin-1 and other encodings first)");
        }
        throw ApiError(ErrorKind::ParseError, std::string(what) + " is not valid JSON (" + ec.message() + " at byte " +
                                                  std::to_string(used) + ")");
    }
    return parser.release();
}

}  // namespace strata::daemon
