// engine/memory.h — the engine's memory: resolving the budget, reserving KV caches,
// working memory and the draft model (model.draft) beside the weights, planning the weights (resident or streamed) and
// building the weight source the model reads through; also the batch size that suits the
// plan (streaming prefers larger passes: each pass reads the streamed weights once), and
// the plan for a budget that changes while serving (replan). Must not touch: scheduling,
// sessions, when the budget changes (rebudget.cpp).
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

    // The setup for a new budget with the batch size kept: the same weights plan while it
    // still fits beside one full context of KV (only the KV budget follows the budget),
    // else the plan a start with that budget would have made (memory.mode = resident keeps
    // every layer resident whatever the budget). Call after the model is loaded.
    MemorySetup replan(const weights::Budget& budget) const;
    // A factory building the weight source of `plan` (for Model::replace_weights).
    model::WeightFactory factory_for(const weights::Plan& plan) const;
    void commit(MemorySetup setup) { setup_ = std::move(setup); }

private:
    weights::Reserve reserve(int32_t batch_tokens) const;
    weights::Plan plan_for(const weights::Layout& layout, uint64_t budget, int32_t batch) const;
    uint64_t kv_budget_for(const weights::Plan& plan, uint64_t budget) const;
    std::unique_ptr<weights::WeightSource> load(std::shared_ptr<const gguf::File> file, weights::Layout layout,
                                                const weights::Plan& plan) const;

    const Config& config_;
    model::HParams hp_;
    int32_t context_;
    int threads_;
    uint64_t draft_bytes_;  // the draft model (model.draft), held beside the weights: its file, mapped whole
    MemorySetup setup_;
    weights::Layout layout_;  // the model's, kept by factory() for replan()
};

}  // namespace strata::engine
