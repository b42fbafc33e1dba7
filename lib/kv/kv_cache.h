// kv/kv_cache.h — one sequence's key/value cache, held in fixed-size blocks that several
// sequences may share.
// Owns: F16 keys and values of every layer for positions 0..size()-1 of one sequence, in
// blocks of kBlockTokens positions (a block holds those positions of every layer); growth
// up to a fixed capacity; copy-on-write of shared blocks before any write; truncation;
// adopting another cache's blocks (prefix sharing); the bytes every live block takes
// (Ledger); saving to and restoring from disk. Must not touch: attention math (model/),
// which prefixes are worth keeping (prefix_cache.h), scheduling (engine/).
//
// Sharing contract: a block reachable from more than one owner (caches, the prefix
// cache) is read-only; reserve_append() copies such a block before positions in it are
// written. Caches and their blocks are handled on one thread (the engine's); a forward
// pass only reads and writes positions its caller reserved.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::kv {

inline constexpr int32_t kBlockTokens = 16;

// Bytes and count of every live block of the caches that share it (one per engine).
class Ledger {
public:
    uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
    uint64_t blocks() const { return blocks_.load(std::memory_order_relaxed); }
    void add(uint64_t bytes) {
        bytes_.fetch_add(bytes, std::memory_order_relaxed);
        blocks_.fetch_add(1, std::memory_order_relaxed);
    }
    void remove(uint64_t bytes) {
        bytes_.fetch_sub(bytes, std::memory_order_relaxed);
        blocks_.fetch_sub(1, std::memory_order_relaxed);
    }

private:
    std::atomic<uint64_t> bytes_{0}, blocks_{0};
};

// How keys and values are stored (memory.kv_type): F16, or Q8_0 (8-bit integers with an
// F16 scale per 32 values along the head dimension, as GGML's q8_0; about half the bytes).
enum class KvType { F16, Q8_0 };
std::string_view kv_type_name(KvType type);                   // "f16", "q8_0"
std::optional<KvType> kv_type_from_name(std::string_view name);

// Where one layer's keys and values sit in a block of kBlockTokens positions. Keys are
// transposed, [dim][position] (a query's scores for the block's positions are then
// dim-by-dim vector FMAs): F16 values, or Q8_0's int8 values followed by their F16 scales
// [dim / 32][position]. Values are rows, [position][dim]: F16, or Q8_0 blocks (F16 scale,
// 32 int8) of GGML's layout.
struct BlockFormat {
    KvType type = KvType::F16;
    int32_t dim = 0;

    size_t key_bytes() const { return size_t(dim) * kBlockTokens * (type == KvType::F16 ? 2 : 1); }
    size_t key_scale_bytes() const { return type == KvType::F16 ? 0 : size_t(dim / 32) * kBlockTokens * 2; }
    size_t value_row_bytes() const { return type == KvType::F16 ? size_t(dim) * 2 : size_t(dim / 32) * 34; }
    size_t layer_bytes() const { return key_bytes() + key_scale_bytes() + kBlockTokens * value_row_bytes(); }
};

// kBlockTokens positions of every layer, layer after layer in BlockFormat's layout.
class Block {
public:
    Block(int32_t n_layer, BlockFormat format, std::shared_ptr<Ledger> ledger);
    Block(const Block& other);  // a private copy (copy-on-write)
    Block& operator=(const Block&) = delete;
    ~Block();

    uint8_t* layer(int32_t l) { return data_.data() + size_t(l) * layer_bytes_; }
    const uint8_t* layer(int32_t l) const { return data_.data() + size_t(l) * layer_bytes_; }
    uint64_t bytes() const { return data_.size(); }

private:
    size_t layer_bytes_;
    std::vector<uint8_t> data_;
    std::shared_ptr<Ledger> ledger_;
};

using BlockRef = std::shared_ptr<Block>;

class KvCache {
public:
    // n_layer layers of `dim` (= n_head_kv * head_dim) values per position, at most
    // `capacity` positions; blocks are counted in `ledger` (a private one when null). Q8_0
    // needs a dim that is a multiple of 32 (std::invalid_argument otherwise).
    KvCache(int32_t n_layer, int32_t dim, int32_t capacity, std::shared_ptr<Ledger> ledger = nullptr, KvType type = KvType::F16);

    int32_t size() const { return size_; }
    int32_t capacity() const { return capacity_; }
    int32_t dim() const { return dim_; }
    int32_t n_layer() const { return n_layer_; }
    // Bytes of the blocks this cache holds, shared ones included (see Ledger for the total).
    uint64_t bytes() const { return uint64_t(blocks_.size()) * block_bytes(); }
    uint64_t block_bytes() const { return uint64_t(n_layer_) * format_.layer_bytes(); }
    KvType type() const { return format_.type; }
    const BlockFormat& format() const { return format_; }
    // Bytes one position costs across all layers.
    uint64_t bytes_per_position() const { return block_bytes() / kBlockTokens; }
    const std::shared_ptr<Ledger>& ledger() const { return ledger_; }

    // Makes room for positions [size(), size() + n), each in a block of its own (shared
    // blocks among them are copied first); throws std::length_error past capacity.
    void reserve_append(int32_t n);
    // Writes layer l's key and value rows (dim() values each) at position p (reserved),
    // rounded to the cache's type.
    void store(int32_t l, int32_t p, const float* k, const float* v);
    // Reads them back (as stored: rounded).
    void load(int32_t l, int32_t p, float* k, float* v) const;
    // For attention, in BlockFormat's layout: layer l's keys of the block holding p (then
    // their scales), and the value row of p; a block's value rows follow each other.
    const uint8_t* k_block(int32_t l, int32_t p) const { return blocks_[p / kBlockTokens]->layer(l); }
    const uint8_t* v(int32_t l, int32_t p) const {
        return k_block(l, p) + format_.key_bytes() + format_.key_scale_bytes() + size_t(p % kBlockTokens) * format_.value_row_bytes();
    }
    static int32_t run(int32_t p) { return kBlockTokens - p % kBlockTokens; }
    // Positions [size(), size()+n) now hold valid data.
    void commit(int32_t n);
    // Forgets positions >= n (n <= size()); blocks past the new end are let go.
    void truncate(int32_t n);

    // Sharing. The block holding positions [i * kBlockTokens, (i + 1) * kBlockTokens).
    const BlockRef& block(int32_t i) const { return blocks_[i]; }
    int32_t full_blocks() const { return size_ / kBlockTokens; }
    // Appends a full block of another cache of the same geometry (size() must be a multiple
    // of kBlockTokens); it is shared, never written through this cache.
    void adopt(BlockRef block);
    // Puts `block` in place of full block i, whose contents it must equal (deduplication).
    void replace(int32_t i, BlockRef block);

    // Writes positions [0, size()) to `out`, tagged with `model_id` so that a cache is never
    // restored into another model (the caller makes the file durable). Throws
    // std::system_error on I/O errors.
    void write(std::FILE* out, uint64_t model_id) const;
    // Reads a cache written by write(); nullopt when the file is absent, damaged, made for
    // another model or geometry, or larger than `capacity`.
    static std::optional<KvCache> load(const std::string& path, uint64_t model_id, int32_t n_layer, int32_t dim, int32_t capacity,
                                       std::shared_ptr<Ledger> ledger = nullptr, KvType type = KvType::F16);

private:
    int32_t n_layer_, dim_, capacity_;
    BlockFormat format_;
    int32_t size_ = 0;
    std::vector<BlockRef> blocks_;
    std::shared_ptr<Ledger> ledger_;
};

}  // namespace strata::kv
