// weights/planner.cpp — choosing what stays in memory.
#include "weights/planner.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "weights/ranges.h"

namespace strata::weights {
namespace {

constexpr int kMaxSlots = 4;

std::string gib(uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / double(1ull << 30));
    return buf;
}

uint64_t sum(const std::vector<uint64_t>& v, size_t from, size_t to) {
    uint64_t s = 0;
    for (size_t i = from; i < to; ++i) s += v[i];
    return s;
}

// `k` of the `n` blocks, spread evenly: block i is resident when it is the first block of
// its share (so streamed runs between resident blocks differ by at most one).
std::vector<bool> spread(size_t n, size_t k) {
    std::vector<bool> r(n, false);
    for (size_t j = 0; j < k; ++j) r[(j * n) / k] = true;
    return r;
}

// A streamed plan with the head resident or not; nullopt when it cannot fit.
struct Candidate {
    std::vector<bool> resident;
    uint64_t resident_bytes = 0, streamed_bytes = 0, slot = 0;
    int slots = 2;
};

std::optional<Candidate> candidate(const std::vector<uint64_t>& bytes, uint64_t avail, bool head_resident) {
    const size_t blocks = bytes.size() - 1;
    const uint64_t head = bytes.back();
    const uint64_t block_max = blocks ? *std::max_element(bytes.begin(), bytes.end() - 1) : 0;
    Candidate c;
    c.slot = head_resident ? block_max : std::max(block_max, head);
    const uint64_t fixed = 2 * c.slot + (head_resident ? head : 0);
    if (fixed > avail) return std::nullopt;
    // Keep as many blocks as fit; blocks of a mixed-type model differ a little in size,
    // so count with the largest and then check the real sum.
    size_t k = block_max ? std::min<size_t>(blocks, (avail - fixed) / block_max) : blocks;
    for (;; --k) {
        c.resident = spread(blocks, k);
        c.resident.push_back(head_resident);
        c.resident_bytes = 0;
        for (size_t i = 0; i < bytes.size(); ++i)
            if (c.resident[i]) c.resident_bytes += bytes[i];
        if (c.resident_bytes + 2 * c.slot <= avail || k == 0) break;
    }
    if (c.resident_bytes + 2 * c.slot > avail) return std::nullopt;
    c.streamed_bytes = sum(bytes, 0, bytes.size()) - c.resident_bytes;
    // The memory left over from whole-layer residency buys deeper prefetch.
    while (c.slots < kMaxSlots && c.resident_bytes + uint64_t(c.slots + 1) * c.slot <= avail) ++c.slots;
    if (c.streamed_bytes == 0) c.slots = 0;
    return c;
}

}  // namespace

const char* mode_name(Mode m) {
    switch (m) {
        case Mode::Auto: return "auto";
        case Mode::Resident: return "resident";
        case Mode::Streamed: return "streamed";
    }
    return "auto";
}

Mode mode_from_name(const std::string& name) {
    for (Mode m : {Mode::Auto, Mode::Resident, Mode::Streamed})
        if (name == mode_name(m)) return m;
    throw std::invalid_argument("memory mode '" + name + "' is not auto, resident or streamed");
}

double Plan::pass_bound(double read_bytes_per_s) const { return streamed_bytes ? read_bytes_per_s / double(streamed_bytes) : 0; }

std::string Plan::summary() const {
    std::ostringstream o;
    o << mode_name(mode) << ": budget " << gib(budget) << ", weights in memory " << gib(resident_bytes);
    if (mode == Mode::Streamed) o << ", streamed " << gib(streamed_bytes) << " per pass through " << ring_slots << " buffers of " << gib(slot_bytes);
    if (experts_on_demand) o << ", experts read on demand into a cache of " << expert_slots << " x " << gib(expert_slot_bytes);
    o << ", KV " << gib(reserve.kv);
    if (!fits) o << " (does not fit the budget)";
    return o.str();
}

std::string Plan::describe(double read_bytes_per_s) const {
    std::ostringstream o;
    o << "memory plan: " << mode_name(mode) << (fits ? "" : " (DOES NOT FIT the budget)") << "\n"
      << "  budget                " << gib(budget) << "\n"
      << "  weights in memory     " << gib(resident_bytes) << "\n"
      << "  streaming ring        " << gib(ring_bytes) << " (" << ring_slots << " x " << gib(slot_bytes) << ")\n"
      << (experts_on_demand ? "  expert cache          " + gib(expert_cache_bytes()) + " (" + std::to_string(expert_slots) + " x " + gib(expert_slot_bytes) + ")\n" : "")
      << "  KV caches             " << gib(reserve.kv) << "\n"
      << "  working memory        " << gib(reserve.working) << "\n"
      << "  process overhead      " << gib(reserve.overhead) << "\n"
      << "  total                 " << gib(total()) << "\n";
    if (on_demand_bytes > 0) o << "  read on demand        " << gib(on_demand_bytes) << " never in memory (tables whose rows are read as tokens need them)\n";
    if (mode == Mode::Streamed) {
        std::string kept, streamed;
        for (size_t i = 0; i < resident.size(); ++i) {
            std::string& list = resident[i] ? kept : streamed;
            if (!list.empty()) list += ' ';
            list += i + 1 == resident.size() ? "head" : std::to_string(i);
        }
        o << "  layers in memory      " << (kept.empty() ? "none" : kept) << "\n"
          << "  layers streamed       " << (streamed.empty() ? "none" : streamed) << "\n"
          << "  read per pass         " << gib(streamed_bytes) << "\n";
        if (experts_on_demand) o << "  experts per token     up to " << gib(expert_bytes_per_token) << " read (an empty cache)\n";
        if (read_bytes_per_s > 0) {
            char buf[128];
            std::snprintf(buf, sizeof buf, "  bound                 %.3f passes/s at %.0f MB/s (each pass: one token of every session in the batch)\n",
                          pass_bound(read_bytes_per_s), read_bytes_per_s / 1e6);
            o << buf;
        }
    }
    return o.str();
}

