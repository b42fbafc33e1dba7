// kv/kv_cache.cpp — blocks, growth with copy-on-write, truncation, sharing and the file
// form of a sequence's cache (see kv_cache.h).
#include "kv/kv_cache.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"

namespace strata::kv {

constexpr int32_t kMaxQ8Blocks = 256;  // Q8_0 blocks of a key row (dim <= 8192): store()'s stack buffer

std::string_view kv_type_name(KvType type) { return type == KvType::F16 ? "f16" : "q8_0"; }

std::optional<KvType> kv_type_from_name(std::string_view name) {
    if (name == "f16") return KvType::F16;
    if (name == "q8_0") return KvType::Q8_0;
    return std::nullopt;
}

Block::Block(int32_t n_layer, BlockFormat format, std::shared_ptr<Ledger> ledger)
    : layer_bytes_(format.layer_bytes()), data_(size_t(n_layer) * layer_bytes_), ledger_(std::move(ledger)) {
    ledger_->add(bytes());
}

Block::Block(const Block& other) : layer_bytes_(other.layer_bytes_), data_(other.data_), ledger_(other.ledger_) { ledger_->add(bytes()); }

Block::~Block() { ledger_->remove(bytes()); }

KvCache::KvCache(int32_t n_layer, int32_t dim, int32_t capacity, std::shared_ptr<Ledger> ledger, KvType type)
    : n_layer_(n_layer), dim_(dim), capacity_(capacity), format_{type, dim}, ledger_(ledger ? std::move(ledger) : std::make_shared<Ledger>()) {
    if (n_layer < 1 || dim < 1 || capacity < 1) throw std::invalid_argument("KvCache: bad geometry");
    if (type == KvType::Q8_0 && (dim % 32 != 0 || dim / 32 > kMaxQ8Blocks))
        throw std::invalid_argument("a q8_0 KV cache needs key/value rows that are a multiple of 32 values, at most 8192 (this model's are " +
                                    std::to_string(dim) + ")");
}

void KvCache::reserve_append(int32_t n) {
    if (n < 0 || n > capacity_ - size_)
        throw std::length_error("context full: " + std::to_string(size_) + " + " + std::to_string(n) + " tokens exceed the context of " +
                                std::to_string(capacity_));
    if (n == 0) return;
    const size_t first = size_t(size_ / kBlockTokens), end = size_t((size_ + n + kBlockTokens - 1) / kBlockTokens);
    for (size_t b = first; b < std::min(end, blocks_.size()); ++b)
        if (blocks_[b].use_count() > 1) blocks_[b] = std::make_shared<Block>(*blocks_[b]);
    while (blocks_.size() < end) blocks_.push_back(std::make_shared<Block>(n_layer_, format_, ledger_));
}

void KvCache::store(int32_t l, int32_t p, const float* k, const float* v) {
    uint8_t* base = blocks_[size_t(p / kBlockTokens)]->layer(l);
    const int32_t j = p % kBlockTokens;
    uint8_t* row = base + format_.key_bytes() + format_.key_scale_bytes() + size_t(j) * format_.value_row_bytes();
    if (format_.type == KvType::F16) {
        auto* kt = reinterpret_cast<uint16_t*>(base) + j;
        auto* vr = reinterpret_cast<uint16_t*>(row);
        for (int32_t d = 0; d < dim_; ++d) {
            kt[size_t(d) * kBlockTokens] = fp32_to_fp16(k[d]);
            vr[d] = fp32_to_fp16(v[d]);
        }
        return;
    }
    // Values are GGML Q8_0 rows as they stand; keys the same blocks, scattered transposed.
    quantize_row_q8_0(v, row, dim_);
    auto* kq = reinterpret_cast<int8_t*>(base) + j;
    auto* ks = reinterpret_cast<uint16_t*>(base + format_.key_bytes()) + j;
    BlockQ8_0 kb[kMaxQ8Blocks];
    quantize_row_q8_0(k, kb, dim_);
    for (int32_t c = 0; c < dim_ / 32; ++c) {
        ks[size_t(c) * kBlockTokens] = kb[c].d;
        for (int i = 0; i < 32; ++i) kq[size_t(c * 32 + i) * kBlockTokens] = kb[c].qs[i];
    }
}

void KvCache::load(int32_t l, int32_t p, float* k, float* v) const {
    const uint8_t* base = k_block(l, p);
    const int32_t j = p % kBlockTokens;
    const uint8_t* row = this->v(l, p);
    if (format_.type == KvType::F16) {
        const auto* kt = reinterpret_cast<const uint16_t*>(base) + j;
        const auto* vr = reinterpret_cast<const uint16_t*>(row);
        for (int32_t d = 0; d < dim_; ++d) {
            k[d] = fp16_to_fp32(kt[size_t(d) * kBlockTokens]);
            v[d] = fp16_to_fp32(vr[d]);
        }
        return;
    }
    dequantize_row(DType::Q8_0, row, v, dim_);
    const auto* kq = reinterpret_cast<const int8_t*>(base) + j;
    const auto* ks = reinterpret_cast<const uint16_t*>(base + format_.key_bytes()) + j;
    for (int32_t c = 0; c < dim_ / 32; ++c) {
        const float dk = fp16_to_fp32(ks[size_t(c) * kBlockTokens]);
        for (int i = 0; i < 32; ++i) k[c * 32 + i] = dk * kq[size_t(c * 32 + i) * kBlockTokens];
    }
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
    // Layer by layer, all keys then all values, F16 rows (the layout of version 1).
    std::vector<float> k(dim_), v(dim_);
    std::vector<uint16_t> k16(size_t(dim_) * size_), v16(size_t(dim_) * size_);
    for (int32_t l = 0; ok && l < n_layer_; ++l) {
        for (int32_t p = 0; p < size_; ++p) {
            load(l, p, k.data(), v.data());
            for (int32_t d = 0; d < dim_; ++d) {
                k16[size_t(p) * dim_ + d] = fp32_to_fp16(k[d]);
                v16[size_t(p) * dim_ + d] = fp32_to_fp16(v[d]);
            }
        }
        ok = std::fwrite(k16.data(), sizeof(uint16_t), k16.size(), out) == k16.size() &&
             std::fwrite(v16.data(), sizeof(uint16_t), v16.size(), out) == v16.size();
    }
    if (!ok) throw std::system_error(errno, std::generic_category(), "cannot write the KV cache");
}

std::optional<KvCache> KvCache::load(const std::string& path, uint64_t model_id, int32_t n_layer, int32_t dim, int32_t capacity,
                                     std::shared_ptr<Ledger> ledger, KvType type) {
    FilePtr f(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!f) return std::nullopt;
    Header h{};
    if (std::fread(&h, sizeof h, 1, f.get()) != 1 || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion ||
        h.model_id != model_id || h.n_layer != n_layer || h.dim != dim || h.size < 0 || h.size > capacity)
        return std::nullopt;
    KvCache c(n_layer, dim, capacity, std::move(ledger), type);
    c.reserve_append(h.size);
    std::vector<uint16_t> k16(size_t(dim) * h.size), v16(size_t(dim) * h.size);
    std::vector<float> k(dim), v(dim);
    for (int32_t l = 0; l < n_layer; ++l) {
        if (std::fread(k16.data(), sizeof(uint16_t), k16.size(), f.get()) != k16.size() ||
            std::fread(v16.data(), sizeof(uint16_t), v16.size(), f.get()) != v16.size())
            return std::nullopt;
        for (int32_t p = 0; p < h.size; ++p) {
            for (int32_t d = 0; d < dim; ++d) {
                k[d] = fp16_to_fp32(k16[size_t(p) * dim + d]);
                v[d] = fp16_to_fp32(v16[size_t(p) * dim + d]);
            }
            c.store(l, p, k.data(), v.data());
        }
    }
    if (std::fgetc(f.get()) != EOF) return std::nullopt;  // trailing bytes: not our file
    c.commit(h.size);
    return c;
}

}  // namespace strata::kv
