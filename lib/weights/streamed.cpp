// weights/streamed.cpp — the weight source of a memory plan: the layers the plan keeps in
// memory are read once into anonymous memory of the process's own (with the embedding
// table, when every layer is kept: the resident plan); the others are streamed.
//
// The streamed layers form a cycle s_0 .. s_{m-1} that every pass walks in order. Read
// number q (q = 0, 1, 2, ... over all passes) brings layer s_{q mod m} into ring buffer
// q mod slots. acquire() of a streamed layer waits for its read; release() frees the
// buffer and starts read q + slots at once, so the ring stays full across the end of one
// pass and the start of the next. A pass that stopped half way (an exception) leaves the
// cycle out of step: the next begin_pass() waits for the reads in flight and starts the
// cycle again from s_0.
#include "weights/streamed.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "tensor/repack.h"
#include "weights/buffer.h"
#include "weights/experts.h"
#include "weights/reader.h"
#include "weights/table_rows.h"

namespace strata::weights {
namespace {

using Clock = std::chrono::steady_clock;

class Streamed final : public WeightSource {
public:
    Streamed(std::shared_ptr<const gguf::File> file, Layout layout, const Plan& plan, const StreamOptions& opt)
        : file_(std::move(file)), layout_(std::move(layout)), reader_(file_->path(), file_->file_size(), opt) {
        const uint32_t align = 4096;
        for (size_t l = 0; l < layout_.layers.size(); ++l) ranges_.push_back(pass_ranges(layout_, l, plan.experts_on_demand, align));
        copy_globals();
        ptrs_.resize(layout_.layers.size());
        for (size_t l = 0; l < layout_.layers.size(); ++l)
            if (!plan.resident[l]) streamed_.push_back(static_cast<int>(l));
        load_resident(plan, opt.lock);
        if (plan.experts_on_demand) experts_.emplace(layout_, reader_, plan.expert_slots, plan.expert_slot_bytes, align, opt.expert_policy);
        if (!layout_.row_tables.empty()) rows_.emplace(layout_, reader_, align);
        reader_.arm_faults();
        if (!streamed_.empty()) {
            const int slots = std::max(2, plan.ring_slots);
            uint64_t slot_bytes = 0;
            for (int l : streamed_) slot_bytes = std::max(slot_bytes, ranges_[l].bytes);
            for (int i = 0; i < slots; ++i) ring_.emplace_back(slot_bytes);
            for (int i = 0; i < slots; ++i) fill(next_read_++);
        }
        embd_fd_ = ::open(file_->path().c_str(), O_RDONLY | O_CLOEXEC);
        if (embd_fd_ < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + file_->path());
        loaded_ = identity();
    }

    ~Streamed() override {
        reader_.drain();
        if (embd_fd_ >= 0) ::close(embd_fd_);
    }

    const uint8_t* global(size_t i) const override { return globals_.at(i).data(); }

    // From the copy when every layer is in memory; otherwise buffered reads of single
    // rows, whose pages are dropped at once.
    void embedding_rows(std::span<const int32_t> ids, uint8_t* out) override {
        const auto* e = layout_.embeddings;
        const size_t row = e->nbytes / e->rows();
        if (!embd_copy_.empty()) {
            const uint8_t* table = embd_copy_.front().data() + embd_offset_;
            for (size_t i = 0; i < ids.size(); ++i) std::memcpy(out + i * row, table + size_t(ids[i]) * row, row);
            return;
        }
        check_unchanged();
        for (size_t i = 0; i < ids.size(); ++i) {
            const uint64_t at = e->file_offset + uint64_t(ids[i]) * row;
            for (size_t done = 0; done < row;) {
                const ssize_t n = ::pread(embd_fd_, out + i * row + done, row - done, static_cast<off_t>(at + done));
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0)
                    throw std::runtime_error("cannot read the embedding of token " + std::to_string(ids[i]) + " from " + file_->path() + ": " +
                                             (n < 0 ? std::strerror(errno) : "unexpected end of file"));
                done += static_cast<size_t>(n);
            }
            ::posix_fadvise(embd_fd_, static_cast<off_t>(at), static_cast<off_t>(row), POSIX_FADV_DONTNEED);
        }
    }

    // Never held, whatever the plan: read with io_uring, a call's rows together.
    void table_rows(size_t table, std::span<const int32_t> ids, uint8_t* out) override {
        check_unchanged();
        const auto t0 = Clock::now();
        rows_->read(table, ids, out);
        stall_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    }

    void begin_pass() override {
        ++passes_;
        if (experts_) check_unchanged();  // experts are read in any pass, even with every layer in memory
        const uint64_t m = streamed_.size();
        if (m == 0 || (next_use_ % m == 0 && !failed_)) return;
        // The last pass stopped half way (or a read failed): wait for the reads in flight
        // and start the cycle again from its first layer, reading everything anew.
        reader_.drain();
        next_use_ = (next_use_ + m - 1) / m * m;
        next_read_ = next_use_;
        failed_ = false;
        for (size_t i = 0; i < ring_.size(); ++i) fill(next_read_++);
    }

