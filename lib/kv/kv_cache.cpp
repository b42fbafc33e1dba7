// kv/kv_cache.cpp — blocks, growth with copy-on-write, truncation, sharing and the file
// form of a sequence's cache (see kv_cache.h).
#include "kv/kv_cache.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"

namespace strata::kv {

constexpr int32_t kMaxQ8Blocks = 256;  // Q8_0 blocks of a key row (dim <= 8192): store()'s stack buffer

std::string_view kv_type_name(KvType type) { return type == KvType::F16 ? "f16" : "q8_0"; }

std::optional<KvType> kv_type_from_name(std::string_view name) {
    if (name == "f16") return KvType::F16;
    if (name == "q8_0") return KvType::Q8_0;
    return std::nullopt;
}

Block::Block(size_t bytes, std::shared_ptr<Ledger> ledger) : bytes_(bytes), ledger_(std::move(ledger)), data_(ledger_->take(bytes_)) {}

Block::Block(const Block& other) : bytes_(other.bytes_), ledger_(other.ledger_), data_(ledger_->take(bytes_)) {
    std::memcpy(data_, other.data_, bytes_);
}

Block::~Block() { ledger_->give(data_, bytes_); }

State::State(size_t floats, std::shared_ptr<Ledger> ledger)
    : bytes_(floats * sizeof(float)), ledger_(std::move(ledger)), data_(ledger_->take(bytes_)) {}

State::State(const State& other) : bytes_(other.bytes_), ledger_(other.ledger_), data_(ledger_->take(bytes_)) {
    std::memcpy(data_, other.data_, bytes_);
}

State::~State() { ledger_->give(data_, bytes_); }

void State::clear() { std::memset(data_, 0, bytes_); }

KvCache::KvCache(Shape shape, int32_t capacity, std::shared_ptr<Ledger> ledger, KvType type)
    : shape_(std::move(shape)), capacity_(capacity), type_(type), ledger_(ledger ? std::move(ledger) : std::make_shared<Ledger>()) {
    const auto per_layer = [&](size_t n) { return n == 0 || n == size_t(shape_.n_layer); };
    if (shape_.n_layer < 1 || shape_.dim < 1 || capacity < 1 || shape_.window < 0 || !per_layer(shape_.sliding.size()) ||
        !per_layer(shape_.state.size()) || !per_layer(shape_.dims.size()) || !per_layer(shape_.source.size()))
        throw std::invalid_argument("KvCache: bad geometry");
    if (shape_.window == 0) shape_.sliding.clear();
    lay_out();
    int64_t floats = 0;
    for (int32_t l = 0; l < shape_.n_layer; ++l) {
        const int64_t state = shape_.state.empty() ? 0 : shape_.state[size_t(l)];
        state_offset_.push_back(state > 0 ? floats : -1);
        floats += std::max<int64_t>(state, 0);
    }
    if (floats > 0) state_ = std::make_shared<State>(size_t(floats), ledger_);
}

void KvCache::lay_out() {
    for (int32_t l = 0; l < shape_.n_layer; ++l) {
        const int32_t dim = shape_.dims.empty() ? shape_.dim : shape_.dims[size_t(l)];
        const int32_t src = shape_.source.empty() ? l : shape_.source[size_t(l)];
        const bool recurrent = !shape_.state.empty() && shape_.state[size_t(l)] > 0;
        if (dim < 1 || src < 0 || src > l || (src < l && (!owns_[size_t(src)] || sliding(src) != sliding(l) || dim != format_[size_t(src)].dim)))
            throw std::invalid_argument("KvCache: bad geometry of layer " + std::to_string(l));
        if (type_ == KvType::Q8_0 && (dim % 32 != 0 || dim / 32 > kMaxQ8Blocks))
            throw std::invalid_argument("a q8_0 KV cache needs key/value rows that are a multiple of 32 values, at most 8192 (this model's are " +
                                        std::to_string(dim) + ")");
        format_.push_back({type_, dim});
        owns_.push_back(src == l && !recurrent);
        size_t& kind = sliding(l) ? window_bytes_ : full_bytes_;
        offset_.push_back(src < l ? offset_[size_t(src)] : kind);
        if (owns_.back()) kind += format_.back().layer_bytes();
    }
}

uint64_t KvCache::bytes() const {
    uint64_t total = 0;
    for (const Blocks& b : blocks_)
        for (const BlockRef* part : b.parts())
            if (*part) total += (*part)->bytes();
    return total + (state_ ? state_->bytes() : 0);
}

uint64_t KvCache::bytes_for(int32_t positions, int32_t pass) const {
    const auto blocks = [](int64_t n) { return uint64_t((n + kBlockTokens - 1) / kBlockTokens); };
    const uint64_t window = window_bytes_ ? std::min(blocks(positions), blocks(int64_t(shape_.window) - 1 + kWindowSlack + pass) + 1) : 0;
    return blocks(positions) * full_bytes_ + window * window_bytes_ + (state_ ? state_->bytes() : 0);
}

int32_t KvCache::window_start(int32_t size) const { return window_bytes_ ? std::max(0, size - shape_.window + 1) : size; }

void KvCache::reserve(int32_t n, bool window_layers) {
    if (n < 0 || n > capacity_ - size_)
        throw std::length_error("context full: " + std::to_string(size_) + " + " + std::to_string(n) + " tokens exceed the context of " +
                                std::to_string(capacity_));
    if (n == 0) return;
    if (state_ && state_.use_count() > 1) state_ = std::make_shared<State>(*state_);
    const size_t first = size_t(size_ / kBlockTokens), end = size_t((size_ + n + kBlockTokens - 1) / kBlockTokens);
    if (blocks_.size() < end) blocks_.resize(end);
    const auto own = [&](BlockRef& part, size_t bytes) {
        if (!part) {
            part = std::make_shared<Block>(bytes, ledger_);
        } else if (part.use_count() > 1) {
            part = std::make_shared<Block>(*part);
        }
    };
    for (size_t b = first; b < end; ++b) {
        if (full_bytes_) own(blocks_[b].full, full_bytes_);
        if (window_bytes_ && window_layers) own(blocks_[b].window, window_bytes_);
    }
}

void KvCache::store(int32_t l, int32_t p, const float* k, const float* v) {
    uint8_t* base = part(l, p / kBlockTokens)->at(offset_[size_t(l)]);
    const BlockFormat& f = format(l);
    const int32_t dim = f.dim;
    const int32_t j = p % kBlockTokens;
    uint8_t* row = base + f.key_bytes() + f.key_scale_bytes() + size_t(j) * f.value_row_bytes();
    if (f.type == KvType::F16) {
        auto* kt = reinterpret_cast<uint16_t*>(base) + j;
        auto* vr = reinterpret_cast<uint16_t*>(row);
        for (int32_t d = 0; d < dim; ++d) {
            kt[size_t(d) * kBlockTokens] = fp32_to_fp16(k[d]);
            vr[d] = fp32_to_fp16(v[d]);
        }
        return;
    }
    // Values are GGML Q8_0 rows as they stand; keys the same blocks, scattered transposed.
    quantize_row_q8_0(v, row, dim);
    auto* kq = reinterpret_cast<int8_t*>(base) + j;
    auto* ks = reinterpret_cast<uint16_t*>(base + f.key_bytes()) + j;
    BlockQ8_0 kb[kMaxQ8Blocks];
    quantize_row_q8_0(k, kb, dim);
    for (int32_t c = 0; c < dim / 32; ++c) {
        ks[size_t(c) * kBlockTokens] = kb[c].d;
        for (int i = 0; i < 32; ++i) kq[size_t(c * 32 + i) * kBlockTokens] = kb[c].qs[i];
    }
}

void KvCache::load(int32_t l, int32_t p, float* k, float* v) const {
    const uint8_t* base = k_block(l, p);
    const int32_t j = p % kBlockTokens;
    const uint8_t* row = this->v(l, p);
    const BlockFormat& f = format(l);
    const int32_t dim = f.dim;
    if (f.type == KvType::F16) {
        const auto* kt = reinterpret_cast<const uint16_t*>(base) + j;
        const auto* vr = reinterpret_cast<const uint16_t*>(row);
        for (int32_t d = 0; d < dim; ++d) {
            k[d] = fp16_to_fp32(kt[size_t(d) * kBlockTokens]);
            v[d] = fp16_to_fp32(vr[d]);
        }
        return;
    }
    dequantize_row(DType::Q8_0, row, v, dim);
    const auto* kq = reinterpret_cast<const int8_t*>(base) + j;
    const auto* ks = reinterpret_cast<const uint16_t*>(base + f.key_bytes()) + j;
    for (int32_t c = 0; c < dim / 32; ++c) {
        const float dk = fp16_to_fp32(ks[size_t(c) * kBlockTokens]);
        for (int i = 0; i < 32; ++i) k[c * 32 + i] = dk * kq[size_t(c * 32 + i) * kBlockTokens];
    }
}

void KvCache::commit(int32_t n) {
    if (n < 0 || size_ + n > static_cast<int32_t>(blocks_.size()) * kBlockTokens) throw std::logic_error("KvCache::commit past the reserved positions");
    size_ += n;
    let_go_of_window();
}

void KvCache::let_go_of_window() {
    const size_t keep = size_t(std::max(0, window_start(size_) - kWindowSlack) / kBlockTokens);
    if (!window_bytes_ || keep <= window_gone_) return;
    for (size_t b = window_gone_; b < keep; ++b) blocks_[b].window.reset();
    window_gone_ = keep;
}

int32_t KvCache::truncate(int32_t n) {
    if (n < 0 || n > size_) throw std::out_of_range("KvCache::truncate past the end");
    if (window_start(n) < int32_t(window_gone_) * kBlockTokens) n = 0;  // its window was let go
    if (state_ && n < size_) n = 0;                                      // the state holds every position
    if (state_ && n == 0) {
        if (state_.use_count() > 1) state_ = std::make_shared<State>(state_->floats(), ledger_);
        else state_->clear();
    }
    size_ = n;
    blocks_.resize(size_t((n + kBlockTokens - 1) / kBlockTokens));
    window_gone_ = std::min(window_gone_, blocks_.size());
    return n;
}

void KvCache::adopt(Blocks blocks) {
    if (size_ % kBlockTokens != 0 || size_ + kBlockTokens > capacity_ || state_)
        throw std::logic_error("KvCache::adopt past a partial block or the capacity, or into a recurrent cache");
    blocks_.resize(size_t(size_ / kBlockTokens));
    blocks_.push_back(std::move(blocks));
    size_ += kBlockTokens;
    let_go_of_window();
}

Snapshot KvCache::snapshot() const {
    if (!state_) throw std::logic_error("KvCache::snapshot of a cache without recurrent layers");
    Snapshot s{size_, state_, {}};
    if (size_ % kBlockTokens) s.partial = blocks_[size_t(size_ / kBlockTokens)];
    return s;
}

void KvCache::restore(std::vector<Blocks> full, const Snapshot& s) {
    if (size_ != 0 || !state_ || !s.state || s.state->floats() != state_->floats() || s.positions > capacity_ ||
        int32_t(full.size()) != s.positions / kBlockTokens)
        throw std::logic_error("KvCache::restore into a cache that is not empty, or of another shape");
    blocks_ = std::move(full);
    if (s.positions % kBlockTokens) blocks_.push_back(s.partial);
    size_ = s.positions;
    state_ = s.state;
}

void KvCache::replace(int32_t i, const Blocks& blocks) {
    if (i < 0 || i >= full_blocks()) throw std::out_of_range("KvCache::replace of a block that is not full");
    Blocks& mine = blocks_[size_t(i)];
    mine.full = blocks.full;
    if (mine.window && blocks.window) mine.window = blocks.window;
}

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'K', 'V'};
// Version 1: the header, then every layer's keys and values. Version 2 (written now): the
// attention layers' only (those keeping their own, each at its width), then the recurrent
// state (a uint64 count of floats, the floats); a version 1 file is a version 2 file of a
// model without recurrent layers, minus the count.
constexpr uint32_t kVersion = 2;

