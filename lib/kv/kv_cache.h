// kv/kv_cache.h — one sequence's key/value cache, held in fixed-size blocks that several
// sequences may share.
// Owns: F16 or Q8_0 keys and values of every attention layer for positions 0..size()-1
// of one sequence, in blocks of kBlockTokens positions; the recurrent state of the layers
// that keep one instead (the conv and DeltaNet states of hybrid models: the sequence's
// state after its size() positions, which cannot be cut back to a shorter prefix); growth up to a fixed capacity; keeping
// only the window of sliding-window layers; copy-on-write of shared blocks before any
// write; truncation; adopting another cache's blocks (prefix sharing); the bytes every
// live block takes, in the pool of memory it lives in (Ledger, block_pool.h); saving to
// and restoring from disk. Must not touch: attention math (model/), which prefixes are
// worth keeping (prefix_cache.h), scheduling (engine/).
//
// Two kinds of layers, two blocks per kBlockTokens positions (Blocks): `full` holds those
// positions of the layers that attend to the whole sequence, `window` those of the
// sliding-window layers, which attend to their last Shape::window positions only. Once
// the sequence has moved a window past a block, its `window` part is let go, so those
// layers hold about one window whatever the sequence's length (llama.cpp's "iswa" split).
//
// A recurrent state is one State for all such layers, shared by copies of the cache and
// copied before a pass writes it (reserve_append), counted in the Ledger as blocks are.
//
// Layers may differ in width (Shape::dims: sliding and global layers may have their
// own head sizes), and a layer may attend to an earlier layer's keys and values instead
// of keeping its own (Shape::source): those are stored once, in the
// earlier layer's place of the block, and the later layer takes no room at all.
//
// Sharing contract: a block reachable from more than one owner (caches, the prefix
// cache) is read-only; reserve_append() copies such a block before positions in it are
// written. Caches and their blocks are handled on one thread (the engine's); a forward
// pass only reads and writes positions its caller reserved.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kv/block_pool.h"

namespace strata::kv {

inline constexpr int32_t kBlockTokens = 16;
// Positions the window layers keep beyond the window, so that a sequence can step back a
// little (a prompt that is cached whole recomputes its last token) and keep its window.
inline constexpr int32_t kWindowSlack = kBlockTokens;

// Where the live blocks of the caches that share it (one per engine) live, and their
// bytes and count: the budget counts bytes(); the memory mapped for them (their pool's
// chunks, mapped_bytes()) is at most the most bytes() ever was, rounded up to chunks.
class Ledger {
public:
    uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
    uint64_t blocks() const { return blocks_.load(std::memory_order_relaxed); }
    uint64_t mapped_bytes() const { return pool_.mapped_bytes(); }
    // A zeroed block of `bytes`, counted.
    uint8_t* take(size_t bytes) {
        uint8_t* block = pool_.take(bytes);
        bytes_.fetch_add(bytes, std::memory_order_relaxed);
        blocks_.fetch_add(1, std::memory_order_relaxed);
        return block;
    }
    void give(uint8_t* block, size_t bytes) {
        pool_.give(block, bytes);
        bytes_.fetch_sub(bytes, std::memory_order_relaxed);
        blocks_.fetch_sub(1, std::memory_order_relaxed);
    }

private:
    BlockPool pool_;
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

// kBlockTokens positions of the layers of one kind (Blocks), layer after layer, each in
// its BlockFormat's layout (KvCache knows where each layer starts).
class Block {
public:
    Block(size_t bytes, std::shared_ptr<Ledger> ledger);
    Block(const Block& other);  // a private copy (copy-on-write)
    Block& operator=(const Block&) = delete;
    ~Block();

    uint8_t* at(size_t offset) { return data_ + offset; }
    const uint8_t* at(size_t offset) const { return data_ + offset; }
    uint64_t bytes() const { return bytes_; }

private:
    size_t bytes_;
    std::shared_ptr<Ledger> ledger_;
    uint8_t* data_;  // from ledger_
};

using BlockRef = std::shared_ptr<Block>;

// The recurrent state of a sequence's recurrent layers: floats, zero at first.
class State {
public:
    State(size_t floats, std::shared_ptr<Ledger> ledger);
    State(const State& other);  // a private copy (copy-on-write)
    State& operator=(const State&) = delete;
    ~State();

