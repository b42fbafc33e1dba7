// daemon/transport/output_queue.cpp — bounded, ordered asynchronous writes (see output_queue.h).
#include "transport/output_queue.h"

#include <boost/asio/write.hpp>
#include <utility>
#include <vector>

namespace strata::daemon {
namespace {
constexpr size_t kMaxGather = 64;  // strings per write call
}

OutputQueue::OutputQueue(Socket& socket, std::function<std::shared_ptr<void>()> owner,
                         std::function<void(boost::system::error_code)> on_error)
    : socket_(socket), owner_(std::move(owner)), on_error_(std::move(on_error)) {}

bool OutputQueue::push(std::string bytes, uint64_t limit) {
    if (failed_)
        return true;  // the connection is going away; nothing more will be written
    if (unsent_ + bytes.size() > limit)
        return false;
    unsent_ += bytes.size();
    queue_.push_back(std::move(bytes));
    if (writing_ == 0)
        write_next();
    return true;
}

void OutputQueue::when_idle(std::function<void()> then) {
    if (queue_.empty() || failed_) {
        then();
        return;
    }
    when_idle_.push_back(std::move(then));
}

void OutputQueue::run_when_idle() {
    for (auto& then : std::exchange(when_idle_, {}))
        then();
}

void OutputQueue::write_next() {
    std::vector<asio::const_buffer> buffers;
    for (size_t i = 0; i < queue_.size() && i < kMaxGather; ++i)
        buffers.push_back(asio::buffer(queue_[i]));
    writing_ = buffers.size();
    asio::async_write(socket_, buffers, [this, keep = owner_()](boost::system::error_code ec, size_t count) {
        on_written(ec, count);
    });
}

void OutputQueue::on_written(boost::system::error_code ec, size_t count) {
    unsent_ -= count;
    if (ec) {
        failed_ = true;
        queue_.clear();
        unsent_ = 0;
        writing_ = 0;
        on_error_(ec);
        run_when_idle();
        return;
    }
    for (; writing_ > 0; --writing_)
        queue_.pop_front();
    if (!queue_.empty()) {
        write_next();
        return;
    }
    run_when_idle();
}

}  // namespace strata::daemon
