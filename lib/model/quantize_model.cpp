// model/quantize_model.cpp — converting a GGUF model tensor by tensor, streamed.
#include "model/quantize_model.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gguf/writer.h"
#include "kernels/threadpool.h"
#include "tensor/quantize.h"

namespace strata::model {
namespace {

constexpr uint64_t kChunkBytes = 16u << 20;        // output (or float) bytes converted per step
constexpr int64_t kMinParallelElements = 1 << 16;  // smaller conversions run on one thread
constexpr const char* kSplitKeys[] = {"split.no", "split.count", "split.tensors.count"};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Refuses, before anything is written, conversions that would lose quality silently or
// cannot be done.
void check_plan(const std::vector<TensorPlan>& plan, bool allow_requantize) {
    for (const auto& p : plan) {
        const DType from = p.src->type;
        if (p.type == from) continue;
        if (!can_dequantize(from))
            throw std::runtime_error("tensor " + p.src->name + " has type " + std::string(dtype_name(from)) +
                                     ", which has no float values to convert");
        if (is_block_quantized(from) && !allow_requantize)
            throw std::runtime_error("tensor " + p.src->name + " is already " + std::string(dtype_name(from)) +
                                     ": requantizing loses quality; start from an F32/F16/BF16 model or allow requantizing "
                                     "(--allow-requantize)");
    }
}

// Drops source pages that have been converted, from this process and from the page cache:
// a model read once does not need to stay in memory (resident size stays about one chunk).
// The pages holding the metadata are a private copy (gguf.h) and are never dropped.
void release_source(const gguf::File& f, const uint8_t* data, uint64_t size) {
    const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const auto offset = static_cast<uint64_t>(data - f.bytes().data());
    const uint64_t begin = std::max(offset / page * page, (f.data_offset() + page - 1) / page * page);
    const uint64_t end = offset + size;
    if (end <= begin) return;
    ::madvise(const_cast<uint8_t*>(f.bytes().data()) + begin, end - begin, MADV_DONTNEED);
    if (f.fd() >= 0) ::posix_fadvise(f.fd(), static_cast<off_t>(begin), static_cast<off_t>(end - begin), POSIX_FADV_DONTNEED);
}

// Converts the rows of one tensor to another type, a chunk of rows at a time, on the
// pool's threads. Remembers a row holding a value that is not finite.
class RowConverter {
public:
    RowConverter(kernels::ThreadPool& pool, const TensorPlan& p)
        : pool_(pool), from_(p.src->type), to_(p.type), ncols_(p.src->ne[0]),
          in_row_(dtype_bytes(from_, static_cast<uint64_t>(ncols_))),
          out_row_(dtype_bytes(to_, static_cast<uint64_t>(ncols_))),
          floats_(static_cast<size_t>(pool.size()), std::vector<float>(static_cast<size_t>(ncols_))) {}

    int64_t rows_per_chunk() const {
        return std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / std::max<uint64_t>(out_row_, ncols_ * 4)));
    }

    // Converts rows [0, n) of src into out; returns false if a row was not finite. Small
    // jobs stay on the calling thread: waking the pool costs more than they do.
    bool convert(const uint8_t* src, int64_t first_row, int64_t n, uint8_t* out) {
        auto rows = [&](int64_t b, int64_t e, int thread) {
            float* x = floats_[static_cast<size_t>(thread)].data();
            for (int64_t r = b; r < e; ++r) {
                dequantize_row(from_, src + r * in_row_, x, ncols_);
                if (!all_finite(x)) {
                    note_bad_row(first_row + r);
                    continue;
                }
                quantize_row(to_, x, out + r * out_row_, ncols_);
            }
        };
        if (n * ncols_ < kMinParallelElements) rows(0, n, 0);
        else pool_.parallel_for(n, std::max<int64_t>(1, n / (4 * pool_.size())), rows);
        return bad_row_.load() < 0;
    }