    float* data() { return reinterpret_cast<float*>(data_); }
    const float* data() const { return reinterpret_cast<const float*>(data_); }
    size_t floats() const { return bytes_ / sizeof(float); }
    uint64_t bytes() const { return bytes_; }
    void clear();

private:
    size_t bytes_;
    std::shared_ptr<Ledger> ledger_;
    uint8_t* data_;  // from ledger_
};

// The two parts of kBlockTokens positions: the full-attention layers' and the
// sliding-window layers'. A part is null when no layer is of its kind, and `window` is
// null too once the sequence has moved its window and kWindowSlack past the block.
struct Blocks {
    BlockRef full, window;
    std::array<const BlockRef*, 2> parts() const { return {&full, &window}; }
};

// A recurrent cache as it was at `positions`: its state and, when positions is inside a
// block, that block (shared, so copy-on-write keeps both as they were) — what a later
// sequence with the same tokens continues from (the prefix cache's snapshots).
struct Snapshot {
    int32_t positions = 0;
    std::shared_ptr<State> state;
    Blocks partial;
};

// Which layers a cache holds: n_layer layers of `dim` (= n_head_kv * head_dim) values per
// position, or of dims[l] (empty: all `dim`); the layers marked in `sliding` (empty: none)
// attend only to the last `window` positions (the query's own included), so only those are
// kept; a layer with `state` floats (empty: none has) is recurrent: it keeps that state
// instead of keys and values; a layer whose source[l] is an earlier layer (empty, or its own
// index: none) reads that layer's keys and values and keeps none (same kind and width).
struct Shape {
    int32_t n_layer = 0, dim = 0;
    int32_t window = 0;
    std::vector<bool> sliding;
    std::vector<int64_t> state;
    std::vector<int32_t> dims, source;
};

class KvCache {
public:
    // A cache of `shape`, at most `capacity` positions; blocks are counted in `ledger` (a
    // private one when null). Q8_0 needs dims that are multiples of 32 (std::invalid_argument
    // otherwise, as for a shape that does not hold together).
    KvCache(Shape shape, int32_t capacity, std::shared_ptr<Ledger> ledger = nullptr, KvType type = KvType::F16);

    int32_t size() const { return size_; }
    int32_t capacity() const { return capacity_; }
    int32_t n_layer() const { return shape_.n_layer; }
    const Shape& shape() const { return shape_; }
    KvType type() const { return type_; }
    // Layer l's values per position and where they sit in a block (its source layer's).
    int32_t dim(int32_t l) const { return format_[size_t(l)].dim; }
    const BlockFormat& format(int32_t l) const { return format_[size_t(l)]; }
    const std::shared_ptr<Ledger>& ledger() const { return ledger_; }
    // Bytes of the blocks and the recurrent state this cache holds, shared ones included (see
    // Ledger for the total).
    uint64_t bytes() const;
    // The most bytes a sequence of `positions` holds while a forward pass of `pass` of them
    // runs (0: between passes): every full-attention layer's positions and, of the others,
    // a window, kWindowSlack and the pass (block-rounded); the recurrent state.
    uint64_t bytes_for(int32_t positions, int32_t pass = 0) const;

    // Makes room for positions [size(), size() + n) in every layer, each in a block of its
    // own (shared blocks among them, and a shared recurrent state, are copied first); throws
    // std::length_error past capacity.
    void reserve_append(int32_t n) { reserve(n, true); }
    // The same for the full-attention layers only: a prompt about to be fed in several
    // passes counts its positions now; each pass's reserve_append() adds the window layers'
    // blocks, which are let go again as the window moves past them.
    void reserve_ahead(int32_t n) { reserve(n, false); }
    // Writes layer l's key and value rows (dim(l) values each) at position p (reserved),
    // rounded to the cache's type; l keeps its own (has_kv).
    void store(int32_t l, int32_t p, const float* k, const float* v);
    // Reads them back (as stored: rounded). A sliding layer's positions are readable while
    // they are inside the window of the sequence's next position.
    void load(int32_t l, int32_t p, float* k, float* v) const;
    // For attention, in BlockFormat's layout: layer l's keys of the block holding p (then
    // their scales), and the value row of p; a block's value rows follow each other.
    const uint8_t* k_block(int32_t l, int32_t p) const { return part(l, p / kBlockTokens)->at(offset_[size_t(l)]); }
    const uint8_t* v(int32_t l, int32_t p) const {
        const BlockFormat& f = format(l);
        return k_block(l, p) + f.key_bytes() + f.key_scale_bytes() + size_t(p % kBlockTokens) * f.value_row_bytes();
    }
    static int32_t run(int32_t p) { return kBlockTokens - p % kBlockTokens; }
    // Positions [size(), size()+n) now hold valid data; the window layers' blocks before
    // window_start(size()) - kWindowSlack are let go.
    void commit(int32_t n);
    // Forgets positions >= n (n <= size()); blocks past the new end are let go. When the
    // window layers no longer hold the window that position n needs (it was let go), or the
    // cache is recurrent and n < size() (its state holds every position), the cache empties
    // instead (a zero state). Returns the new size (n or 0).
    int32_t truncate(int32_t n);

