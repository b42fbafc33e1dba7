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
        fn(ctx, 0);
        return;
    }
    fn_ = fn;
    ctx_ = ctx;
    const uint32_t job = generation_.fetch_add(1) + 1;  // publishes fn_ and ctx_
    generation_.notify_all();
    fn(ctx, 0);
    // Every chunk is taken: workers that have not joined yet must not start, and the
    // ones inside are finishing their last chunk. (Sequentially consistent: a worker
    // either sees the job closed, or is counted in active_ here.)
    closed_.store(job);
    if (spin_while([&] { return active_.load() != 0; })) return;
    for (int a; (a = active_.load()) != 0;) active_.wait(a);
}

void ThreadPool::worker(int index) {
    // Generation 0 is the constructor's: a job dispatched before this thread got here
    // has already bumped the counter and is joined (or found closed) like any other.
    uint32_t seen = 0;
    for (;;) {
        if (!spin_while([&] { return generation_.load(std::memory_order_acquire) == seen; }))
            while (generation_.load(std::memory_order_acquire) == seen) generation_.wait(seen);
        seen = generation_.load(std::memory_order_acquire);
        if (stop_.load()) return;
        active_.fetch_add(1);
        // Join only the job seen, still open: a worker that stalled before counting itself
        // may find later jobs dispatched and closed since, and fn_, ctx_ then name a
        // returned caller's frame (or the next job's, being written).
        if (generation_.load() == seen && closed_.load() != seen) fn_(ctx_, index);
        if (active_.fetch_sub(1) == 1) active_.notify_one();
    }
}

}  // namespace strata::kernels
