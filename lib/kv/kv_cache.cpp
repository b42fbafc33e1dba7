// kv/kv_cache.cpp — growth and truncation of a sequence's cache.
#include "kv/kv_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace strata::kv {

KvCache::KvCache(int32_t n_layer, int32_t dim, int32_t capacity)
    : dim_(dim), capacity_(capacity), k_(n_layer), v_(n_layer) {
    if (n_layer < 1 || dim < 1 || capacity < 1) throw std::invalid_argument("KvCache: bad geometry");
}

uint64_t KvCache::bytes() const { return uint64_t(allocated_) * bytes_per_position(); }

void KvCache::reserve_append(int32_t n) {
    if (n < 0 || n > capacity_ - size_)
        throw std::length_error("context full: " + std::to_string(size_) + " + " + std::to_string(n) + " tokens exceed the context of " +
                                std::to_string(capacity_));
    const int32_t need = size_ + n;
    if (need <= allocated_) return;
    const int32_t grown = std::min(capacity_, std::max({need, allocated_ * 2, 256}));
    for (auto* side : {&k_, &v_})
        for (auto& layer : *side) layer.resize(size_t(grown) * dim_);
    allocated_ = grown;
}

void KvCache::commit(int32_t n) {
    if (n < 0 || size_ + n > allocated_) throw std::logic_error("KvCache::commit past the reserved positions");
    size_ += n;
}

void KvCache::truncate(int32_t n) {
    if (n < 0 || n > size_) throw std::out_of_range("KvCache::truncate past the end");
    size_ = n;
}

}  // namespace strata::kv
