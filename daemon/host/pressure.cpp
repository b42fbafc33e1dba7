// daemon/host/pressure.cpp — the memory watch and its budget policy (see pressure.h).
#include "host/pressure.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>

#include "host/log.h"

namespace strata::daemon {
namespace {

constexpr auto kReadEvery = std::chrono::milliseconds(500);
// A PSI trigger: wake when tasks stalled on memory for 50 ms within a second.
constexpr const char* kPsiTrigger = "some 50000 1000000";

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

bool write_text(int fd, const std::string& text) { return ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()); }

}  // namespace

BudgetPolicy::BudgetPolicy(uint64_t cap, uint64_t start, Clock::duration regrow_after)
    : cap_(cap), budget_(start), regrow_after_(regrow_after) {}

uint64_t BudgetPolicy::margin(uint64_t limit) { return std::clamp<uint64_t>(limit / 16, 16ull << 20, 256ull << 20); }

void BudgetPolicy::reconfigure(uint64_t cap, Clock::duration regrow_after) {
    cap_changed_ = cap != cap_;
    cap_ = cap;
    regrow_after_ = regrow_after;
}

std::optional<uint64_t> BudgetPolicy::update(Clock::time_point now, const weights::MemoryReading& r) {
    const uint64_t room = r.limit > r.others ? r.limit - r.others : 0;
    const bool cap_changed = std::exchange(cap_changed_, false);
    const uint64_t m = margin(r.limit);
    std::optional<uint64_t> next;
    if (cap_ < budget_ || room + m < budget_) {  // others hold more than a margin of the budget
        next = std::min(cap_, room > m ? room - m : 0);
        lowered_ = now;
    } else if (const uint64_t up = std::min(cap_, room); up > budget_) {
        const bool quiet = now - lowered_ >= regrow_after_;
        const uint64_t step = std::max<uint64_t>(16ull << 20, budget_ / 32);
        if (cap_changed || (quiet && up >= budget_ + step)) next = up;
    }
    if (!next || *next == budget_) return std::nullopt;
    budget_ = *next;
    return next;
}

PressureWatch::PressureWatch(uint64_t cap, uint64_t start, std::chrono::milliseconds regrow_after, Apply apply)
    : cgroup_(weights::own_memory_cgroup()), apply_(std::move(apply)), policy_(cap, start, regrow_after) {
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    subscribe();
    thread_ = std::thread([this] { run(); });
}

PressureWatch::~PressureWatch() {
    const uint64_t one = 1;
    if (::write(stop_fd_, &one, sizeof one) < 0) log::warning("memory watch: cannot stop its thread: ", std::strerror(errno));
    if (thread_.joinable()) thread_.join();
    for (int fd : {notify_fd_, level_fd_, stop_fd_})
        if (fd >= 0) ::close(fd);
}

void PressureWatch::reconfigure(uint64_t cap, std::chrono::milliseconds regrow_after) {
    std::lock_guard lk(mu_);
    policy_.reconfigure(cap, regrow_after);
}

// Asks the kernel to notify pressure: v1's memory.pressure_level through an eventfd, else a
// PSI trigger (v2's memory.pressure, or the machine's /proc/pressure/memory). Without
// either, the half-second readings alone follow the limit.
void PressureWatch::subscribe() {
    namespace fs = std::filesystem;
    if (cgroup_ && cgroup_->version == 1) {
        const fs::path dir(cgroup_->dir);
        level_fd_ = ::open((dir / "memory.pressure_level").c_str(), O_RDONLY | O_CLOEXEC);
        const int control = ::open((dir / "cgroup.event_control").c_str(), O_WRONLY | O_CLOEXEC);
        const int efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        const bool ok = level_fd_ >= 0 && control >= 0 && efd >= 0 &&
                        write_text(control, std::to_string(efd) + " " + std::to_string(level_fd_) + " low");
        if (control >= 0) ::close(control);
        if (ok) {
            notify_fd_ = efd;
            notify_events_ = POLLIN;
            source_ = "cgroup v1 memory.pressure_level (" + cgroup_->dir + ")";
            return;
        }
        if (efd >= 0) ::close(efd);
    }
    const std::string psi = cgroup_ && cgroup_->version == 2 ? cgroup_->dir + "/memory.pressure" : "/proc/pressure/memory";
    const int fd = ::open(psi.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && write_text(fd, std::string(kPsiTrigger) + '\0')) {
        notify_fd_ = fd;
        notify_events_ = POLLPRI;
        source_ = "PSI trigger on " + psi;
        return;
    }
    if (fd >= 0) ::close(fd);
    source_ = "readings every " + std::to_string(kReadEvery.count()) + " ms (no pressure notification available)";
}

void PressureWatch::run() {
    for (;;) {
        pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {notify_fd_, notify_events_, 0}};
        const int n = ::poll(fds, notify_fd_ >= 0 ? 2 : 1, static_cast<int>(kReadEvery.count()));
        if (n > 0 && (fds[0].revents & POLLIN)) return;
        bool pressure = false;
        if (n > 0 && notify_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLPRI))) {
            pressure = true;
            uint64_t count = 0;
            if (notify_events_ == POLLIN && ::read(notify_fd_, &count, sizeof count) < 0) count = 0;
        }
        if (n > 0 && notify_fd_ >= 0 && (fds[1].revents & POLLERR)) {  // the cgroup went away
            log::warning("memory watch: ", source_, " stopped notifying; reading every ", kReadEvery.count(), " ms");
            notify_fd_ = (::close(notify_fd_), -1);
        }
        const weights::MemoryReading reading = weights::read_memory(cgroup_, weights::own_anon_bytes());
        std::optional<uint64_t> budget;
        {
            std::lock_guard lk(mu_);
            budget = policy_.update(std::chrono::steady_clock::now(), reading);
        }
        if (!budget) continue;
        apply_({*budget, "others use " + mib(reading.others) + " of the limit of " + mib(reading.limit) + ", " + reading.source +
                             (pressure ? "; the kernel reported memory pressure" : "")});
    }
}

}  // namespace strata::daemon
