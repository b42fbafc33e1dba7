// client/strata/cmd_query.cpp — `strata status`, `strata model` and `strata sessions ...`:
// one call each, shown as text (or as the protocol line with --json).
#include <unistd.h>

#include <boost/json/value.hpp>
#include <cstdio>

#include "commands.h"
#include "io.h"
#include "render.h"

namespace strata::client {

namespace {

struct Query {
    const char* method;
    bool named;  // takes the session name
    std::string (*render)(const boost::json::object& result);
};

Query query_for(Command command) {
    switch (command) {
    case Command::Status: return {"status", false, render_status};
    case Command::Model: return {"model.info", false, render_fields};
    case Command::SessionsShow: return {"session.info", true, render_session};
    case Command::SessionsRemove: return {"session.delete", true, nullptr};
    case Command::SessionsReset: return {"session.reset", true, nullptr};
    default: break;
    }
    return {"session.list", false, [](const boost::json::object& result) -> std::string {
                const auto* list = result.if_contains("sessions");
                if (list == nullptr || !list->is_array() || list->get_array().empty()) return {};
                return render_session_table(list->get_array(), static_cast<uint32_t>(::getuid()));
            }};
}

}  // namespace

int run_query(const Options& options) {
    const Query query = query_for(options.command);
    signals::install();
    RpcClient client = connect_for(options);
    client.echo_lines(options.json);
    boost::json::object params;
    if (query.named) params["session"] = options.target;
    const boost::json::object result = client.call(query.method, std::move(params));
    if (options.json || query.render == nullptr) return 0;
    const std::string text = query.render(result);
    if (text.empty() && options.command == Command::SessionsList) std::fputs("no sessions\n", stderr);
    write_stdout(text);
    return 0;
}

}  // namespace strata::client
