// weights/buffer.h — page-aligned anonymous memory for what the forward pass streams
// through: weight bytes (copies of resident layers, the streaming ring) and the chunks
// that KV blocks live in (kv/block_pool.h). Large buffers start on a 2 MiB boundary and
// are advised MADV_HUGEPAGE, so that the forward pass walks them through few TLB entries
// whatever the kernel does with the model file's page cache. Prefault faults such memory
// in on a thread of its own, ahead of the reads that fill it.
// Must not touch: what is read into it (streamed.cpp, reader.cpp, kv/).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace strata::weights {

// The transparent huge page of x86-64: buffers of at least this size start on its boundary
// and are a whole number of them.
inline constexpr uint64_t kHugePage = 2ull << 20;

class Buffer {
public:
    // Throws std::system_error naming the size and `what` when the memory cannot be mapped.
    explicit Buffer(uint64_t bytes, const char* what = "weights");
    ~Buffer();
    Buffer(Buffer&& o) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer& operator=(Buffer&&) = delete;
    uint8_t* data() const { return data_; }
    uint64_t size() const { return bytes_; }
    // mlock; throws std::system_error naming `what` when the limit is too low.
    void lock(const char* what) const;

private:
    uint8_t* data_ = nullptr;
    uint64_t bytes_;
};

// Faults the pages of `buffers` in, in order, on a thread of its own, until done or
// destroyed (MADV_POPULATE_WRITE leaves what is there as it is, so reads may land in the
// same memory meanwhile; on a kernel without it the reads fault the pages in themselves).
// Fresh anonymous memory is zeroed on first touch, which on a 2-vCPU VM took about as long
// as reading the weights from its disk: done ahead of the reads, the two overlap.
class Prefault {
public:
    explicit Prefault(std::vector<const Buffer*> buffers);
    ~Prefault();
    Prefault(const Prefault&) = delete;
    Prefault& operator=(const Prefault&) = delete;

private:
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace strata::weights
