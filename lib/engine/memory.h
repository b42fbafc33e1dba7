// engine/memory.h — the engine's memory: resolving the budget, reserving KV caches and
// working memory beside the weights, planning the weights (resident or streamed) and
// building the weight source the model reads through; also the batch size that suits the
// plan (streaming prefers larger passes: each pass reads the streamed weights once).
// Must not touch: scheduling, sessions.
#pragma once

#include <memory>
#include <string>

#include "engine/config.h"
#include "model/hparams.h"
#include "model/model.h"
#include "weights/budget.h"
#include "weights/planner.h"

namespace strata::engine {

struct MemorySetup {
    weights::Budget budget;
    weights::Plan plan;          // filled when the model is loaded (by the weight factory)
    int32_t batch_tokens = 0;    // chosen with the plan
    uint64_t kv_budget = 0;      // KV the engine may keep in memory: memory.kv_budget, or (auto) what the budget leaves
};

class MemoryPlanner {
public:
    MemoryPlanner(const Config& config, const model::HParams& hp, int32_t context, int threads);
    // The factory Model::load calls with the model's layout: plans, then builds the source
    // (with plan_only, a resident source that reads nothing: for showing the plan).
    // Throws std::runtime_error when the model cannot run within the budget at all.
    model::WeightFactory factory(bool plan_only = false);
    const MemorySetup& setup() const { return setup_; }

private:
    weights::Reserve reserve(int32_t batch_tokens) const;

    const Config& config_;
    model::HParams hp_;
    int32_t context_;
    int threads_;
    MemorySetup setup_;
};

}  // namespace strata::engine