    std::span<const uint8_t* const> acquire(int layer) override {
        if (resident_layer(layer)) return ptrs_[layer];
        const uint64_t q = next_use_;
        if (streamed_[q % streamed_.size()] != layer)
            throw std::logic_error("streamed weights: layer " + std::to_string(layer) + " acquired out of order");
        const auto t0 = Clock::now();
        std::string error = reader_.wait(q);
        stall_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
        if (!error.empty()) {
            failed_ = true;
            throw std::runtime_error("streaming layer " + layer_name(layer) + ": " + error);
        }
        set_pointers(layer, ring_[q % ring_.size()].data());
        return ptrs_[layer];
    }

    void release(int layer) override {
        if (resident_layer(layer)) return;
        ++next_use_;
        fill(next_read_++);
    }

    bool experts_on_demand() const override { return experts_.has_value(); }
    int max_experts() const override { return experts_ ? experts_->slots() : 0; }

    std::span<const uint8_t* const> experts(int layer, std::span<const int32_t> ids) override {
        const auto t0 = Clock::now();
        const auto result = experts_->get(layer, ids);
        stall_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
        return result;
    }

    Stats stats() const override {
        const auto c = reader_.counters();
        Stats s{.mode = streamed_.empty() && !experts_ ? "resident" : "streamed", .passes = passes_, .bytes_read = c.bytes, .read_busy_s = c.busy_s,
                .stall_s = stall_s_, .retries = c.retries};
        if (experts_) {
            s.expert_hits = experts_->hits();
            s.expert_misses = experts_->misses();
            s.expert_bytes_read = experts_->bytes_read();
            s.expert_cache_bytes = experts_->bytes();
        }
        if (rows_) s.table_bytes_read = rows_->bytes_read();
        return s;
    }

private:
    bool resident_layer(int layer) const { return !resident_.empty() && resident_[layer].size() > 0; }

    std::string layer_name(int layer) const {
        return layer + 1 == static_cast<int>(layout_.layers.size()) ? "head (output)" : std::to_string(layer);
    }

    // Layer l's tensor pointers into `buf`, which holds its pass ranges (null: an expert
    // tensor read on demand).
    void set_pointers(int l, const uint8_t* buf) {
        auto& p = ptrs_[l];
        p.clear();
        const LayerRanges& r = ranges_[l];
        for (size_t i = 0; i < layout_.layers[l].size(); ++i) p.push_back(r.tensor_range[i] == LayerRanges::kNone ? nullptr : buf + r.tensor_offset[i]);
    }

    // Starts read number q: streamed layer q mod m into ring buffer q mod slots.
    void fill(uint64_t q) {
        const int layer = streamed_[q % streamed_.size()];
        reader_.read(q, ranges_[layer].ranges, ring_[q % ring_.size()].data());
    }

    void copy_globals() {
        for (const auto* t : layout_.globals) globals_.emplace_back(t->data, t->data + t->nbytes);
    }

    // Reads the layers the plan keeps (and the embedding table when it keeps them all) into
    // memory of their own, once. Every read is queued at once, so that the disk streams
    // without a pause at the end of each layer, while a Prefault thread faults the copies'
    // pages in ahead of the reads. 8B Q4_K_M on a 2-vCPU VM (strata-bench's load_s, five
    // alternating runs) loaded in 2.2-2.9 s where reading each layer before the next, its
    // pages faulted in by the reads themselves, took 2.9-16.3 s.
    void load_resident(const Plan& plan, bool lock) {
        struct Copy {
            uint64_t tag;
            std::string what;
            const Buffer* buf;
            std::span<const FileRange> ranges;
            int layer;  // -1: the embedding table
        };
        std::vector<Copy> copies;
        resident_.resize(layout_.layers.size());
        for (size_t l = 0; l < layout_.layers.size(); ++l)
            if (plan.resident[l]) {
                resident_[l].emplace_back(ranges_[l].bytes);
                copies.push_back({~uint64_t(0) - 1 - l, "layer " + layer_name(static_cast<int>(l)), &resident_[l].back(), ranges_[l].ranges,
                                  static_cast<int>(l)});
            }
        LayerRanges embd;
        if (streamed_.empty() && layout_.embeddings) {
            embd = layer_ranges({layout_.embeddings}, 4096);
            embd_copy_.emplace_back(embd.bytes);
            embd_offset_ = embd.tensor_offset[0];
            copies.push_back({~uint64_t(0), "the token embeddings", &embd_copy_.back(), embd.ranges, -1});
        }
        std::vector<const Buffer*> buffers;
        for (const Copy& c : copies) buffers.push_back(c.buf);
        const Prefault prefault(std::move(buffers));
        for (const Copy& c : copies) reader_.read(c.tag, c.ranges, c.buf->data());
        // The first error; every read is waited for before throwing. Each layer is rearranged
        // as soon as its read is in, while the later reads are still in flight.
        std::string error;
        for (const Copy& c : copies) {
            if (std::string e = reader_.wait(c.tag); !e.empty() && error.empty()) error = "loading " + c.what + ": " + e;
            if (error.empty() && c.layer >= 0) to_resident_layout(c.layer, c.buf->data());
        }
        if (!error.empty()) throw std::runtime_error(error);
        for (const Copy& c : copies) {
            if (lock) c.buf->lock(c.what.c_str());
            if (c.layer >= 0) set_pointers(c.layer, c.buf->data());
        }
    }

