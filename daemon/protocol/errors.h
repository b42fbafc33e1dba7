// daemon/protocol/errors.h — the errors a client can get, and how each is spelled on the wire:
// the JSON-RPC code and type name of strata-protocol(7), and the HTTP status.
// Owns: ErrorKind, ApiError, the code/type/status tables, the mapping from engine errors.
// Must not touch: formatting responses (jsonrpc.h, openai.h).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/engine.h"

namespace strata::daemon {

enum class ErrorKind {
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    SessionNotFound,
    Forbidden,
    Busy,
    ContextFull,
    ModelError,
    ShuttingDown,
    ModelNotFound,
    Unauthorized,  // TCP without a valid API key
    Internal,
};

class ApiError : public std::runtime_error {
public:
    ApiError(ErrorKind kind, const std::string& message, std::string field = {})
        : std::runtime_error(message), kind_(kind), field_(std::move(field)) {}
    ErrorKind kind() const { return kind_; }
    const std::string& field() const { return field_; }  // the parameter at fault, or ""

private:
    ErrorKind kind_;
    std::string field_;
};

int rpc_code(ErrorKind kind);             // -32700 ... -32006, -32603
std::string_view type_name(ErrorKind kind);  // "parse_error", "invalid_params", ...
unsigned http_status(ErrorKind kind);     // 400, 401, 403, 404, 429, 500, 503
unsigned retry_after(ErrorKind kind);     // seconds to wait before retrying (Retry-After); 0: do not retry

ApiError from_engine(const engine::EngineError& error);

inline ApiError invalid_params(const std::string& field, const std::string& message) {
    return ApiError(ErrorKind::InvalidParams, message, field);
}

}  // namespace strata::daemon
