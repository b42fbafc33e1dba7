// daemon/rpc/methods.cpp — the native methods that answer at once (see methods.h).
#include "rpc/methods.h"

#include <array>
#include <boost/json/value_from.hpp>
#include <utility>

#include "protocol/errors.h"
#include "protocol/fields.h"
#include "protocol/views.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

using Handler = json::value (*)(Server&, const json::object&, uint32_t);

std::string required_session(const Fields& fields) {
    const json::value* value = fields.find("session");
    if (value == nullptr)
        throw invalid_params("session", "session is missing");
    return session_name(*value, "session");
}

// Whose namespace a session method addresses: the caller's, or for root the optional "uid".
uint32_t session_owner(const Fields& fields, uint32_t caller) {
    const json::value* value = fields.find("uid");
    if (value == nullptr)
        return caller;
    const auto owner = static_cast<uint32_t>(integer_value(*value, "uid", 0, UINT32_MAX));
    if (owner != caller && caller != 0)
        throw ApiError(ErrorKind::Forbidden, "only root may address the sessions of another uid", "uid");
    return owner;
}

json::value tokenize(Server& server, const json::object& params, uint32_t) {
    const Fields fields(params);
    fields.allow_only({"text", "add_special", "parse_special"});
    const auto text = fields.string("text", SIZE_MAX);
    if (!text)
        throw invalid_params("text", "text is missing");
    const auto ids = server.engine().tokenize(*text, fields.boolean("add_special").value_or(true),
                                              fields.boolean("parse_special").value_or(false));
    return json::object{{"tokens", json::value_from(ids)}};
}

json::value detokenize(Server& server, const json::object& params, uint32_t) {
    const Fields fields(params);
    fields.allow_only({"tokens"});
    const json::value* tokens = fields.find("tokens");
    if (tokens == nullptr)
        throw invalid_params("tokens", "tokens is missing");
    const json::array& items = array_value(*tokens, "tokens", SIZE_MAX);
    std::vector<int32_t> ids;
    ids.reserve(items.size());
    const int64_t last = server.model().n_vocab - 1;
    for (size_t i = 0; i < items.size(); ++i)
        ids.push_back(static_cast<int32_t>(integer_value(items[i], "tokens[" + std::to_string(i) + "]", 0, last)));
    return json::object{{"text", server.engine().detokenize(ids)}};
}

json::value session_list(Server& server, const json::object& params, uint32_t uid) {
    Fields(params).allow_only({});
    json::array sessions;
    for (const engine::SessionInfo& info : server.engine().list_sessions(uid))
        sessions.push_back(session_json(info, false));
    return json::object{{"sessions", std::move(sessions)}};
}

json::value session_info(Server& server, const json::object& params, uint32_t uid) {
    const Fields fields(params);
    fields.allow_only({"session", "uid"});
    return session_json(server.engine().session_info(required_session(fields), session_owner(fields, uid)), true);
}

json::value session_reset(Server& server, const json::object& params, uint32_t uid) {
    const Fields fields(params);
    fields.allow_only({"session", "uid"});
    const std::string name = required_session(fields);
    server.engine().reset_session(name, session_owner(fields, uid));
    return json::object{{"session", name}, {"reset", true}};
}

json::value session_delete(Server& server, const json::object& params, uint32_t uid) {
    const Fields fields(params);
    fields.allow_only({"session", "uid"});
    const std::string name = required_session(fields);
    server.engine().delete_session(name, session_owner(fields, uid));
    return json::object{{"session", name}, {"deleted", true}};
}

json::value status(Server& server, const json::object& params, uint32_t) {
    Fields(params).allow_only({});
    return status_json(server.engine().status(), server.open_connections());
}

json::value model_info(Server& server, const json::object& params, uint32_t) {
    Fields(params).allow_only({});
    return model_info_json(server.model());
}

constexpr std::array<std::pair<std::string_view, Handler>, 8> kMethods{{
    {"tokenize", tokenize},
    {"detokenize", detokenize},
    {"session.list", session_list},
    {"session.info", session_info},
    {"session.reset", session_reset},
    {"session.delete", session_delete},
    {"status", status},
    {"model.info", model_info},
}};

}  // namespace

json::value call_method(Server& server, const std::string& method, const json::object& params, uint32_t uid) {
    for (const auto& [name, handler] : kMethods)
        if (name == method)
            return handler(server, params, uid);
    throw ApiError(ErrorKind::MethodNotFound, "unknown method '" + method + "'");
}

}  // namespace strata::daemon