    // The tensors of resident layer l (read into `buf`) rearranged into their resident
    // types, in place (tensor/repack.h).
    void to_resident_layout(int l, uint8_t* buf) {
        const LayerRanges& r = ranges_[l];
        for (size_t i = 0; i < layout_.layers[l].size(); ++i) {
            const gguf::TensorInfo* t = layout_.layers[l][i];
            if (r.tensor_range[i] == LayerRanges::kNone) continue;
            const size_t row_bytes = dtype_bytes(t->type, t->ne[0]);
            rearrange(t->type, layout_.resident_type(static_cast<size_t>(l), i), buf + r.tensor_offset[i],
                      static_cast<int64_t>(t->nbytes / row_bytes), row_bytes);
        }
    }

    bool resident_layout(int layer, size_t j) const override {
        return resident_layer(layer) && ranges_[layer].tensor_range[j] != LayerRanges::kNone;
    }

    struct Identity {
        off_t size;
        timespec mtime;
    };
    Identity identity() const {
        struct stat st {};
        if (::fstat(embd_fd_, &st) != 0) throw std::system_error(errno, std::generic_category(), "cannot stat " + file_->path());
        return {st.st_size, st.st_mtim};
    }

    // Streamed bytes must come from the file that was loaded: a file truncated or
    // rewritten in place since then fails the pass (its embedding step, the first read of
    // every pass) instead of feeding the model garbage.
    void check_unchanged() const {
        const Identity now = identity();
        if (now.size != loaded_.size || now.mtime.tv_sec != loaded_.mtime.tv_sec || now.mtime.tv_nsec != loaded_.mtime.tv_nsec)
            throw std::runtime_error("the model file " + file_->path() + " was changed on disk since it was loaded (size " + std::to_string(loaded_.size) +
                                     " -> " + std::to_string(now.size) + " bytes); restore it, or restart stratad to load the new file");
    }

    std::shared_ptr<const gguf::File> file_;
    Layout layout_;
    AsyncReader reader_;
    std::vector<LayerRanges> ranges_;
    std::vector<std::vector<uint8_t>> globals_;
    std::vector<std::vector<Buffer>> resident_;           // per layer: its copy, when kept
    std::vector<std::vector<const uint8_t*>> ptrs_;       // per layer: tensor pointers
    std::vector<int> streamed_;                           // the cycle of streamed layers
    std::optional<ExpertCache> experts_;                  // a mixture of experts read on demand
    std::optional<TableRows> rows_;                       // the tables read on demand
    std::vector<Buffer> ring_;
    uint64_t next_use_ = 0, next_read_ = 0;
    bool failed_ = false;
    int embd_fd_ = -1;
    Identity loaded_{};
    std::vector<Buffer> embd_copy_;                       // the embedding table, when resident
    uint64_t embd_offset_ = 0;                            // its first byte within the copy
    uint64_t passes_ = 0;
    double stall_s_ = 0;
};

}  // namespace

std::unique_ptr<WeightSource> load_weights(std::shared_ptr<const gguf::File> file, Layout layout, const Plan& plan, const StreamOptions& options) {
    if (plan.resident.size() != layout.layers.size()) throw std::invalid_argument("load_weights: the plan is for another layout");
    return std::make_unique<Streamed>(std::move(file), std::move(layout), plan, options);
}

double measure_read_speed(const gguf::File& file, uint64_t bytes) {
    const uint64_t start = (file.data_offset() + 4095) / 4096 * 4096;
    const uint64_t length = std::min(bytes, file.file_size() > start ? (file.file_size() - start) / 4096 * 4096 : 0);
    if (length == 0) return 0;
    AsyncReader reader(file.path(), file.file_size(), StreamOptions{});
    // Two buffers in turn, so that one batch is always in flight while the other completes.
    const uint64_t batch = std::min<uint64_t>(length, 128ull << 20);
    Buffer bufs[2] = {Buffer(batch), Buffer(batch)};
    const auto t0 = Clock::now();
    uint64_t issued = 0, tag = 0;
    auto issue = [&] {
        const FileRange r{start + issued, std::min<uint64_t>(batch, length - issued)};
        reader.read(tag, {&r, 1}, bufs[tag % 2].data());
        issued += r.length;
        ++tag;
    };
    issue();
    for (uint64_t done = 0; done < tag; ++done) {
        if (issued < length) issue();
        if (std::string e = reader.wait(done); !e.empty()) throw std::runtime_error(e);
    }
    return double(length) / std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace strata::weights
