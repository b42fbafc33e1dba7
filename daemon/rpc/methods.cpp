// daemon/rpc/methods.cpp — the native methods that answer at once (see methods.h).
#include "rpc/methods.h"

#include <array>
#include <boost/json/value_from.hpp>
#include <utility>

#include "protocol/errors.h"
#include "protocol/fields.h"
#include "protocol/tokens.h"
#include "protocol/views.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

using Handler = json::value (*)(Server&, const json::object&, uint32_t);

std::string required_session(const Fields& fields) {
    return session_name(fields.required("session"), "session");
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

json::value tokenize(Server& server, const json::object& params, uint32_t) { return tokenize_json(server.engine(), params, "text"); }

json::value detokenize(Server& server, const json::object& params, uint32_t) {
    return detokenize_json(server.engine(), server.model().n_vocab, params, "text");
}

// A session's JSON, with "user" naming its owner when that is an API key's user (TCP).
json::object owned_session_json(const Server& server, const engine::SessionInfo& info, bool detailed) {
    json::object out = session_json(info, detailed);
    if (const std::string user = server.user_name(info.uid); !user.empty())
        out["user"] = user;
    return out;
}

json::value session_list(Server& server, const json::object& params, uint32_t uid) {
    Fields(params).allow_only({});
    json::array sessions;
    for (const engine::SessionInfo& info : server.engine().list_sessions(uid))
        sessions.push_back(owned_session_json(server, info, false));
    return json::object{{"sessions", std::move(sessions)}};
}

json::value session_info(Server& server, const json::object& params, uint32_t uid) {
    const Fields fields(params);
    fields.allow_only({"session", "uid"});
    return owned_session_json(server, server.engine().session_info(required_session(fields), session_owner(fields, uid)), true);
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
    json::object out = status_json(server.status());
    out["latency"] = latency_json(server.latency());
    return out;
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
