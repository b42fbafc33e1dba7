// weights/buffer.cpp — anonymous, huge-page-advised weight memory.
#include "weights/buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

namespace strata::weights {
namespace {

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

// Maps `bytes` (a multiple of the huge page size) at a 2 MiB boundary: maps one huge page
// more and returns the unaligned head and tail to the kernel.
uint8_t* map_aligned(uint64_t bytes) {
    const uint64_t span = bytes + kHugePage;
    void* p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    auto* base = static_cast<uint8_t*>(p);
    auto* start = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uint64_t>(base), kHugePage));
    if (start > base) ::munmap(base, static_cast<size_t>(start - base));
    if (uint8_t* end = start + bytes; end < base + span) ::munmap(end, static_cast<size_t>(base + span - end));
    ::madvise(start, bytes, MADV_HUGEPAGE);
    return start;
}

}  // namespace

Buffer::Buffer(uint64_t bytes, const char* what) : bytes_(std::max<uint64_t>(bytes, 1)) {
    if (bytes_ >= kHugePage) {
        bytes_ = round_up(bytes_, kHugePage);
        data_ = map_aligned(bytes_);
    } else {
        void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        data_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
    }
    if (!data_) throw std::system_error(errno, std::generic_category(), "cannot allocate " + std::to_string(bytes_ >> 20) + " MiB for " + what);
}

Buffer::~Buffer() {
    if (data_) ::munmap(data_, bytes_);
}

Buffer::Buffer(Buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(o.bytes_) {}

void Buffer::lock(const char* what) const {
    if (::mlock(data_, bytes_) != 0)
        throw std::system_error(errno, std::generic_category(),
                                std::string("cannot mlock ") + what + " (" + std::to_string(bytes_ >> 20) + " MiB; raise LimitMEMLOCK= or set memory.lock = false)");
}

Prefault::Prefault(std::vector<const Buffer*> buffers)
    : thread_([this, buffers = std::move(buffers)] {
          constexpr uint64_t kStep = 64ull << 20;  // a step between looks at stop_
          for (const Buffer* b : buffers)
              for (uint64_t at = 0; at < b->size(); at += kStep) {
                  if (stop_.load(std::memory_order_relaxed)) return;
                  if (::madvise(b->data() + at, static_cast<size_t>(std::min(kStep, b->size() - at)), MADV_POPULATE_WRITE) != 0) return;
              }
      }) {}

Prefault::~Prefault() {
    stop_.store(true, std::memory_order_relaxed);
    thread_.join();
}

}  // namespace strata::weights
