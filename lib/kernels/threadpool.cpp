// kernels/threadpool.cpp — spinning-then-sleeping worker threads.
#include "kernels/threadpool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace strata::kernels {
namespace {
constexpr int kSpinIterations = 1 << 16;

inline void cpu_relax() {
#if defined(__x86_64__)
    _mm_pause();
#endif
}
}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
    for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    generation_.fetch_add(1);
    generation_.notify_all();
    for (auto& t : threads_) t.join();
}

void ThreadPool::dispatch(Thunk fn, void* ctx) {
    if (n_threads_ == 1) {
        fn(ctx, 0, 1);
        return;
    }
    fn_ = fn;
    ctx_ = ctx;
    pending_.store(n_threads_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    fn(ctx, 0, n_threads_);
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
        if (spins < kSpinIterations) {
            cpu_relax();
        } else {
            int p = pending_.load(std::memory_order_acquire);
            if (p) pending_.wait(p);
        }
    }
}

void ThreadPool::worker(int index) {
    // Generation 0 is the constructor's: a job dispatched before this thread got here
    // has already bumped the counter and must still be run.
    uint64_t seen = 0;
    for (;;) {
        uint64_t g;
        for (int spins = 0; (g = generation_.load(std::memory_order_acquire)) == seen; ++spins) {
            if (spins < kSpinIterations) cpu_relax();
            else generation_.wait(seen);
        }
        seen = g;
        if (stop_.load()) return;
        fn_(ctx_, index, n_threads_);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
}

}  // namespace strata::kernels
