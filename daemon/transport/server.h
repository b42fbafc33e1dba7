// daemon/transport/server.h — what every connection shares: the engine, the live settings (replaced
// on SIGHUP), the loaded model's facts, the daemon-side counters and latencies for /metrics
// (generations are submitted here, to be measured), whether the
// daemon is stopping, and the registry of open connections (counted against
// server.max_connections; told to cancel or close at shutdown), the stored responses of
// /v1/responses. Lives on the io_context
// thread. Must not touch: sockets and protocols (listener.h, *_connection.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "host/latency.h"
#include "host/settings.h"
#include "protocol/generate_params.h"
#include "responses/response_store.h"
#include "transport/api_keys.h"
#include "transport/asio.h"
#include "transport/peer.h"
#include "transport/sink.h"

namespace strata::daemon {

// What shutdown needs from an open connection.
class Connection {
public:
    virtual ~Connection() = default;
    virtual void cancel_requests() = 0;   // cancel everything in flight (each still gets its final answer)
    virtual void close_when_idle() = 0;   // close once nothing is in flight and all output is sent
};

struct Counters {
    uint64_t connections_total = 0;
    uint64_t connections_refused = 0;   // over server.max_connections or max_connections_per_user
    uint64_t rpc_requests_total = 0;
    uint64_t http_requests_total = 0;
    uint64_t slow_readers_dropped = 0;  // output buffer overflowed
    uint64_t disconnect_cancels = 0;    // requests cancelled because their client left
};

class Server {
public:
    Server(asio::io_context& io, engine::Engine& engine, Settings settings, ApiKeys keys);

    asio::io_context& io() { return io_; }
    engine::Engine& engine() { return engine_; }
    const Settings& settings() const { return settings_; }
    void replace_settings(Settings settings) { settings_ = std::move(settings); }

    const engine::ModelInfo& model() const { return model_; }
    const std::string& model_id() const { return model_id_; }  // the name HTTP clients see
    int64_t started() const { return started_; }               // unix seconds
    RequestContext request_context(uint32_t uid) const;

    // Who a request over TCP acts as: the user of its API key (`authorization` is the
    // Authorization header, "Bearer KEY"), or "anonymous" on a listener without keys
    // (server.tcp_without_api_keys). Throws ApiError (unauthorized) naming what is missing.
    uint32_t tcp_uid(std::string_view authorization) const;
    void replace_api_keys(ApiKeys keys) { keys_ = std::move(keys); }
    std::string user_name(uint32_t uid) const { return keys_.name_of(uid); }  // a key user's, or ""

    bool stopping() const { return stopping_; }
    void begin_stopping() { stopping_ = true; }

    ResponseStore& responses() { return responses_; }  // /v1/responses with store: true

    Counters& counters() { return counters_; }
    // The status figures: the engine's, and this server's connections and counters.
    figures::Snapshot status() const;
    const Latency& latency() const { return *latency_; }

    // Engine::submit with the output posted to `listener` (as `key`) and its latencies
    // recorded under `endpoint`. Throws what Engine::submit throws.
    uint64_t submit(engine::GenerateRequest request, std::weak_ptr<RequestListener> listener, uint64_t key,
                    Endpoint endpoint);

    // A connection's place in the counts (all, and its uid's); released when destroyed.
    class Slot {
    public:
        Slot(Server& server, uint32_t uid);
        Slot(Slot&& other) noexcept;
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
        Slot& operator=(Slot&&) = delete;
        ~Slot();

    private:
        Server* server_;
        uint32_t uid_;
    };
    size_t open_connections() const { return open_connections_; }
    // Why one more connection of `peer` is refused ("" when it is not): the limit reached
    // (server.max_connections; for a Unix peer also max_connections_per_user).
    std::string refusal(const Peer& peer) const;

    // Registered connections (after the protocol is known), for shutdown.
    uint64_t add(std::weak_ptr<Connection> connection);
    void remove(uint64_t id) { registry_.erase(id); }
    void for_each_connection(const std::function<void(Connection&)>& action);

private:
    asio::io_context& io_;
    engine::Engine& engine_;
    Settings settings_;
    ApiKeys keys_;
    engine::ModelInfo model_;
    std::string model_id_;
    int64_t started_;
    bool stopping_ = false;
    Counters counters_;
    ResponseStore responses_;
    std::shared_ptr<Latency> latency_ = std::make_shared<Latency>();  // shared with the sinks of running requests
    size_t open_connections_ = 0;
    std::map<uint32_t, size_t> connections_of_;  // open connections per uid
    uint64_t next_id_ = 1;
    std::map<uint64_t, std::weak_ptr<Connection>> registry_;
};

}  // namespace strata::daemon
