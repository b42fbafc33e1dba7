// weights/table_rows.cpp — rows of a table read on demand, a call's rows in one batch.
#include "weights/table_rows.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace strata::weights {
namespace {

// Tags of row reads: below the expert cache's (1 << 62) and above the ring's read numbers.
constexpr uint64_t kRowTags = uint64_t(1) << 61;

}  // namespace

void TableRows::read(size_t table, std::span<const int32_t> ids, uint8_t* out) {
    const gguf::TensorInfo* t = layout_.row_tables.at(table);
    const uint64_t row = t->nbytes / uint64_t(t->rows()), a = alignment_;
    ranges_.clear();
    uint64_t total = 0;
    for (const int32_t id : ids) {
        const uint64_t first = t->file_offset + uint64_t(id) * row, begin = first / a * a, end = (first + row + a - 1) / a * a;
        ranges_.push_back({begin, end - begin});
        total += end - begin;
    }
    if (!staging_ || staging_->size() < total) {
        staging_.reset();
        staging_.emplace(total, "per-layer table rows");
    }
    const uint64_t tag = kRowTags + ++calls_;
    reader_.read(tag, ranges_, staging_->data());
    if (std::string error = reader_.wait(tag); !error.empty()) throw std::runtime_error("reading rows of " + t->name + ": " + error);
    bytes_read_ += total;
    uint64_t at = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        const uint64_t first = t->file_offset + uint64_t(ids[i]) * row;
        std::memcpy(out + i * row, staging_->data() + at + (first - ranges_[i].offset), row);
        at += ranges_[i].length;
    }
}

}  // namespace strata::weights
