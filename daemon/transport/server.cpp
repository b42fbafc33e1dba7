// daemon/transport/server.cpp — state shared by the connections (see server.h).
#include "transport/server.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <vector>

namespace strata::daemon {
namespace {

// The model's name, or its file name without ".gguf".
std::string model_id_of(const engine::ModelInfo& info) {
    if (!info.name.empty())
        return info.name;
    std::string id = info.path.substr(info.path.find_last_of('/') + 1);
    if (id.size() > 5 && id.ends_with(".gguf"))
        id.resize(id.size() - 5);
    return id;
}

}  // namespace

Server::Server(asio::io_context& io, engine::Engine& engine, Settings settings, ApiKeys keys)
    : io_(io),
      engine_(engine),
      settings_(std::move(settings)),
      keys_(std::move(keys)),
      model_(engine.model_info()),
      model_id_(model_id_of(model_)),
      started_(static_cast<int64_t>(std::time(nullptr))),
      responses_(settings_.engine.state_dir) {}

figures::Snapshot Server::status() const {
    figures::Snapshot status = engine_.status();
    status.set("connections", open_connections_);
    status.set("connections_total", counters_.connections_total);
    status.set("connections_refused", counters_.connections_refused);
    status.set("rpc_requests_total", counters_.rpc_requests_total);
    status.set("http_requests_total", counters_.http_requests_total);
    status.set("slow_readers_dropped", counters_.slow_readers_dropped);
    status.set("disconnect_cancels", counters_.disconnect_cancels);
    return status;
}

RequestContext Server::request_context(uint32_t uid) const {
    return {uid, settings_.engine.limits};
}

uint32_t Server::tcp_uid(std::string_view authorization) const {
    if (keys_.size() == 0)
        return api_user_uid(kAnonymousUser);  // server.tcp_without_api_keys
    constexpr std::string_view kBearer = "Bearer ";
    if (authorization.empty())
        throw ApiError(ErrorKind::Unauthorized, "an API key is required: send the header Authorization: Bearer KEY (or x-api-key: KEY)");
    if (authorization.size() <= kBearer.size() || !std::equal(kBearer.begin(), kBearer.end(), authorization.begin(),
                                                              [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
        throw ApiError(ErrorKind::Unauthorized, "the Authorization header must be: Bearer KEY");
    const auto user = keys_.find(authorization.substr(kBearer.size()));
    if (!user)
        throw ApiError(ErrorKind::Unauthorized, "the API key is not valid");
    return user->uid;
}

std::string Server::refusal(const Peer& peer) const {
    const ServerSettings& limits = settings_.server;
    if (open_connections_ >= limits.max_connections)
        return "server.max_connections (" + std::to_string(limits.max_connections) + ") are open";
    if (peer.tcp)
        return {};  // who it acts for is known per request only
    const uint32_t uid = peer.uid;
    const auto own = connections_of_.find(uid);
    if (own != connections_of_.end() && own->second >= limits.max_connections_per_user)
        return "uid " + std::to_string(uid) + " has server.max_connections_per_user (" +
               std::to_string(limits.max_connections_per_user) + ") open";
    return {};
}

Server::Slot::Slot(Server& server, uint32_t uid) : server_(&server), uid_(uid) {
    ++server_->open_connections_;
    ++server_->connections_of_[uid];
    ++server_->counters_.connections_total;
}

Server::Slot::Slot(Slot&& other) noexcept : server_(std::exchange(other.server_, nullptr)), uid_(other.uid_) {}

Server::Slot::~Slot() {
    if (server_ == nullptr)
        return;
    --server_->open_connections_;
    if (--server_->connections_of_[uid_] == 0)
        server_->connections_of_.erase(uid_);
}

uint64_t Server::submit(engine::GenerateRequest request, std::weak_ptr<RequestListener> listener, uint64_t key,
                        Endpoint endpoint) {
    return engine_.submit(std::move(request),
                          timed_sink(make_posting_sink(io_, std::move(listener), key), latency_, endpoint));
}

uint64_t Server::add(std::weak_ptr<Connection> connection) {
    const uint64_t id = next_id_++;
    registry_.emplace(id, std::move(connection));
    return id;
}

void Server::for_each_connection(const std::function<void(Connection&)>& action) {
    std::vector<std::shared_ptr<Connection>> alive;  // the action may close (and unregister) connections
    for (const auto& [id, weak] : registry_)
        if (auto connection = weak.lock())
            alive.push_back(std::move(connection));
    for (const auto& connection : alive)
        action(*connection);
}

}  // namespace strata::daemon
