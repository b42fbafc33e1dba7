// weights/mapped.cpp — the mapped weight source: pointers straight into the GGUF mapping.
// For in-memory images (tests, the fuzzer) and for tools that plan without computing;
// the daemon's resident plan copies its weights instead (streamed.h).
#include <cstring>

#include "weights/weights.h"

namespace strata::weights {
namespace {

class Mapped final : public WeightSource {
public:
    Mapped(std::shared_ptr<const gguf::File> file, Layout layout) : file_(std::move(file)), layout_(std::move(layout)) {
        for (const auto* t : layout_.globals) globals_.push_back(t->data);
        for (const auto& l : layout_.layers) {
            std::vector<const uint8_t*> ptrs;
            for (const auto* t : l) ptrs.push_back(t->data);
            layers_.push_back(std::move(ptrs));
        }
    }

    const uint8_t* global(size_t i) const override { return globals_.at(i); }

    void embedding_rows(std::span<const int32_t> ids, uint8_t* out) override { copy_rows(layout_.embeddings, ids, out); }
    void table_rows(size_t table, std::span<const int32_t> ids, uint8_t* out) override { copy_rows(layout_.row_tables.at(table), ids, out); }

    std::span<const uint8_t* const> acquire(int layer) override { return layers_.at(layer); }
    void release(int) override {}
    void begin_pass() override { ++passes_; }
    Stats stats() const override { return {.mode = "mapped", .passes = passes_}; }

private:
    static void copy_rows(const gguf::TensorInfo* t, std::span<const int32_t> ids, uint8_t* out) {
        const size_t row = t->nbytes / t->rows();
        for (size_t i = 0; i < ids.size(); ++i) std::memcpy(out + i * row, t->data + size_t(ids[i]) * row, row);
    }

    std::shared_ptr<const gguf::File> file_;
    Layout layout_;
    std::vector<const uint8_t*> globals_;
    std::vector<std::vector<const uint8_t*>> layers_;
    uint64_t passes_ = 0;
};

}  // namespace

std::unique_ptr<WeightSource> make_mapped(std::shared_ptr<const gguf::File> file, Layout layout) {
    return std::make_unique<Mapped>(std::move(file), std::move(layout));
}

}  // namespace strata::weights