    // Recurrent layers: whether there are any, and layer l's state (null for other layers),
    // written by the forward pass after reserve_append().
    bool recurrent() const { return state_ != nullptr; }
    float* state(int32_t l) { return state_offset_[size_t(l)] < 0 ? nullptr : state_->data() + state_offset_[size_t(l)]; }
    const float* state(int32_t l) const { return state_offset_[size_t(l)] < 0 ? nullptr : state_->data() + state_offset_[size_t(l)]; }
    // The state itself (null when not recurrent), for who counts its bytes and sharing.
    const std::shared_ptr<State>& state_ref() const { return state_; }
    // This recurrent cache now, shared (see Snapshot).
    Snapshot snapshot() const;
    // An empty recurrent cache becomes `full` blocks (a prefix's, positions / kBlockTokens of
    // them) continued by the snapshot taken at its end; std::logic_error otherwise.
    void restore(std::vector<Blocks> full, const Snapshot& s);

    // The first position whose window layers a sequence of `size` positions still needs
    // (`size` when there are no such layers).
    int32_t window_start(int32_t size) const;

    // Sharing. The blocks holding positions [i * kBlockTokens, (i + 1) * kBlockTokens).
    const Blocks& block(int32_t i) const { return blocks_[size_t(i)]; }
    int32_t full_blocks() const { return size_ / kBlockTokens; }
    // Appends full blocks of another cache of the same shape (size() must be a multiple of
    // kBlockTokens; never to a recurrent cache, whose state they do not carry); they are
    // shared, never written through this cache. A null `window` part is fine for blocks
    // out of the window of where adopting ends.
    void adopt(Blocks blocks);
    // Puts `blocks` in place of full block i, whose contents they must equal (deduplication);
    // a window part this cache has let go stays let go.
    void replace(int32_t i, const Blocks& blocks);

    // Writes positions [0, size()) to `out` (the window layers' from window_start(size())),
    // then the recurrent state, tagged with `model_id` so that a cache is never restored into another model (the
    // caller makes the file durable). Throws std::system_error on I/O errors.
    void write(std::FILE* out, uint64_t model_id) const;
    // Reads a cache written by write(); nullopt when the file is absent, damaged, made for
    // another model or shape, or larger than `capacity`.
    static std::optional<KvCache> load(const std::string& path, uint64_t model_id, const Shape& shape, int32_t capacity,
                                       std::shared_ptr<Ledger> ledger = nullptr, KvType type = KvType::F16);

    // Whether layer l keeps only the window; whether it keeps keys and values of its own
    // (not a recurrent layer, nor one reading an earlier layer's).
    bool sliding(int32_t l) const { return !shape_.sliding.empty() && shape_.sliding[size_t(l)]; }
    bool has_kv(int32_t l) const { return owns_[size_t(l)]; }

private:
    const BlockRef& part(int32_t l, int32_t b) const { return sliding(l) ? blocks_[size_t(b)].window : blocks_[size_t(b)].full; }
    void reserve(int32_t n, bool window_layers);
    // Lets go of the window parts of blocks before window_start(size()).
    void let_go_of_window();

    // The layers' offsets in their kind's block and their formats, from the shape.
    void lay_out();

    Shape shape_;
    int32_t capacity_;
    KvType type_;
    std::vector<BlockFormat> format_;    // per layer
    std::vector<size_t> offset_;         // per layer: where its keys start in its kind's block (its source's)
    std::vector<bool> owns_;             // per layer: keeps keys and values of its own
    size_t full_bytes_ = 0, window_bytes_ = 0;  // a block of each kind (0: no layer of the kind)
    int32_t size_ = 0;
    std::vector<Blocks> blocks_;
    size_t window_gone_ = 0;             // blocks before this one hold no window part
    std::shared_ptr<Ledger> ledger_;
    std::vector<int64_t> state_offset_;  // layer -> its floats in state_, -1 for attention layers
    std::shared_ptr<State> state_;       // null: no recurrent layer
};

}  // namespace strata::kv
