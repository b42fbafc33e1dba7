// daemon/transport/sink.h — how a request's output gets from the engine thread to its connection:
// the engine calls the Sink on its own thread; this Sink only posts each event to the
// io_context, where the connection (if it still exists) handles it. Never blocks the engine.
// Owns: the hand-over between the two threads. Must not touch: what connections do with it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "protocol/errors.h"
#include "transport/asio.h"

namespace strata::daemon {

// A connection's side of its requests; called on the io_context thread. `key` tells the
// connection's requests apart.
class RequestListener {
public:
    virtual ~RequestListener() = default;
    virtual void on_text(uint64_t key, std::string text) = 0;
    virtual void on_logprobs(uint64_t /*key*/, engine::TokenLogprobs /*logprobs*/) {}  // before its token's text
    virtual void on_done(uint64_t key, engine::Result result) = 0;
    virtual void on_error(uint64_t key, ApiError error) = 0;
};

std::shared_ptr<engine::Sink> make_posting_sink(asio::io_context& io, std::weak_ptr<RequestListener> listener,
                                                uint64_t key);

}  // namespace strata::daemon
