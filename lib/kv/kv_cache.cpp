// kv/kv_cache.cpp — blocks, growth with copy-on-write, truncation, sharing and the file
// form of a sequence's cache (see kv_cache.h).
#include "kv/kv_cache.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace strata::kv {

Block::Block(int32_t n_layer, int32_t dim, std::shared_ptr<Ledger> ledger)
    : dim_(dim), data_(size_t(n_layer) * 2 * kBlockTokens * dim), ledger_(std::move(ledger)) {
    ledger_->add(bytes());
}

Block::Block(const Block& other) : dim_(other.dim_), data_(other.data_), ledger_(other.ledger_) { ledger_->add(bytes()); }

Block::~Block() { ledger_->remove(bytes()); }

KvCache::KvCache(int32_t n_layer, int32_t dim, int32_t capacity, std::shared_ptr<Ledger> ledger)
    : n_layer_(n_layer), dim_(dim), capacity_(capacity), ledger_(ledger ? std::move(ledger) : std::make_shared<Ledger>()) {
    if (n_layer < 1 || dim < 1 || capacity < 1) throw std::invalid_argument("KvCache: bad geometry");
}

void KvCache::reserve_append(int32_t n) {
    if (n < 0 || n > capacity_ - size_)
        throw std::length_error("context full: " + std::to_string(size_) + " + " + std::to_string(n) + " tokens exceed the context of " +
                                std::to_string(capacity_));
    if (n == 0) return;
    const size_t first = size_t(size_ / kBlockTokens), end = size_t((size_ + n + kBlockTokens - 1) / kBlockTokens);
    for (size_t b = first; b < std::min(end, blocks_.size()); ++b)
        if (blocks_[b].use_count() > 1) blocks_[b] = std::make_shared<Block>(*blocks_[b]);
    while (blocks_.size() < end) blocks_.push_back(std::make_shared<Block>(n_layer_, dim_, ledger_));
}

void KvCache::store(int32_t l, int32_t p, const uint16_t* k, const uint16_t* v) {
    Block& b = *blocks_[size_t(p / kBlockTokens)];
    uint16_t* kt = b.k(l) + p % kBlockTokens;
    for (int32_t d = 0; d < dim_; ++d) kt[size_t(d) * kBlockTokens] = k[d];
    std::memcpy(b.v(l, p % kBlockTokens), v, size_t(dim_) * sizeof(uint16_t));
}

void KvCache::load(int32_t l, int32_t p, uint16_t* k, uint16_t* v) const {
    const Block& b = *blocks_[size_t(p / kBlockTokens)];
    const uint16_t* kt = b.k(l) + p % kBlockTokens;
    for (int32_t d = 0; d < dim_; ++d) k[d] = kt[size_t(d) * kBlockTokens];
    std::memcpy(v, b.v(l, p % kBlockTokens), size_t(dim_) * sizeof(uint16_t));
}

void KvCache::commit(int32_t n) {
    if (n < 0 || size_ + n > static_cast<int32_t>(blocks_.size()) * kBlockTokens) throw std::logic_error("KvCache::commit past the reserved positions");
    size_ += n;
}

void KvCache::truncate(int32_t n) {
    if (n < 0 || n > size_) throw std::out_of_range("KvCache::truncate past the end");
    size_ = n;
    blocks_.resize(size_t((n + kBlockTokens - 1) / kBlockTokens));
}

void KvCache::adopt(BlockRef block) {
    if (size_ % kBlockTokens != 0 || size_ + kBlockTokens > capacity_) throw std::logic_error("KvCache::adopt past a partial block or the capacity");
    blocks_.resize(size_t(size_ / kBlockTokens));
    blocks_.push_back(std::move(block));
    size_ += kBlockTokens;
}

void KvCache::replace(int32_t i, BlockRef block) {
    if (i < 0 || i >= full_blocks()) throw std::out_of_range("KvCache::replace of a block that is not full");
    blocks_[size_t(i)] = std::move(block);
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
    // Layer by layer, all keys then all values, row by row (the layout of version 1).
    std::vector<uint16_t> k(size_t(dim_) * size_), v(size_t(dim_) * size_);
    for (int32_t l = 0; ok && l < n_layer_; ++l) {
        for (int32_t p = 0; p < size_; ++p) load(l, p, k.data() + size_t(p) * dim_, v.data() + size_t(p) * dim_);
        ok = std::fwrite(k.data(), sizeof(uint16_t), k.size(), out) == k.size() && std::fwrite(v.data(), sizeof(uint16_t), v.size(), out) == v.size();
    }
    if (!ok) throw std::system_error(errno, std::generic_category(), "cannot write the KV cache");
}

std::optional<KvCache> KvCache::load(const std::string& path, uint64_t model_id, int32_t n_layer, int32_t dim, int32_t capacity,
                                     std::shared_ptr<Ledger> ledger) {
    FilePtr f(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!f) return std::nullopt;
    Header h{};
    if (std::fread(&h, sizeof h, 1, f.get()) != 1 || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion ||
        h.model_id != model_id || h.n_layer != n_layer || h.dim != dim || h.size < 0 || h.size > capacity)
        return std::nullopt;
    KvCache c(n_layer, dim, capacity, std::move(ledger));
    c.reserve_append(h.size);
    std::vector<uint16_t> k(size_t(dim) * h.size), v(size_t(dim) * h.size);
    for (int32_t l = 0; l < n_layer; ++l) {
        if (std::fread(k.data(), sizeof(uint16_t), k.size(), f.get()) != k.size() ||
            std::fread(v.data(), sizeof(uint16_t), v.size(), f.get()) != v.size())
            return std::nullopt;
        for (int32_t p = 0; p < h.size; ++p) c.store(l, p, k.data() + size_t(p) * dim, v.data() + size_t(p) * dim);
    }
    if (std::fgetc(f.get()) != EOF) return std::nullopt;  // trailing bytes: not our file
    c.commit(h.size);
    return c;
}

}  // namespace strata::kv
