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

#include <algorithm>
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
        run_chunks(n, [grain](int64_t) { return grain; }, body);
    }

    // The same with chunks that shrink as the work runs out (guided scheduling): each a
    // multiple of `unit` of about a (2 x size())-th of what is left, so that the first are
    // long (few hand-outs, long sequential reads) and the threads finish within one unit
    // of each other. Every chunk starts at a multiple of `unit`.
    template <class F>
    void parallel_for_guided(int64_t n, int64_t unit, F&& body) {
        const int64_t parts = 2 * int64_t(n_threads_);
        run_chunks(n, [=](int64_t left) { return std::max<int64_t>(1, left / parts / unit) * unit; }, body);
    }

private:
    // body over [0, n) in chunks of size(what is left), handed out as threads come.
    template <class Size, class F>
    void run_chunks(int64_t n, Size size, F& body) {
        std::atomic<int64_t> next{0};
        auto work = [&](int t) {
            for (int64_t b = next.load(std::memory_order_relaxed); b < n;) {
                const int64_t e = b + size(n - b);
                if (!next.compare_exchange_weak(b, e, std::memory_order_relaxed)) continue;  // b: the current start
                body(b, e < n ? e : n, t);
                b = next.load(std::memory_order_relaxed);
            }
        };
        auto thunk = [](void* ctx, int t) { (*static_cast<decltype(work)*>(ctx))(t); };
        dispatch(thunk, &work);
    }

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
