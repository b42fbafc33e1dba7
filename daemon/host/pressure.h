// daemon/host/pressure.h — following the memory the system lets stratad use while it
// serves. Owns: the watch thread (kernel pressure notifications — a PSI trigger on the
// cgroup's memory.pressure under cgroup v2, memory.pressure_level through
// cgroup.event_control under v1, /proc/pressure/memory without a memory cgroup — wake it at
// once; the limit file and the others' usage are read every half second anyway, so a
// limit written with `systemctl set-property` or into the cgroup is followed within that),
// and the budget policy. Must not touch: what a budget change does (engine/rebudget.cpp),
// where the limit files are (weights/budget.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "weights/budget.h"

namespace strata::daemon {

// The budget from readings of the limit and of what others use within it. Lowered at once
// when others hold more than a margin (a sixteenth of the limit, 16–256 MiB) of the budget,
// to what they leave less that margin, so that the next step of their growth finds room
// (the plan's figures are upper bounds: stratad holds less than its budget);
// raised again, up to what they leave (and never above `cap`, memory.budget as
// configured), only after `regrow_after` without a lowering, so that it does not flap.
// A new cap (reload) applies at the next reading in both directions, without waiting.
class BudgetPolicy {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr uint64_t kNoCap = ~uint64_t(0);

    BudgetPolicy(uint64_t cap, uint64_t start, Clock::duration regrow_after);
    std::optional<uint64_t> update(Clock::time_point now, const weights::MemoryReading& reading);
    void reconfigure(uint64_t cap, Clock::duration regrow_after);
    uint64_t budget() const { return budget_; }
    static uint64_t margin(uint64_t limit);

private:
    uint64_t cap_, budget_;
    Clock::duration regrow_after_;
    Clock::time_point lowered_{};
    bool cap_changed_ = false;
};

// The watch thread: calls `apply` (from its own thread) with each new budget.
class PressureWatch {
public:
    using Apply = std::function<void(const weights::Budget&)>;
    PressureWatch(uint64_t cap, uint64_t start, std::chrono::milliseconds regrow_after, Apply apply);
    ~PressureWatch();
    PressureWatch(const PressureWatch&) = delete;
    PressureWatch& operator=(const PressureWatch&) = delete;
    // memory.budget and memory.regrow_after after a reload.
    void reconfigure(uint64_t cap, std::chrono::milliseconds regrow_after);
    // How it hears of pressure, for the log: "cgroup v1 memory.pressure_level (DIR)", ...
    const std::string& source() const { return source_; }

private:
    void subscribe();
    void run();

    std::optional<weights::MemoryCgroup> cgroup_;
    Apply apply_;
    std::mutex mu_;
    BudgetPolicy policy_;  // guarded by mu_
    int notify_fd_ = -1;   // readable (v1 eventfd) or POLLPRI (PSI trigger) on pressure; -1: polling only
    short notify_events_ = 0;
    int level_fd_ = -1;    // v1: memory.pressure_level, kept open while subscribed
    int stop_fd_ = -1;     // eventfd ending the thread
    std::string source_;
    std::thread thread_;
};

}  // namespace strata::daemon
