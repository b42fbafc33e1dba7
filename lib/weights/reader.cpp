// weights/reader.cpp — io_uring reads with a completion thread.
#include "weights/reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace strata::weights {
namespace {

constexpr uint64_t kWake = ~uint64_t(0);  // user_data of the NOP that stops the thread

std::string describe_error(int err) { return std::strerror(err); }

}  // namespace

AsyncReader::AsyncReader(const std::string& path, uint64_t file_size, const StreamOptions& options)
    : path_(path), file_size_(file_size), options_(options) {
    if (options_.direct) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    direct_ = fd_ >= 0;
    if (fd_ < 0) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + path + " for streaming");
    if (const int rc = io_uring_queue_init(options_.queue_depth, &ring_, 0); rc < 0) {
        ::close(fd_);
        throw std::system_error(-rc, std::generic_category(), "cannot set up io_uring for streaming " + path);
    }
    in_flight_.resize(options_.queue_depth);
    for (size_t i = 0; i < in_flight_.size(); ++i) free_slots_.push_back(in_flight_.size() - 1 - i);
    thread_ = std::thread([this] { run(); });
}

AsyncReader::~AsyncReader() {
    drain();
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, kWake);
        io_uring_submit(&ring_);
    }
    thread_.join();
    io_uring_queue_exit(&ring_);
    ::close(fd_);
}

void AsyncReader::read(uint64_t tag, std::span<const FileRange> ranges, uint8_t* dst) {
    std::lock_guard lk(mu_);
    Batch& b = batches_[tag];
    for (const auto& r : ranges) {
        for (uint64_t at = 0; at < r.length; at += options_.chunk_bytes) {
            const auto len = static_cast<uint32_t>(std::min<uint64_t>(options_.chunk_bytes, r.length - at));
            backlog_.push_back({tag, r.offset + at, len, dst, 0});
            dst += len;
            ++b.pending;
        }
    }
    if (b.pending == 0) done_.notify_all();
    submit_backlog();
}

void AsyncReader::submit_backlog() {
    int queued = 0;
    while (!backlog_.empty() && !free_slots_.empty()) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        if (!sqe) break;
        const size_t slot = free_slots_.back();
        free_slots_.pop_back();
        if (free_slots_.size() + 1 == in_flight_.size()) busy_since_ = Clock::now();
        Job& j = in_flight_[slot] = backlog_.front();
        backlog_.pop_front();
        io_uring_prep_read(sqe, fd_, j.dst, j.length, j.offset);
        io_uring_sqe_set_data64(sqe, slot);
        ++queued;
    }
    if (queued) io_uring_submit(&ring_);
}

// Decides what a completed read means: done, retry (the rest of) it, or give up.
void AsyncReader::complete(size_t slot, int res) {
    Job j = in_flight_[slot];
    free_slots_.push_back(slot);
    if (free_slots_.size() == in_flight_.size()) counters_.busy_s += std::chrono::duration<double>(Clock::now() - busy_since_).count();
    if (faults_left_ > 0) {
        --faults_left_;
        if (options_.fault_stall_ms > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(options_.fault_stall_ms));
        else
            res = options_.fault_short ? static_cast<int>((j.length / 2) & ~4095u) : -EIO;
    }
    Batch& b = batches_[j.tag];
    auto retry = [&](const std::string& why) {
        ++counters_.retries;
        if (++j.attempts > options_.max_retries) {
            if (b.error.empty())
                b.error = "cannot read " + path_ + " at byte " + std::to_string(j.offset) + " (" + std::to_string(j.length) + " bytes): " + why +
                          ", after " + std::to_string(options_.max_retries) + " retries";
            --b.pending;
            return;
        }
        backlog_.push_front(j);
    };
    if (res == -EAGAIN || res == -EINTR) {
        backlog_.push_front(j);
    } else if (res < 0) {
        retry(describe_error(-res));
    } else if (static_cast<uint32_t>(res) < j.length && j.offset + static_cast<uint64_t>(res) < file_size_) {
        if (res == 0) {
            retry("unexpected end of file (was the model file truncated?)");
        } else {  // a short read: fetch the rest
            counters_.bytes += static_cast<uint64_t>(res);
            j.offset += static_cast<uint64_t>(res);
            j.dst += res;
            j.length -= static_cast<uint32_t>(res);
            retry("short read");
        }
    } else {
        counters_.bytes += static_cast<uint64_t>(res);
        if (!direct_) ::posix_fadvise(fd_, static_cast<off_t>(j.offset), j.length, POSIX_FADV_DONTNEED);
        --b.pending;
    }
    if (b.pending == 0) done_.notify_all();
}

void AsyncReader::run() {
    for (;;) {
        io_uring_cqe* cqe = nullptr;
        const int rc = io_uring_wait_cqe(&ring_, &cqe);
        if (rc == -EINTR) continue;
        std::lock_guard lk(mu_);
        if (rc < 0) {  // the ring itself failed: fail everything in flight
            for (auto& [tag, b] : batches_)
                if (b.pending) {
                    if (b.error.empty()) b.error = "io_uring failed: " + describe_error(-rc);
                    b.pending = 0;
                }
            done_.notify_all();
            return;
        }
        const uint64_t data = io_uring_cqe_get_data64(cqe);
        const int res = cqe->res;
        io_uring_cqe_seen(&ring_, cqe);
        if (data == kWake) {
            if (stopping_) return;
            continue;
        }
        complete(static_cast<size_t>(data), res);
        submit_backlog();
    }
}

std::string AsyncReader::wait(uint64_t tag) {
    std::unique_lock lk(mu_);
    done_.wait(lk, [&] { return batches_[tag].pending == 0; });
    std::string error = std::move(batches_[tag].error);
    batches_.erase(tag);
    return error;
}

void AsyncReader::drain() {
    std::unique_lock lk(mu_);
    done_.wait(lk, [&] { return std::all_of(batches_.begin(), batches_.end(), [](const auto& kv) { return kv.second.pending == 0; }); });
    batches_.clear();
}

void AsyncReader::arm_faults() {
    std::lock_guard lk(mu_);
    faults_left_ = options_.fault_count;
}

AsyncReader::Counters AsyncReader::counters() const {
    std::lock_guard lk(mu_);
    Counters c = counters_;
    if (free_slots_.size() < in_flight_.size()) c.busy_s += std::chrono::duration<double>(Clock::now() - busy_since_).count();  // busy now
    return c;
}

}  // namespace strata::weights