    int64_t bad_row() const { return bad_row_.load(); }
    uint64_t in_row() const { return in_row_; }
    uint64_t out_row() const { return out_row_; }

private:
    bool all_finite(const float* x) const {
        for (int64_t i = 0; i < ncols_; ++i)
            if (!std::isfinite(x[i])) return false;
        return true;
    }
    void note_bad_row(int64_t row) {
        int64_t seen = -1;
        bad_row_.compare_exchange_strong(seen, row);
    }

    kernels::ThreadPool& pool_;
    DType from_, to_;
    int64_t ncols_;
    uint64_t in_row_, out_row_;
    std::vector<std::vector<float>> floats_;  // one row per thread
    std::atomic<int64_t> bad_row_{-1};
};

void emit_converted(const gguf::File& f, kernels::ThreadPool& pool, const TensorPlan& p, const gguf::Writer::Emit& out) {
    RowConverter conv(pool, p);
    const int64_t rows = p.src->rows(), step = conv.rows_per_chunk();
    const uint64_t in_row = conv.in_row(), out_row = conv.out_row();
    std::vector<uint8_t> buf(static_cast<size_t>(std::min(rows, step)) * out_row);
    for (int64_t r = 0; r < rows; r += step) {
        const int64_t n = std::min(step, rows - r);
        if (!conv.convert(p.src->data + r * in_row, r, n, buf.data()))
            throw std::runtime_error("tensor " + p.src->name + ": row " + std::to_string(conv.bad_row()) +
                                     " holds NaN or Inf; refusing to quantize it");
        release_source(f, p.src->data + r * in_row, static_cast<uint64_t>(n) * in_row);
        out(buf.data(), static_cast<size_t>(n) * out_row);
    }
}

void emit_copy(const gguf::File& f, const TensorPlan& p, const gguf::Writer::Emit& out) {
    for (uint64_t at = 0; at < p.src->nbytes; at += kChunkBytes) {
        const uint64_t n = std::min<uint64_t>(kChunkBytes, p.src->nbytes - at);
        out(p.src->data + at, static_cast<size_t>(n));
        release_source(f, p.src->data + at, n);
    }
}

void copy_metadata(const gguf::File& src, const FileType& ft, gguf::Writer& w) {
    for (const auto& [key, value] : src.metadata()) w.set_value(key, value);
    for (const char* k : kSplitKeys) w.remove(k);
    w.remove("general.quantization_version");
    w.set_u32("general.quantization_version", kQuantizationVersion);
    w.remove("general.file_type");
    w.set_u32("general.file_type", ft.id);
}

}  // namespace

QuantizeResult quantize_model(const std::string& in_path, const std::string& out_path, const FileType& ft,
                              const QuantizeOptions& options) {
    const auto t0 = Clock::now();
    auto src = gguf::File::open(in_path);
    const std::vector<TensorPlan> plan = plan_quantization(*src, ft);
    check_plan(plan, options.allow_requantize);

    const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    kernels::ThreadPool pool(threads);
    QuantizeResult result;
    gguf::Writer w(src->alignment());
    copy_metadata(*src, ft, w);
    for (size_t i = 0; i < plan.size(); ++i) {
        const TensorPlan& p = plan[i];
        const bool convert = p.type != p.src->type;
        result.tensors++;
        result.converted += convert;
        result.fallbacks += !p.fallback.empty();
        w.add_tensor(p.src->name, p.type, p.shape, [&, i, convert](const gguf::Writer::Emit& out) {
            const auto start = Clock::now();
            uint64_t written = 0;
            auto counted = [&](const void* d, size_t n) {
                written += n;
                out(d, n);
            };
            if (convert) emit_converted(*src, pool, p, counted);
            else emit_copy(*src, p, counted);
            result.bytes_in += p.src->nbytes;
            result.bytes_out += written;
            if (options.on_tensor) options.on_tensor({i, plan.size(), &p, p.src->nbytes, written, seconds_since(start)});
        });
    }
    w.write(out_path);
    result.seconds = seconds_since(t0);
    return result;
}

}  // namespace strata::model
