// kernels/threadpool.h — the compute threads of a forward pass.
// Owns: a fixed set of worker threads that spin briefly between jobs (a futex round
// trip per matmul costs more than a small matmul) and then sleep. The calling thread
// takes part as thread 0. Must not touch: what the jobs compute.
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

    // Calls job(thread, n_threads) once on each thread and returns when all are done.
    template <class F>
    void run(F&& job) {
        auto thunk = [](void* ctx, int t, int n) { (*static_cast<F*>(ctx))(t, n); };
        dispatch(thunk, &job);
    }

    // Splits [0, n) into chunks of `grain` and hands them out dynamically;
    // body(begin, end, thread) runs once per chunk.
    template <class F>
    void parallel_for(int64_t n, int64_t grain, F&& body) {
        std::atomic<int64_t> next{0};
        run([&](int t, int) {
            for (;;) {
                int64_t b = next.fetch_add(grain, std::memory_order_relaxed);
                if (b >= n) break;
                body(b, b + grain < n ? b + grain : n, t);
            }
        });
    }

private:
    using Thunk = void (*)(void*, int, int);
    void dispatch(Thunk fn, void* ctx);
    void worker(int index);

    int n_threads_;
    std::vector<std::thread> threads_;
    Thunk fn_ = nullptr;
    void* ctx_ = nullptr;
    std::atomic<uint32_t> generation_{0};  // 32 bits: atomic::wait is a plain futex
    std::atomic<int> pending_{0};
    std::atomic<bool> stop_{false};
};

}  // namespace strata::kernels
