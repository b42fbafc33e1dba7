// daemon/protocol/errors.cpp — wire spellings of the error kinds (see errors.h).
#include "protocol/errors.h"

namespace strata::daemon {
namespace {

struct Spelling {
    ErrorKind kind;
    int rpc_code;
    std::string_view type;
    unsigned http_status;
    unsigned retry_after;  // seconds a client should wait before retrying; 0: retrying will not help
};

constexpr Spelling kSpellings[] = {
    {ErrorKind::ParseError, -32700, "parse_error", 400, 0},
    {ErrorKind::InvalidRequest, -32600, "invalid_request", 400, 0},
    {ErrorKind::MethodNotFound, -32601, "method_not_found", 404, 0},
    {ErrorKind::InvalidParams, -32602, "invalid_params", 400, 0},
    {ErrorKind::SessionNotFound, -32001, "session_not_found", 404, 0},
    {ErrorKind::Forbidden, -32002, "forbidden", 403, 0},
    {ErrorKind::Busy, -32003, "busy", 429, 1},
    {ErrorKind::ContextFull, -32004, "context_full", 400, 0},
    {ErrorKind::ModelError, -32005, "model_error", 500, 0},
    {ErrorKind::ShuttingDown, -32006, "shutting_down", 503, 5},
    {ErrorKind::ModelNotFound, -32007, "model_not_found", 404, 0},
    {ErrorKind::Unauthorized, -32008, "invalid_api_key", 401, 0},
    {ErrorKind::Internal, -32603, "internal_error", 500, 0},
};

const Spelling& spelling(ErrorKind kind) {
    for (const Spelling& s : kSpellings)
        if (s.kind == kind)
            return s;
    return kSpellings[std::size(kSpellings) - 1];
}

ErrorKind kind_of(engine::Errc code) {
    switch (code) {
    case engine::Errc::InvalidParams: return ErrorKind::InvalidParams;
    case engine::Errc::SessionNotFound: return ErrorKind::SessionNotFound;
    case engine::Errc::Busy: return ErrorKind::Busy;
    case engine::Errc::ContextFull: return ErrorKind::ContextFull;
    case engine::Errc::ModelError: return ErrorKind::ModelError;
    case engine::Errc::ShuttingDown: return ErrorKind::ShuttingDown;
    case engine::Errc::Internal: return ErrorKind::Internal;
    }
    return ErrorKind::Internal;
}

}  // namespace

int rpc_code(ErrorKind kind) { return spelling(kind).rpc_code; }
std::string_view type_name(ErrorKind kind) { return spelling(kind).type; }
unsigned http_status(ErrorKind kind) { return spelling(kind).http_status; }
unsigned retry_after(ErrorKind kind) { return spelling(kind).retry_after; }

ApiError from_engine(const engine::EngineError& error) {
    return ApiError(kind_of(error.code()), error.what(), error.field());
}

}  // namespace strata::daemon
