// weights/streamed.h — the weight source of a memory plan. Layers the plan keeps in memory
// are read once, at load, into the process's own huge-page-advised memory (so the speed of
// the forward pass does not depend on how the kernel holds the file's page cache, and a
// model file truncated while the daemon runs cannot fault it); layers that do not fit the
// budget are read from disk for every forward pass, ahead of the layer that needs them.
// Owns: the io_uring reader (O_DIRECT where the file system allows it, otherwise buffered
// reads whose pages are dropped with POSIX_FADV_DONTNEED), the ring of aligned layer
// buffers refilled continuously in layer order (across pass boundaries, so the disk never
// waits for the next pass), retries of failed and short reads, copies of the layers the
// plan keeps in memory (read all at once at load, their pages faulted in ahead of the
// reads by buffer.h's Prefault), and the read statistics. Must not touch: the plan's decisions
// (planner.h), model semantics.
#pragma once

#include <cstdint>
#include <memory>

#include "weights/planner.h"
#include "weights/weights.h"

namespace strata::weights {

// Which expert the expert cache replaces: the least recently used, or the least
// frequently used (counts of every layer's experts, halved as they age; ties by recency).
enum class ExpertPolicy { Lru, Lfu };

struct StreamOptions {
    bool direct = true;                // try O_DIRECT (falls back to buffered reads)
    uint64_t chunk_bytes = 4ull << 20; // one read request
    unsigned queue_depth = 128;        // io_uring entries (read requests in flight)
    int max_retries = 3;               // per request, after an error or an unexpected short read
    bool lock = false;                 // mlock the copies of resident layers
    ExpertPolicy expert_policy = ExpertPolicy::Lru;
    // Test hook (stratad sets it from $STRATA_TEST_READ_FAULTS / _STALL_MS): once the
    // resident layers are loaded, the next `fault_count` completed reads are turned into an
    // error (fault_short = false: EIO) or a short read, or (fault_stall_ms > 0) take that
    // long to complete, as on a disk that hangs.
    int fault_count = 0;
    bool fault_short = false;
    int fault_stall_ms = 0;
};

// Reads the layers `plan` keeps in memory now (and the embedding table when it keeps them
// all), and streams the rest; a pass that would stream from a file changed on disk since
// the load fails with an error saying so. Throws std::runtime_error naming the file when
// it cannot be opened or read, or when io_uring is unavailable.
std::unique_ptr<WeightSource> load_weights(std::shared_ptr<const gguf::File> file, Layout layout, const Plan& plan,
                                            const StreamOptions& options = {});

// Sequential read speed of `file` in bytes/s, reading up to `bytes` of its tensor data
// with the streamer's reader (O_DIRECT when possible, so the page cache does not flatter it).
double measure_read_speed(const gguf::File& file, uint64_t bytes);

}  // namespace strata::weights
