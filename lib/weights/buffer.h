// weights/buffer.h — internal: page-aligned anonymous memory that holds weight bytes
// (copies of resident layers, the streaming ring). Large buffers start on a 2 MiB
// boundary and are advised MADV_HUGEPAGE, so that the forward pass walks them through
// few TLB entries whatever the kernel does with the model file's page cache.
// Must not touch: what is read into it (streamed.cpp, reader.cpp).
#pragma once

#include <cstdint>

namespace strata::weights {

class Buffer {
public:
    // Throws std::system_error naming the size when the memory cannot be mapped.
    explicit Buffer(uint64_t bytes);
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

}  // namespace strata::weights
