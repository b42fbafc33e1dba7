// engine/memory.cpp — planning the engine's memory.
#include "engine/memory.h"

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
    : config_(config), hp_(hp), context_(context), threads_(threads) {
    setup_.budget = weights::resolve_budget(config.memory.budget);
}

weights::Reserve MemoryPlanner::reserve(int32_t batch_tokens) const {
    // One full context, as a cache holds it during a pass (sliding-window layers: their window).
    const kv::KvCache context(model::kv_shape(hp_), context_, nullptr, config_.memory.kv_type);
    return {.kv = config_.memory.kv_bytes ? config_.memory.kv_bytes : context.bytes_for(context_, batch_tokens),
            .working = model::working_memory_bytes(hp_, batch_tokens, std::min(batch_tokens, 256), threads_),
            .overhead = kOverhead};
}

model::WeightFactory MemoryPlanner::factory(bool plan_only) {
    return [this, plan_only](std::shared_ptr<const gguf::File> file, weights::Layout layout) -> std::unique_ptr<weights::WeightSource> {
        const weights::Mode mode = weights::mode_from_name(config_.memory.mode);
        const int32_t asked = config_.batch_tokens;
        auto plan_for = [&](int32_t batch) {
            return weights::make_plan(layout, {.budget = setup_.budget.bytes, .reserve = reserve(batch), .mode = mode});
        };
        int32_t batch = asked > 0 ? asked : kResidentBatch;
        weights::Plan plan = plan_for(batch);
        if (plan.mode == weights::Mode::Streamed && asked <= 0) {
            if (weights::Plan larger = plan_for(kStreamedBatch); larger.fits) {
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
        const uint64_t others = plan.total() - plan.reserve.kv;
        setup_.kv_budget = config_.memory.kv_bytes ? config_.memory.kv_bytes
                                                   : std::max(plan.reserve.kv, setup_.budget.bytes > others ? setup_.budget.bytes - others : 0);
        if (plan_only || file->fd() < 0) return weights::make_mapped(std::move(file), std::move(layout));
        weights::StreamOptions opt = config_.memory.stream;
        opt.lock = config_.memory.lock;
        return weights::load_weights(std::move(file), std::move(layout), plan, opt);
    };
}

}  // namespace strata::engine
