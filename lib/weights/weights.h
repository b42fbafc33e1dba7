// weights/weights.h — where the forward pass gets weight bytes from.
// Owns: the WeightSource interface (small global tensors always readable; a layer's
// tensors readable between acquire(layer) and release(layer); embedding rows and rows of
// the tables read on demand copied out on request) and the layout that says which tensors belong to which layer. The mapped
// source (pointers into the mmap) and the planned one (copies + io_uring) implement it; the forward pass is written once
// against it and does not know which one runs. Must not touch: tensor math, model semantics.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gguf/gguf.h"

namespace strata::weights {

// Which tensors the model reads. `layers` are the transformer blocks in order, then the
// head (final norm and output matrix): each is read only while it runs. `globals` are
// small and read at any time (RoPE factors). `embeddings` is read a few rows per token.
// `row_tables` are read a few rows per token too, and never held: a plan reads their rows
// from the file on demand (per-layer embedding tables: gigabytes, of which a token reads one row).
struct Layout {
    std::vector<const gguf::TensorInfo*> globals;
    const gguf::TensorInfo* embeddings = nullptr;
    std::vector<const gguf::TensorInfo*> row_tables;
    std::vector<std::vector<const gguf::TensorInfo*>> layers;
    // Mixture of experts: per layer, which entries of layers[l] are merged expert tensors
    // (3-D, one slice of nbytes / n_expert bytes per expert; empty for a dense layer), and
    // how many experts a token uses. A streamed plan reads their slices on demand.
    std::vector<std::vector<int>> expert_tensors;
    int n_expert = 0;
    int n_expert_used = 0;
    bool has_experts() const { return n_expert > 0; }
    // The type each tensor of `layers` is kept in when its layer is resident: a layout of
    // tensor/repack.h that the model chose for the products reading it (empty: the file's
    // types).
    std::vector<std::vector<DType>> resident_types;
    DType resident_type(size_t l, size_t j) const { return resident_types.empty() ? layers[l][j]->type : resident_types[l][j]; }
};

// What a source has done, for status and benchmarks.
struct Stats {
    std::string mode;                // "mapped", "resident" (copied) or "streamed"
    uint64_t passes = 0;
    uint64_t bytes_read = 0;         // from disk by the streamer
    double read_busy_s = 0;          // wall time with at least one read in flight
    double stall_s = 0;              // time the forward pass waited for reads
    uint64_t retries = 0;            // reads retried after an error or a short read
    // Experts read on demand (a streamed mixture-of-experts plan): requests served from
    // the expert cache or read, the bytes read for them, and the cache's size.
    uint64_t expert_hits = 0;
    uint64_t expert_misses = 0;
    uint64_t expert_bytes_read = 0;
    uint64_t expert_cache_bytes = 0;
    uint64_t table_bytes_read = 0;   // rows of the tables read on demand (Layout::row_tables)
    double read_bytes_per_s() const { return read_busy_s > 0 ? bytes_read / read_busy_s : 0; }
    double expert_hit_rate() const { return expert_hits + expert_misses ? double(expert_hits) / double(expert_hits + expert_misses) : 0; }
};

class WeightSource {
public:
    virtual ~WeightSource() = default;
    // Bytes of layout.globals[i].
    virtual const uint8_t* global(size_t i) const = 0;
    // Copies embedding rows `ids` (each row_bytes long) to out, one after another.
    virtual void embedding_rows(std::span<const int32_t> ids, uint8_t* out) = 0;
    // The same for rows `ids` of layout.row_tables[table]. Throws std::runtime_error when
    // they cannot be read.
    virtual void table_rows(size_t table, std::span<const int32_t> ids, uint8_t* out) = 0;
    // Makes layer l's tensors readable; the result is parallel to layout.layers[l] and
    // valid until release(l). Within a pass layers are acquired in order, each released
    // before the next is acquired. Throws std::runtime_error when the bytes cannot be
    // read (a streaming I/O error, after retries).
    virtual std::span<const uint8_t* const> acquire(int layer) = 0;
    virtual void release(int layer) = 0;
    // Whether expert tensors (Layout::expert_tensors) are read on demand: then acquire()
    // gives null for them and experts() makes the chosen experts' slices readable.
    virtual bool experts_on_demand() const { return false; }
    // The most experts one experts() call can hold.
    virtual int max_experts() const { return 0; }
    // Between acquire(layer) and release(layer): expert ids[i]'s slice of expert tensor j
    // of the layer (Layout::expert_tensors[layer][j]) at result[i * n + j], n the number
    // of expert tensors; valid until the next experts() or release(). At most
    // max_experts() distinct ids. Throws std::runtime_error when a read fails.
    virtual std::span<const uint8_t* const> experts(int layer, std::span<const int32_t> ids);
    // Whether tensor j of layer l (layout.layers[l][j]) was rearranged at load into
    // layout.resident_type(layer, j) (resident layers' copies are).
    virtual bool resident_layout(int layer, size_t j) const {
        (void)layer, (void)j;
        return false;
    }
    // A forward pass starts.
    virtual void begin_pass() {}
    virtual Stats stats() const = 0;
};

// acquire() returns pointers into the file's mapping (or in-memory image); nothing is
// copied or read ahead. The daemon's sources come from a memory plan (streamed.h).
std::unique_ptr<WeightSource> make_mapped(std::shared_ptr<const gguf::File> file, Layout layout);

}  // namespace strata::weights
