// daemon/rpc/jsonrpc.h — the JSON-RPC 2.0 codec of the native protocol: one request line in
// (parsed with Boost.JSON under a nesting-depth limit), result / error / notification
// lines out. Owns: the envelope (jsonrpc, id, method, params) and its validation.
// Must not touch: what the methods do (methods.h, rpc_connection.h).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/errors.h"

namespace strata::daemon {

struct RpcRequest {
    std::optional<boost::json::value> id;  // absent: a notification (no response)
    std::string method;
    boost::json::object params;            // {} when absent
};

// A line that is not a usable request: the error to send and the id it concerns (null
// when the line is not JSON or has no usable id).
class BadRequest : public ApiError {
public:
    BadRequest(ApiError error, boost::json::value id) : ApiError(std::move(error)), id_(std::move(id)) {}
    const boost::json::value& id() const { return id_; }

private:
    boost::json::value id_;
};

// Throws BadRequest: parse_error (not JSON), invalid_request (nested deeper than
// `max_depth`, not a JSON-RPC 2.0 request object, a bad id), invalid_params (params not an object).
RpcRequest parse_request(std::string_view line, unsigned max_depth);

// Complete lines, '\n'-terminated.
std::string result_line(const boost::json::value& id, boost::json::value result);
std::string error_line(const boost::json::value& id, const ApiError& error);
std::string notification_line(std::string_view method, boost::json::object params);

// The "error" member of error_line (also used for errors inside SSE streams).
boost::json::object error_object(const ApiError& error);

}  // namespace strata::daemon