namespace {

// Expert slots a streamed mixture-of-experts plan needs at least: two tokens' worth of one layer.
int min_expert_slots(const Layout& layout) { return layout.has_experts() ? 2 * layout.n_expert_used : 0; }

// The memory left after the layers' plan becomes the expert cache (never more slots than
// there are experts).
void plan_expert_cache(const Layout& layout, uint64_t slot_bytes, uint64_t avail, Plan& p) {
    p.experts_on_demand = true;
    p.expert_slot_bytes = slot_bytes;
    // The cache is the one part of a plan that grows to fill the budget: it leaves a
    // sixteenth of it free, so that what the reserves only estimate (heap, stacks, the
    // page cache of the file's metadata) cannot push the process over a cgroup limit.
    const uint64_t used = p.resident_bytes + p.ring_bytes + p.budget / 16;
    const uint64_t left = avail > used ? avail - used : 0;
    uint64_t experts = 0;
    for (const auto& e : layout.expert_tensors) experts += e.empty() ? 0 : uint64_t(layout.n_expert);
    p.expert_slots = static_cast<int>(std::min(std::max<uint64_t>(left / p.expert_slot_bytes, uint64_t(min_expert_slots(layout))), experts));
    for (const auto& e : layout.expert_tensors)
        if (!e.empty()) p.expert_bytes_per_token += uint64_t(layout.n_expert_used) * p.expert_slot_bytes;
    if (p.total() > p.budget) p.fits = false;
}

}  // namespace

Plan make_plan(const Layout& layout, const PlanRequest& req) {
    Plan p;
    p.budget = req.budget;
    p.reserve = req.reserve;
    for (const auto* t : layout.row_tables) p.on_demand_bytes += t->nbytes;
    uint64_t all = 0;
    for (const auto& l : layout.layers)
        for (const auto* t : l) all += t->nbytes;
    if (layout.embeddings) all += layout.embeddings->nbytes;
    for (const auto* t : layout.globals) all += t->nbytes;
    const uint64_t reserved = req.reserve.kv + req.reserve.working + req.reserve.overhead;
    const bool resident_fits = all + reserved <= req.budget;
    if (req.mode == Mode::Resident || (req.mode == Mode::Auto && resident_fits)) {
        p.mode = Mode::Resident;
        p.resident.assign(layout.layers.size(), true);
        p.resident_bytes = all;
        p.fits = resident_fits;
        return p;
    }
    p.mode = Mode::Streamed;
    for (size_t l = 0; l < layout.layers.size(); ++l) p.layer_bytes.push_back(pass_ranges(layout, l, layout.has_experts(), req.io_alignment).bytes);
    uint64_t globals = 0;
    for (const auto* t : layout.globals) globals += t->nbytes;
    const uint64_t avail = req.budget > reserved + globals ? req.budget - reserved - globals : 0;
    const uint64_t slot_bytes = expert_slot_bytes(layout, req.io_alignment);
    const uint64_t min_cache = uint64_t(min_expert_slots(layout)) * slot_bytes;
    const uint64_t layers_avail = avail > min_cache ? avail - min_cache : 0;
    std::optional<Candidate> best;
    for (bool head : {true, false})
        if (auto c = candidate(p.layer_bytes, layers_avail, head); c && (!best || c->streamed_bytes < best->streamed_bytes)) best = std::move(c);
    if (!best) {  // nothing fits: stream everything through the smallest possible ring
        best = Candidate{};
        best->resident.assign(p.layer_bytes.size(), false);
        best->slot = *std::max_element(p.layer_bytes.begin(), p.layer_bytes.end());
        best->streamed_bytes = sum(p.layer_bytes, 0, p.layer_bytes.size());
        p.fits = false;
    }
    p.resident = best->resident;
    p.resident_bytes = best->resident_bytes + globals;
    p.streamed_bytes = best->streamed_bytes;
    p.ring_slots = best->slots;
    p.slot_bytes = best->slots ? best->slot : 0;
    p.ring_bytes = uint64_t(p.ring_slots) * p.slot_bytes;
    // With every layer in memory, the streamer keeps a copy of the embedding table too.
    if (p.streamed_bytes == 0 && layout.embeddings) p.resident_bytes += layout.embeddings->nbytes;
    if (p.total() > p.budget) p.fits = false;
    if (layout.has_experts()) plan_expert_cache(layout, slot_bytes, avail + globals, p);
    return p;
}

}  // namespace strata::weights
