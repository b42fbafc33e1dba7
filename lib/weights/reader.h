// weights/reader.h — internal: asynchronous reads of file ranges with io_uring.
// Owns: the file descriptor (O_DIRECT when the file system allows it), the io_uring, and
// a completion thread that reaps results, retries failed and short reads, drops the page
// cache behind buffered reads, and keeps the queue full from a backlog. Reads are grouped
// in batches (one per layer buffer) that a caller waits for.
#pragma once

#include <liburing.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "weights/ranges.h"
#include "weights/streamed.h"

namespace strata::weights {

class AsyncReader {
public:
    AsyncReader(const std::string& path, uint64_t file_size, const StreamOptions& options);
    ~AsyncReader();
    AsyncReader(const AsyncReader&) = delete;
    AsyncReader& operator=(const AsyncReader&) = delete;

    bool direct() const { return direct_; }
    // From now on the next options.fault_count completed reads fail (the test hook).
    void arm_faults();
    // Queues batch `tag`: `ranges` are read one after another into dst (which holds their
    // total length and is aligned for O_DIRECT). Tags must be unique among unfinished batches.
    void read(uint64_t tag, std::span<const FileRange> ranges, uint8_t* dst);
    // Waits until batch `tag` is complete and forgets it; returns "" or what went wrong.
    std::string wait(uint64_t tag);
    // Waits until every queued batch is complete, and forgets them all.
    void drain();

    struct Counters {
        uint64_t bytes = 0;
        double busy_s = 0;
        uint64_t retries = 0;
    };
    Counters counters() const;

private:
    struct Job {
        uint64_t tag;
        uint64_t offset;
        uint32_t length;
        uint8_t* dst;
        int attempts = 0;
    };
    struct Batch {
        int pending = 0;
        std::string error;
    };
    using Clock = std::chrono::steady_clock;

    void submit_backlog();  // under mu_
    void complete(size_t slot, int res);
    void run();

    std::string path_;
    uint64_t file_size_;
    StreamOptions options_;
    int fd_ = -1;
    bool direct_ = false;
    io_uring ring_{};

    mutable std::mutex mu_;
    std::condition_variable done_;
    std::deque<Job> backlog_;
    std::vector<Job> in_flight_;      // indexed by the request's user_data
    std::vector<size_t> free_slots_;
    std::map<uint64_t, Batch> batches_;
    int faults_left_ = 0;
    bool stopping_ = false;
    Counters counters_;
    Clock::time_point busy_since_;
    std::thread thread_;
};

}  // namespace strata::weights
