// kernels/scratch.cpp — per-thread scratch memory (scratch.h).
#include "kernels/scratch.h"

#include <vector>

namespace strata::kernels {

uint8_t* thread_scratch(size_t bytes) {
    thread_local std::vector<uint8_t> buffer;
    if (buffer.size() < bytes) buffer.resize(bytes);
    return buffer.data();
}

}  // namespace strata::kernels