struct Header {
    char magic[8];
    uint32_t version;
    int32_t n_layer, dim, size;
    uint64_t model_id;
};

using FilePtr = std::unique_ptr<FILE, int (*)(FILE*)>;

}  // namespace

void KvCache::write(std::FILE* out, uint64_t model_id) const {
    const int32_t kept = window_start(size_);
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.n_layer = n_layer();
    h.dim = shape_.dim;
    h.size = size_;
    h.model_id = model_id;
    bool ok = std::fwrite(&h, sizeof h, 1, out) == 1;
    // Layer by layer (those keeping their own), all keys then all values, F16 rows of the
    // layer's width (the layout of version 1); a window layer's positions that were let go
    // are a hole in the file (zeros when read).
    for (int32_t l = 0; ok && l < n_layer(); ++l) {
        if (!has_kv(l)) continue;
        const int32_t from = sliding(l) ? kept : 0, dim = this->dim(l);
        std::vector<float> k(dim), v(dim);
        std::vector<uint16_t> k16(size_t(dim) * size_), v16(size_t(dim) * size_);
        const auto put = [&](const std::vector<uint16_t>& rows) {
            const size_t skip = size_t(from) * dim;
            return std::fseek(out, long(skip * sizeof(uint16_t)), SEEK_CUR) == 0 &&
                   std::fwrite(rows.data() + skip, sizeof(uint16_t), rows.size() - skip, out) == rows.size() - skip;
        };
        for (int32_t p = from; p < size_; ++p) {
            load(l, p, k.data(), v.data());
            for (int32_t d = 0; d < dim; ++d) {
                k16[size_t(p) * dim + d] = fp32_to_fp16(k[size_t(d)]);
                v16[size_t(p) * dim + d] = fp32_to_fp16(v[size_t(d)]);
            }
        }
        ok = put(k16) && put(v16);
    }
    const uint64_t floats = state_ ? state_->floats() : 0;
    ok = ok && std::fwrite(&floats, sizeof floats, 1, out) == 1 && (!state_ || std::fwrite(state_->data(), sizeof(float), floats, out) == floats);
    if (!ok) throw std::system_error(errno, std::generic_category(), "cannot write the KV cache");
}

