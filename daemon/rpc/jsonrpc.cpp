// daemon/rpc/jsonrpc.cpp — the JSON-RPC 2.0 envelope (see jsonrpc.h).
#include "rpc/jsonrpc.h"

#include <boost/json/serialize.hpp>

#include "protocol/json_text.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

[[noreturn]] void invalid(const std::string& message, const json::value& id) {
    throw BadRequest(ApiError(ErrorKind::InvalidRequest, message), id);
}

}  // namespace

RpcRequest parse_request(std::string_view line, unsigned max_depth) {
    json::value document;
    try {
        document = parse_json_text(line, max_depth, "the line");
    } catch (const ApiError& error) {
        throw BadRequest(error, nullptr);
    }
    if (!document.is_object())
        invalid("a request must be a JSON object", nullptr);
    const json::object& object = document.get_object();
    RpcRequest request;
    if (const json::value* id = object.if_contains("id")) {
        if (!id->is_string() && !id->is_number() && !id->is_null())
            invalid("id must be a string, a number or null", nullptr);
        request.id = *id;
    }
    const json::value id = request.id.value_or(nullptr);
    const json::value* version = object.if_contains("jsonrpc");
    if (version == nullptr || !version->is_string() || version->get_string() != "2.0")
        invalid("\"jsonrpc\": \"2.0\" is missing", id);
    const json::value* method = object.if_contains("method");
    if (method == nullptr || !method->is_string())
        invalid("method must be a string", id);
    request.method = method->get_string();
    if (const json::value* params = object.if_contains("params")) {
        if (!params->is_object())
            throw BadRequest(ApiError(ErrorKind::InvalidParams, "params must be an object (named parameters)", "params"),
                             id);
        request.params = params->get_object();
    }
    return request;
}

json::object error_object(const ApiError& error) {
    json::object data{{"type", type_name(error.kind())}};
    if (!error.field().empty())
        data["field"] = error.field();
    if (const unsigned seconds = retry_after(error.kind()); seconds != 0)
        data["retry_after"] = seconds;
    return {{"code", rpc_code(error.kind())}, {"message", error.what()}, {"data", std::move(data)}};
}

std::string result_line(const json::value& id, json::value result) {
    const json::object response{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
    return json::serialize(response) + "\n";
}

std::string error_line(const json::value& id, const ApiError& error) {
    const json::object response{{"jsonrpc", "2.0"}, {"id", id}, {"error", error_object(error)}};
    return json::serialize(response) + "\n";
}

std::string notification_line(std::string_view method, json::object params) {
    const json::object message{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
    return json::serialize(message) + "\n";
}

}  // namespace strata::daemon
