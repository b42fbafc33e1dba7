// kernels/threadpool.h — the compute threads of a forward pass.
// Owns: a fixed set of worker threads that spin briefly between jobs (a futex round
// trip per matmul costs more than a small matmul) and then sleep. The calling thread
// takes part as thread 0. Work is handed out in chunks that threads take as they come,
// and the caller never waits for a worker that has not started: once every chunk is
// taken it closes the job and waits only for the workers that joined it. On a machine
// whose cores are shared (the daemon's I/O thread, clients, other services) a preempted
// worker therefore costs nothing instead of a scheduler time slice per matrix product.
// Must not touch: what the jobs compute.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace strata::kernels {

class ThreadPool {
public:
    // n_threads >= 1 counts the caller.
    explicit ThreadPool(int n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return n_threads_; }

    // Splits [0, n) into chunks of `grain` and hands them out dynamically;
    // body(begin, end, thread) runs once per chunk, `thread` < size() naming the thread
    // that runs it (for per-thread scratch). Returns when every chunk is done.
    template <class F>
    void parallel_for(int64_t n, int64_t grain, F&& body) {
        std::atomic<int64_t> next{0};
        auto work = [&](int t) {
            for (;;) {
                int64_t b = next.fetch_add(grain, std::memory_order_relaxed);
                if (b >= n) break;
                body(b, b + grain < n ? b + grain : n, t);
            }
        };
        auto thunk = [](void* ctx, int t) { (*static_cast<decltype(work)*>(ctx))(t); };
        dispatch(thunk, &work);
    }

private:
    using Thunk = void (*)(void*, int);
    void dispatch(Thunk fn, void* ctx);
    void worker(int index);

    int n_threads_;
    std::vector<std::thread> threads_;
    Thunk fn_ = nullptr;
    void* ctx_ = nullptr;
    std::atomic<uint32_t> generation_{0};  // the current job; 32 bits: atomic::wait is a plain futex
    std::atomic<uint32_t> closed_{0};      // the last job whose work is all taken
    std::atomic<int> active_{0};           // workers inside the current job
    std::atomic<bool> stop_{false};
};

}  // namespace strata::kernels
