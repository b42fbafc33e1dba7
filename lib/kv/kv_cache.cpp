// kv/kv_cache.cpp — growth and truncation of a sequence's cache.
#include "kv/kv_cache.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>

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

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'K', 'V'};
constexpr uint32_t kVersion = 1;

struct Header {
    char magic[8];
    uint32_t version;
    int32_t n_layer, dim, size;
    uint64_t model_id;
};

using FilePtr = std::unique_ptr<FILE, int (*)(FILE*)>;

}  // namespace

void KvCache::write(std::FILE* out, uint64_t model_id) const {
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.n_layer = n_layer();
    h.dim = dim_;
    h.size = size_;
    h.model_id = model_id;
    bool ok = std::fwrite(&h, sizeof h, 1, out) == 1;
    const size_t n = size_t(size_) * dim_;
    for (int32_t l = 0; ok && l < n_layer(); ++l)
        ok = std::fwrite(k_[l].data(), sizeof(uint16_t), n, out) == n && std::fwrite(v_[l].data(), sizeof(uint16_t), n, out) == n;
    if (!ok) throw std::system_error(errno, std::generic_category(), "cannot write the KV cache");
}

std::optional<KvCache> KvCache::load(const std::string& path, uint64_t model_id, int32_t n_layer, int32_t dim, int32_t capacity) {
    FilePtr f(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!f) return std::nullopt;
    Header h{};
    if (std::fread(&h, sizeof h, 1, f.get()) != 1 || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion ||
        h.model_id != model_id || h.n_layer != n_layer || h.dim != dim || h.size < 0 || h.size > capacity)
        return std::nullopt;
    KvCache c(n_layer, dim, capacity);
    c.reserve_append(h.size);
    const size_t n = size_t(h.size) * dim;
    for (int32_t l = 0; l < n_layer; ++l)
        if (std::fread(c.k_[l].data(), sizeof(uint16_t), n, f.get()) != n || std::fread(c.v_[l].data(), sizeof(uint16_t), n, f.get()) != n)
            return std::nullopt;
    if (std::fgetc(f.get()) != EOF) return std::nullopt;  // trailing bytes: not our file
    c.commit(h.size);
    return c;
}

}  // namespace strata::kv
