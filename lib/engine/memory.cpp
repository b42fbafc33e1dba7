// engine/memory.cpp — planning the engine's memory.
#include "engine/memory.h"

#include <filesystem>
#include <stdexcept>

#include "weights/streamed.h"

namespace strata::engine {
namespace {

constexpr int32_t kResidentBatch = 512;
constexpr int32_t kStreamedBatch = 2048;
constexpr uint64_t kOverhead = 128ull << 20;  // code, heap slack, vocabulary, I/O structures

std::string gib(uint64_t b) { return std::to_string(b / double(1ull << 30)).substr(0, 5) + " GiB"; }

}  // namespace

MemoryPlanner::MemoryPlanner(const Config& config, const model::HParams& hp, int32_t context, int threads)
    : config_(config), hp_(hp), context_(context), threads_(threads),
      draft_bytes_(config.draft_path.empty() ? 0 : std::filesystem::file_size(config.draft_path)) {
    setup_.budget = weights::resolve_budget(config.memory.budget);
}

weights::Reserve MemoryPlanner::reserve(int32_t batch_tokens) const {
    // One full context, as a cache holds it during a pass (sliding-window layers: their window).
    const kv::KvCache context(model::kv_shape(hp_), context_, nullptr, config_.memory.kv_type);
    return {.kv = config_.memory.kv_bytes ? config_.memory.kv_bytes : context.bytes_for(context_, batch_tokens),
            .working = model::working_memory_bytes(hp_, batch_tokens, std::min(batch_tokens, 256), threads_),
            .overhead = kOverhead + draft_bytes_};
}

weights::Plan MemoryPlanner::plan_for(const weights::Layout& layout, uint64_t budget, int32_t batch) const {
    return weights::make_plan(layout, {.budget = budget, .reserve = reserve(batch), .mode = weights::mode_from_name(config_.memory.mode)});
}

// memory.kv_budget, or what the budget leaves beside the plan's weights and working memory:
// at least one full context, but for a streamed plan that does not fit only what is left (so that a request
// whose KV would not fit fails naming the budget).
uint64_t MemoryPlanner::kv_budget_for(const weights::Plan& plan, uint64_t budget) const {
    const uint64_t others = plan.total() - plan.reserve.kv;
    const uint64_t left = budget > others ? budget - others : 0;
    if (!plan.fits && plan.mode == weights::Mode::Streamed) return std::min(left, config_.memory.kv_bytes ? config_.memory.kv_bytes : left);
    return config_.memory.kv_bytes ? config_.memory.kv_bytes : std::max(plan.reserve.kv, left);
}

std::unique_ptr<weights::WeightSource> MemoryPlanner::load(std::shared_ptr<const gguf::File> file, weights::Layout layout,
                                                           const weights::Plan& plan) const {
    weights::StreamOptions opt = config_.memory.stream;
    opt.lock = config_.memory.lock;
    return weights::load_weights(std::move(file), std::move(layout), plan, opt);
}

model::WeightFactory MemoryPlanner::factory(bool plan_only) {
    return [this, plan_only](std::shared_ptr<const gguf::File> file, weights::Layout layout) -> std::unique_ptr<weights::WeightSource> {
        const int32_t asked = config_.batch_tokens;
        int32_t batch = asked > 0 ? asked : kResidentBatch;
        weights::Plan plan = plan_for(layout, setup_.budget.bytes, batch);
        if (plan.mode == weights::Mode::Streamed && asked <= 0) {
            if (weights::Plan larger = plan_for(layout, setup_.budget.bytes, kStreamedBatch); larger.fits) {
                plan = std::move(larger);
                batch = kStreamedBatch;
            }
        }
        if (!plan.fits && plan.mode == weights::Mode::Streamed)
            throw std::runtime_error("the model cannot run within the memory budget of " + gib(setup_.budget.bytes) + " (" + setup_.budget.source +
                                     "): streaming needs two buffers of " + gib(plan.slot_bytes) + " plus " +
                                     gib(plan.reserve.kv + plan.reserve.working + plan.reserve.overhead) +
                                     " for KV caches and working memory; raise memory.budget, or lower engine.context or memory.kv_budget");
        setup_.plan = plan;
        setup_.batch_tokens = batch;
        setup_.kv_budget = kv_budget_for(plan, setup_.budget.bytes);
        layout_ = layout;
        if (plan_only || file->fd() < 0) return weights::make_mapped(std::move(file), std::move(layout));
        return load(std::move(file), std::move(layout), plan);
    };
}

MemorySetup MemoryPlanner::replan(const weights::Budget& budget) const {
    MemorySetup next = setup_;
    next.budget = budget;
    if (next.plan.total() > budget.bytes) {
        next.plan = plan_for(layout_, budget.bytes, setup_.batch_tokens);
    } else if (weights::Plan grown = plan_for(layout_, budget.bytes, setup_.batch_tokens); grown.resident_bytes > next.plan.resident_bytes) {
        next.plan = std::move(grown);
    }
    next.kv_budget = kv_budget_for(next.plan, budget.bytes);
    return next;
}

model::WeightFactory MemoryPlanner::factory_for(const weights::Plan& plan) const {
    return [this, plan](std::shared_ptr<const gguf::File> file, weights::Layout layout) { return load(std::move(file), std::move(layout), plan); };
}

}  // namespace strata::engine
