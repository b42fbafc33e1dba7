// weights/experts.cpp — the expert cache: hits served from memory, misses read together.
#include "weights/experts.h"

#include <stdexcept>
#include <string>

#include "weights/ranges.h"

namespace strata::weights {
namespace {

// Tags of expert reads: above the ring's read numbers and below the resident loads' tags.
constexpr uint64_t kExpertTags = uint64_t(1) << 62;

}  // namespace

ExpertCache::ExpertCache(const Layout& layout, AsyncReader& reader, int slots, uint64_t slot_bytes, uint32_t alignment, ExpertPolicy policy)
    : layout_(layout), reader_(reader), alignment_(alignment), slot_bytes_(slot_bytes),
      buffer_(uint64_t(slots) * slot_bytes), slots_(static_cast<size_t>(slots)) {
    if (policy == ExpertPolicy::Lfu) uses_.assign(layout.expert_tensors.size() * size_t(layout.n_expert), 0);
    held_.assign(layout.expert_tensors.size(), 0);
    int moe_layers = 0;
    for (const auto& e : layout.expert_tensors) moe_layers += e.empty() ? 0 : 1;
    const bool holds_all = slots >= moe_layers * layout.n_expert;  // nothing is ever replaced
    if (policy == ExpertPolicy::Lru && moe_layers > 0 && !holds_all) share_ = (slots - layout.n_expert_used) / moe_layers;
    transient_ = share_ > 0 ? slots - layout.n_expert_used : slots;
}

void ExpertCache::count(int64_t key) {
    if (uses_.empty()) return;
    ++uses_[size_t(key)];
    if (++requests_ % uses_.size() == 0)
        for (auto& u : uses_) u /= 2;
}

bool ExpertCache::older(const Slot& a, const Slot& b) const {
    if (a.key < 0 || b.key < 0) return a.key < b.key;  // an empty slot first
    if (!uses_.empty() && uses_[size_t(a.key)] != uses_[size_t(b.key)]) return uses_[size_t(a.key)] < uses_[size_t(b.key)];
    return a.used < b.used;
}

// Lru: every layer has an equal share of the slots but n_expert_used. An empty slot goes
// first; then a layer below its share takes the least recently used slot of a layer above
// its share, and a layer at its share replaces its own least recently used; an expert
// that finds none of those (its layer's slots all hold this call's experts) is read into
// one of the n_expert_used transient slots, which cache nothing. (One global order would
// fail a cache smaller than a token's experts: layers come in a cycle, and the least
// recently used expert is always the next one needed.)
int ExpertCache::claim(uint64_t call, int layer) {
    int best = -1;
    auto pick = [&](auto&& allowed) {
        for (size_t i = 0; i < slots_.size(); ++i)
            if (slots_[i].used != call && allowed(slots_[i]) && (best < 0 || older(slots_[i], slots_[size_t(best)]))) best = static_cast<int>(i);
    };
    if (share_ > 0) {
        const bool full = held_[size_t(layer)] >= share_;
        const Slot* first_transient = slots_.data() + transient_;
        pick([&](const Slot& s) {
            return &s < first_transient && (s.key < 0 || (full ? layer_of(s) == layer : held_[size_t(layer_of(s))] > share_));
        });
        if (best < 0) pick([&](const Slot& s) { return &s >= first_transient; });
    }
    if (best < 0) pick([](const Slot&) { return true; });
    if (best < 0) throw std::logic_error("expert cache: more experts in one call than slots");
    if (best >= transient_) return best;  // caches nothing
    forget(best);
    ++held_[size_t(layer)];
    return best;
}

void ExpertCache::forget(int slot) {
    Slot& s = slots_[size_t(slot)];
    if (s.key < 0) return;
    where_.erase(s.key);
    --held_[size_t(layer_of(s))];
    s = {};
}

std::span<const uint8_t* const> ExpertCache::get(int layer, std::span<const int32_t> ids) {
    const uint64_t call = ++calls_;
    const size_t n = layout_.expert_tensors[size_t(layer)].size();
    result_.assign(ids.size() * n, nullptr);
    struct Read {
        size_t index;  // in ids
        int slot;
        ExpertRanges ranges;
    };
    std::vector<Read> reads;
    for (size_t i = 0; i < ids.size(); ++i) {
        const int64_t key = int64_t(layer) * layout_.n_expert + ids[i];
        count(key);
        const auto it = where_.find(key);
        const bool cached = it != where_.end();
        const int slot = cached ? it->second : claim(call, layer);
        if (cached && slots_[size_t(slot)].used != call) ++hits_;
        if (!cached) {
            ++misses_;
            if (slot < transient_) {
                where_[key] = slot;
                slots_[size_t(slot)].key = key;
            }
        }
        slots_[size_t(slot)].used = call;
        ExpertRanges r = expert_ranges(layout_, size_t(layer), ids[i], alignment_);
        for (size_t j = 0; j < n; ++j) result_[i * n + j] = slot_data(slot) + r.offset[j];
        if (!cached) reads.push_back({i, slot, std::move(r)});
    }
    for (const Read& read : reads) {
        reader_.read(kExpertTags + uint64_t(read.slot), read.ranges.ranges, slot_data(read.slot));
        bytes_read_ += read.ranges.bytes;
    }
    std::string error;
    int failed = -1;
    for (const Read& read : reads)
        if (std::string e = reader_.wait(kExpertTags + uint64_t(read.slot)); !e.empty() && error.empty()) {
            error = e;
            failed = ids[read.index];
        }
    if (!error.empty()) {
        for (const Read& read : reads) forget(read.slot);  // none of this call's reads is trusted
        throw std::runtime_error("streaming expert " + std::to_string(failed) + " of layer " + std::to_string(layer) + ": " + error);
    }
    return result_;
}

std::span<const uint8_t* const> WeightSource::experts(int, std::span<const int32_t>) {
    throw std::logic_error("this weight source holds every expert in memory (experts_on_demand() is false)");
}

}  // namespace strata::weights
