// weights/table_rows.h — internal: rows of the tables a plan never holds (Layout::
// row_tables: per-layer embedding tables), read on demand with the plan's io_uring reader.
// Owns: a call's rows read all at once (each row's span aligned for O_DIRECT) into a staging
// buffer that grows to the largest call, then copied out; the bytes read.
// Must not touch: the layer ring and the expert cache (streamed.cpp, experts.h), the plan.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "weights/buffer.h"
#include "weights/reader.h"
#include "weights/weights.h"

namespace strata::weights {

class TableRows {
public:
    TableRows(const Layout& layout, AsyncReader& reader, uint32_t alignment) : layout_(layout), reader_(reader), alignment_(alignment) {}

    // Rows `ids` of layout.row_tables[table] into out, one after another; throws
    // std::runtime_error naming the table when a read fails.
    void read(size_t table, std::span<const int32_t> ids, uint8_t* out);
    uint64_t bytes_read() const { return bytes_read_; }

private:
    const Layout& layout_;
    AsyncReader& reader_;
    uint32_t alignment_;
    std::optional<Buffer> staging_;
    std::vector<FileRange> ranges_;
    uint64_t calls_ = 0, bytes_read_ = 0;
};

}  // namespace strata::weights