std::optional<KvCache> KvCache::load(const std::string& path, uint64_t model_id, const Shape& shape, int32_t capacity,
                                     std::shared_ptr<Ledger> ledger, KvType type) {
    FilePtr f(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!f) return std::nullopt;
    Header h{};
    if (std::fread(&h, sizeof h, 1, f.get()) != 1 || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || (h.version != 1 && h.version != kVersion) ||
        h.model_id != model_id || h.n_layer != shape.n_layer || h.dim != shape.dim || h.size < 0 || h.size > capacity)
        return std::nullopt;
    KvCache c(shape, capacity, std::move(ledger), type);
    // Where each layer keeping its own starts in the file: its keys, then its values, each
    // h.size F16 rows of its width.
    std::vector<long> layer_at(size_t(shape.n_layer), 0);
    long state_at = long(sizeof h);
    for (int32_t l = 0; l < shape.n_layer; ++l) {
        layer_at[size_t(l)] = state_at;
        if (c.has_kv(l)) state_at += 2 * long(c.dim(l)) * long(sizeof(uint16_t)) * h.size;
    }
    const uint64_t floats = c.state_ ? c.state_->floats() : 0;
    const long state_bytes = h.version == 1 ? 0 : long(sizeof floats + floats * sizeof(float));
    if ((h.version == 1 && c.state_) || std::fseek(f.get(), 0, SEEK_END) != 0 || std::ftell(f.get()) != state_at + state_bytes)
        return std::nullopt;  // cut short, or trailing bytes: not our file
    const int32_t kept = c.window_start(h.size);
    int32_t widest = 0;
    for (int32_t l = 0; l < shape.n_layer; ++l) widest = std::max(widest, c.has_kv(l) ? c.dim(l) : 0);
    std::vector<uint16_t> k16(size_t(widest) * kBlockTokens), v16(size_t(widest) * kBlockTokens);
    std::vector<float> k(static_cast<size_t>(widest)), v(static_cast<size_t>(widest));
    // Block by block, so that the window layers never hold more than their window; each
    // layer's keys, then values, of the block's positions are one run in the file.
    for (int32_t p0 = 0; p0 < h.size; p0 += kBlockTokens) {
        const int32_t end = std::min(p0 + kBlockTokens, h.size);
        c.reserve_append(end - p0);
        for (int32_t l = 0; l < shape.n_layer; ++l) {
            if (!c.has_kv(l)) continue;
            const int32_t first = c.sliding(l) ? std::max(p0, kept) : p0, dim = c.dim(l);
            const long row = long(dim) * sizeof(uint16_t), at = layer_at[size_t(l)] + row * first;
            if (first >= end) continue;
            const size_t values = size_t(end - first) * dim;
            if (std::fseek(f.get(), at, SEEK_SET) != 0 || std::fread(k16.data(), sizeof(uint16_t), values, f.get()) != values ||
                std::fseek(f.get(), at + row * h.size, SEEK_SET) != 0 || std::fread(v16.data(), sizeof(uint16_t), values, f.get()) != values)
                return std::nullopt;
            for (int32_t p = first; p < end; ++p) {
                const size_t r = size_t(p - first) * dim;
                for (int32_t d = 0; d < dim; ++d) {
                    k[size_t(d)] = fp16_to_fp32(k16[r + size_t(d)]);
                    v[size_t(d)] = fp16_to_fp32(v16[r + size_t(d)]);
                }
                c.store(l, p, k.data(), v.data());
            }
        }
        c.commit(end - p0);
    }
    uint64_t count = 0;
    if (c.state_ && (std::fseek(f.get(), state_at, SEEK_SET) != 0 || std::fread(&count, sizeof count, 1, f.get()) != 1 || count != floats ||
                     std::fread(c.state_->data(), sizeof(float), floats, f.get()) != floats))
        return std::nullopt;
    return c;
}

}  // namespace strata::kv
