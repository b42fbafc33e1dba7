// daemon/rpc/methods.h — the native methods that answer at once: tokenize, detokenize,
// session.list / info / reset / delete, status, model.info. Owns: their params (checked
// like every request field) and results. Must not touch: generate and cancel, which live
// with the connection's in-flight requests (rpc_connection.h).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>

#include "transport/server.h"

namespace strata::daemon {

// Throws ApiError (method_not_found, invalid_params, ...) or engine::EngineError.
boost::json::value call_method(Server& server, const std::string& method, const boost::json::object& params,
                               uint32_t uid);

}  // namespace strata::daemon
