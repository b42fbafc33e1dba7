// weights/resident.cpp — the resident weight source: pointers into the read-only mmap.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "weights/weights.h"

namespace strata::weights {
namespace {

class Resident final : public WeightSource {
public:
    Resident(std::shared_ptr<const gguf::File> file, Layout layout, bool lock) : file_(std::move(file)), layout_(std::move(layout)) {
        for (const auto* t : layout_.globals) globals_.push_back(t->data);
        for (const auto& l : layout_.layers) {
            std::vector<const uint8_t*> ptrs;
            for (const auto* t : l) ptrs.push_back(t->data);
            layers_.push_back(std::move(ptrs));
        }
        advise(lock);
    }

    const uint8_t* global(size_t i) const override { return globals_.at(i); }

    void embedding_rows(std::span<const int32_t> ids, uint8_t* out) override {
        const auto* e = layout_.embeddings;
        const size_t row = e->nbytes / e->rows();
        for (size_t i = 0; i < ids.size(); ++i) std::memcpy(out + i * row, e->data + size_t(ids[i]) * row, row);
    }

    std::span<const uint8_t* const> acquire(int layer) override { return layers_.at(layer); }
    void release(int) override {}
    void begin_pass() override { passes_.fetch_add(1, std::memory_order_relaxed); }
    Stats stats() const override { return {.mode = "resident", .passes = passes_.load(std::memory_order_relaxed)}; }

private:
    // The data section, page-aligned.
    void advise(bool lock) {
        auto bytes = file_->bytes();
        if (file_->fd() < 0 || bytes.empty()) return;  // in-memory image
        const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
        const uint64_t start = file_->data_offset() / page * page;
        void* addr = const_cast<uint8_t*>(bytes.data() + start);
        const size_t len = bytes.size() - start;
        ::madvise(addr, len, MADV_WILLNEED);
        if (lock && ::mlock(addr, len) != 0)
            throw std::system_error(errno, std::generic_category(),
                                    "cannot mlock the model (" + std::to_string(len >> 20) + " MiB; raise LimitMEMLOCK= or set memory.lock = false)");
    }

    std::shared_ptr<const gguf::File> file_;
    Layout layout_;
    std::vector<const uint8_t*> globals_;
    std::vector<std::vector<const uint8_t*>> layers_;
    std::atomic<uint64_t> passes_{0};
};

}  // namespace

std::unique_ptr<WeightSource> make_resident(std::shared_ptr<const gguf::File> file, Layout layout, bool lock) {
    return std::make_unique<Resident>(std::move(file), std::move(layout), lock);
}

}  // namespace strata::weights
