// daemon/transport/output_queue.h — a connection's outgoing bytes: queued in order, written with
// gathered asynchronous writes, and bounded: a push that would leave more than the limit
// unsent is refused, so a client that does not read cannot make the daemon buffer without
// end (its connection is then dropped by the caller). Owns: the queue and the write loop.
// Must not touch: what the bytes mean.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/asio.h"

namespace strata::daemon {

class OutputQueue {
public:
    // `owner` returns a pointer that keeps the socket and this queue alive while a write is
    // pending; `on_error` is called (once) when a write fails.
    OutputQueue(Socket& socket, std::function<std::shared_ptr<void>()> owner,
                std::function<void(boost::system::error_code)> on_error);

    // Queues `bytes`; false (nothing queued) when the unsent total would exceed `limit`.
    bool push(std::string bytes, uint64_t limit);
    uint64_t unsent() const { return unsent_; }
    bool idle() const { return queue_.empty(); }
    // Calls `then` once everything queued has been written (at once when idle, or when
    // writing failed).
    void when_idle(std::function<void()> then);

private:
    void write_next();
    void on_written(boost::system::error_code ec, size_t count);
    void run_when_idle();

    Socket& socket_;
    std::function<std::shared_ptr<void>()> owner_;
    std::function<void(boost::system::error_code)> on_error_;
    std::deque<std::string> queue_;
    uint64_t unsent_ = 0;
    size_t writing_ = 0;  // strings at the front of queue_ being written
    bool failed_ = false;
    std::vector<std::function<void()>> when_idle_;
};

}  // namespace strata::daemon
