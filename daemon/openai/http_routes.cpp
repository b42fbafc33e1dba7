// daemon/openai/http_routes.cpp — the HTTP routing table (see http_routes.h).
#include "openai/http_routes.h"

#include <array>
#include <boost/json/serialize.hpp>

#include "host/metrics.h"
#include "protocol/json_text.h"
#include "protocol/tokens.h"

namespace strata::daemon {
namespace json = boost::json;
namespace {

HttpReply json_reply(unsigned status, const json::value& value) {
    return {status, "application/json", json::serialize(value) + "\n", {}};
}

json::object parse_body(const std::string& body, unsigned max_depth) {
    json::value value = parse_json_text(body, max_depth, "the body");
    if (!value.is_object())
        throw ApiError(ErrorKind::InvalidRequest, "the body must be a JSON object");
    return std::move(value.get_object());
}

Routed health(Server& server, const std::string&, const Caller&) {
    if (server.stopping()) {
        HttpReply reply = json_reply(503, json::object{{"status", "stopping"}});
        reply.retry_after = retry_after(ErrorKind::ShuttingDown);
        return reply;
    }
    return json_reply(200, json::object{{"status", "ok"}, {"model", server.model_id()}});
}

Routed metrics(Server& server, const std::string&, const Caller&) {
    return HttpReply{200, "text/plain; version=0.0.4; charset=utf-8",
                     prometheus_text(server.status(), server.latency()),
                     {}};
}

Routed models(Server& server, const std::string&, const Caller&) {
    return json_reply(200, models_json(server.model_id(), server.started()));
}

// GET /v1/models/{id}: the model object, or model_not_found.
Routed model_by_id(Server& server, std::string_view id) {
    if (id != server.model_id())
        throw ApiError(ErrorKind::ModelNotFound, "no model \"" + std::string(id) + "\"; this daemon serves \"" + server.model_id() + "\"");
    return json_reply(200, model_json(server.model_id(), server.started()));
}

Routed tokenize(Server& server, const std::string& body, const Caller&) {
    return json_reply(200, tokenize_json(server.engine(), parse_body(body, server.settings().server.max_json_depth), "content"));
}

Routed detokenize(Server& server, const std::string& body, const Caller&) {
    return json_reply(200, detokenize_json(server.engine(), server.model().n_vocab,
                                           parse_body(body, server.settings().server.max_json_depth), "content"));
}

// The X-Strata-Session header's session, which the body's must not contradict.
void join_session(const Caller& caller, engine::GenerateRequest& request) {
    if (caller.session.empty())
        return;
    if (!request.session.empty() && request.session != caller.session)
        throw invalid_params("session", "the body's session \"" + request.session + "\" and the " + kSessionHeader +
                                            " header's \"" + caller.session + "\" differ");
    request.session = caller.session;
}

// A generation in any wire format: refused while stopping; `parse` reads its body (the caller's
// context, the model's tool-call format).
template <typename Parse>
Routed generation_call(Server& server, const std::string& body, const Caller& caller, Parse parse) {
    if (server.stopping())
        throw ApiError(ErrorKind::ShuttingDown, "the daemon is shutting down");
    auto call = parse(parse_body(body, server.settings().server.max_json_depth), server.request_context(caller.uid),
                      tool_format(server.model().chat_template_source));
    join_session(caller, call.request);
    if (!call.request.messages.empty())
        call.reasoning = server.engine().reasoning_syntax(call.request);
    return call;
}

Routed generation(OpenAiKind kind, Server& server, const std::string& body, const Caller& caller) {
    return generation_call(server, body, caller, [kind](const json::object& fields, const RequestContext& context, ToolFormat format) {
        return parse_openai(kind, fields, context, format);
    });
}

Routed completions(Server& server, const std::string& body, const Caller& caller) {
    return generation(OpenAiKind::Completion, server, body, caller);
}

Routed chat_completions(Server& server, const std::string& body, const Caller& caller) {
    return generation(OpenAiKind::Chat, server, body, caller);
}

Routed messages(MessagesKind kind, Server& server, const std::string& body, const Caller& caller) {
    return generation_call(server, body, caller, [kind](const json::object& fields, const RequestContext& context, ToolFormat format) {
        return parse_messages(kind, fields, context, format);
    });
}

// previous_response_id is looked up among the caller's stored responses.
Routed responses_create(Server& server, const std::string& body, const Caller& caller) {
    return generation_call(server, body, caller, [&](const json::object& fields, const RequestContext& context, ToolFormat format) {
        return parse_responses(fields, context, format, server.model_id(), [&](const std::string& id) {
            return server.responses().continuation(caller.uid, id, context.limits.session_idle_timeout_s);
        });
    });
}

// GET and DELETE /v1/responses/{id}: the caller's stored response.
Routed stored_response(Server& server, std::string_view method, std::string_view id, const Caller& caller) {
    ResponseStore& store = server.responses();
    const int64_t idle_timeout = server.request_context(caller.uid).limits.session_idle_timeout_s;
    if (method == "DELETE") {
        store.erase(caller.uid, std::string(id), idle_timeout);
        return json_reply(200, deleted_response_json(std::string(id)));
    }
    return json_reply(200, store.get(caller.uid, std::string(id), idle_timeout));
}

// 405: `path` only accepts `accepted` (the Allow header: `allow`).
HttpReply method_not_allowed(std::string_view path, std::string_view accepted, std::string_view allow) {
    HttpReply reply = json_reply(405, error_json(ApiError(ErrorKind::InvalidRequest,
                                                          std::string(path) + " only accepts " + std::string(accepted))));
    reply.allow = std::string(allow);
    return reply;
}

Routed messages_create(Server& server, const std::string& body, const Caller& caller) {
    return messages(MessagesKind::Create, server, body, caller);
}

Routed messages_count_tokens(Server& server, const std::string& body, const Caller& caller) {
    return messages(MessagesKind::CountTokens, server, body, caller);
}

// The X-Strata-Session header is ignored: embeddings use no session.
Routed embeddings(Server& server, const std::string& body, const Caller& caller) {
    if (server.stopping())
        throw ApiError(ErrorKind::ShuttingDown, "the daemon is shutting down");
    return parse_embed(parse_body(body, server.settings().server.max_json_depth), server.request_context(caller.uid),
                       server.model().n_embd, server.model().n_vocab);
}

// The X-Strata-Session header is ignored: infill uses no session.
Routed infill(Server& server, const std::string& body, const Caller& caller) {
    if (server.stopping())
        throw ApiError(ErrorKind::ShuttingDown, "the daemon is shutting down");
    return parse_infill(parse_body(body, server.settings().server.max_json_depth), server.request_context(caller.uid));
}

// The X-Strata-Session header is ignored: reranking uses no session.
Routed rerank(Server& server, const std::string& body, const Caller& caller) {
    if (server.stopping())
        throw ApiError(ErrorKind::ShuttingDown, "the daemon is shutting down");
    return parse_rerank(parse_body(body, server.settings().server.max_json_depth), server.request_context(caller.uid));
}

struct Route {
    std::string_view path;
    std::string_view method;  // GET routes also answer HEAD
    Routed (*handler)(Server&, const std::string&, const Caller&);
};

constexpr std::string_view kMessagesPath = "/v1/messages";

constexpr std::array<Route, 15> kRoutes{{
    {"/health", "GET", health},
    {"/metrics", "GET", metrics},
    {"/tokenize", "POST", tokenize},
    {"/detokenize", "POST", detokenize},
    {"/v1/models", "GET", models},
    {"/v1/completions", "POST", completions},
    {"/v1/chat/completions", "POST", chat_completions},
    {"/v1/embeddings", "POST", embeddings},
    {"/infill", "POST", infill},
    {"/v1/rerank", "POST", rerank},
    {"/rerank", "POST", rerank},
    {"/v1/reranking", "POST", rerank},
    {"/v1/responses", "POST", responses_create},
    {kMessagesPath, "POST", messages_create},
    {"/v1/messages/count_tokens", "POST", messages_count_tokens},
}};

}  // namespace

HttpReply error_reply(const ApiError& error) {
    HttpReply reply = json_reply(http_status(error.kind()), error_json(error));
    reply.retry_after = retry_after(error.kind());
    return reply;
}

HttpReply messages_error_reply(const ApiError& error) {
    HttpReply reply = json_reply(messages_status(error.kind()), messages_error_json(error));
    reply.retry_after = retry_after(error.kind());
    return reply;
}

bool is_messages_path(std::string_view target) {
    const std::string_view path = target.substr(0, target.find('?'));
    return path == kMessagesPath || (path.starts_with(kMessagesPath) && path[kMessagesPath.size()] == '/');
}

Routed route(Server& server, std::string_view method, std::string_view target, const std::string& body,
             const Caller& caller) {
    const std::string_view path = target.substr(0, target.find('?'));
    constexpr std::string_view kModelPrefix = "/v1/models/";
    if (path.starts_with(kModelPrefix) && path.size() > kModelPrefix.size()) {
        if (method != "GET" && method != "HEAD")
            return method_not_allowed(path, "GET", "GET, HEAD");
        return model_by_id(server, path.substr(kModelPrefix.size()));
    }
    constexpr std::string_view kResponsePrefix = "/v1/responses/";
    if (path.starts_with(kResponsePrefix) && path.size() > kResponsePrefix.size()) {
        if (method != "GET" && method != "DELETE")
            return method_not_allowed(path, "GET and DELETE", "GET, DELETE");
        return stored_response(server, method, path.substr(kResponsePrefix.size()), caller);
    }
    for (const Route& route : kRoutes) {
        if (route.path != path)
            continue;
        if (method != route.method && !(route.method == "GET" && method == "HEAD"))
            return method_not_allowed(path, route.method, route.method == "GET" ? "GET, HEAD" : route.method);
        return route.handler(server, body, caller);
    }
    return error_reply(ApiError(ErrorKind::MethodNotFound, "no such path: " + std::string(path)));
}

}  // namespace strata::daemon
