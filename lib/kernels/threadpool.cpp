// kernels/threadpool.cpp — spinning-then-sleeping worker threads.
#include "kernels/threadpool.h"

#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace strata::kernels {
namespace {

// How long a waiting thread spins before it sleeps: long enough to bridge the gap between
// two matrix products of a forward pass, short enough not to burn a shared machine's CPU
// (a futex sleep and wake costs tens of microseconds).
constexpr auto kSpinTime = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__)
    _mm_pause();
#endif
}

// Spins while still(); returns false once kSpinTime has passed (checking the clock every
// 64 pauses), true if still() became false first.
template <class Still>
bool spin_while(Still still) {
    const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (!still()) return true;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() > deadline) return false;
    }
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
    if (spin_while([&] { return pending_.load(std::memory_order_acquire) != 0; })) return;
    for (int p; (p = pending_.load(std::memory_order_acquire)) != 0;) pending_.wait(p);
}

void ThreadPool::worker(int index) {
    // Generation 0 is the constructor's: a job dispatched before this thread got here
    // has already bumped the counter and must still be run.
    uint32_t seen = 0;
    for (;;) {
        if (!spin_while([&] { return generation_.load(std::memory_order_acquire) == seen; }))
            while (generation_.load(std::memory_order_acquire) == seen) generation_.wait(seen);
        seen = generation_.load(std::memory_order_acquire);
        if (stop_.load()) return;
        fn_(ctx_, index, n_threads_);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
}

}  // namespace strata::kernels
