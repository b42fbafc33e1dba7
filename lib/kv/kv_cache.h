// kv/kv_cache.h — one sequence's key/value cache.
// Owns: F16 keys and values of every layer for positions 0..size()-1 of one
// sequence, grown on demand up to a fixed capacity; truncation (to reuse a shared
// prefix); saving to and restoring from disk. Must not touch: attention math (model/),
// scheduling (engine/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace strata::kv {

class KvCache {
public:
    // n_layer layers of `dim` (= n_head_kv * head_dim) values per position, at most
    // `capacity` positions.
    KvCache(int32_t n_layer, int32_t dim, int32_t capacity);

    int32_t size() const { return size_; }
    int32_t capacity() const { return capacity_; }
    int32_t dim() const { return dim_; }
    int32_t n_layer() const { return static_cast<int32_t>(k_.size()); }
    // Bytes allocated now (grows with use).
    uint64_t bytes() const;
    // Bytes one position costs across all layers.
    uint64_t bytes_per_position() const { return uint64_t(k_.size()) * 2 * dim_ * sizeof(uint16_t); }

    // Makes room for positions [size(), size() + n); throws std::length_error past capacity.
    void reserve_append(int32_t n);
    // Rows of layer l at position p (valid after reserve_append covered p).
    uint16_t* k(int32_t l, int32_t p) { return k_[l].data() + size_t(p) * dim_; }
    uint16_t* v(int32_t l, int32_t p) { return v_[l].data() + size_t(p) * dim_; }
    const uint16_t* k(int32_t l, int32_t p) const { return k_[l].data() + size_t(p) * dim_; }
    const uint16_t* v(int32_t l, int32_t p) const { return v_[l].data() + size_t(p) * dim_; }
    // Positions [size(), size()+n) now hold valid data.
    void commit(int32_t n);
    // Forgets positions >= n (n <= size()).
    void truncate(int32_t n);

    // Writes positions [0, size()) to `out`, tagged with `model_id` so that a cache is never
    // restored into another model (the caller makes the file durable). Throws
    // std::system_error on I/O errors.
    void write(std::FILE* out, uint64_t model_id) const;
    // Reads a cache written by write(); nullopt when the file is absent, damaged, made for
    // another model or geometry, or larger than `capacity`.
    static std::optional<KvCache> load(const std::string& path, uint64_t model_id, int32_t n_layer, int32_t dim, int32_t capacity);

private:
    int32_t dim_;
    int32_t capacity_;
    int32_t size_ = 0;
    int32_t allocated_ = 0;  // positions allocated per layer
    std::vector<std::vector<uint16_t>> k_, v_;
};

}  // namespace strata::kv
