// model/model.h — a loaded model and its batched forward pass.
// Owns: binding GGUF tensors to the layers of an architecture (names, shapes, types
// checked at load), the compute threads, and forward(): one call evaluates several
// sequences with one or more new tokens each (prompt chunks and decode steps go
// through the same code), appending to each sequence's KV cache and returning logits.
// Weights are reached only through weights::WeightSource. Must not touch: tokenizing,
// sampling, scheduling (engine/), sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "gguf/gguf.h"
#include "kv/kv_cache.h"
#include "model/hparams.h"
#include "weights/weights.h"

namespace strata::model {

using WeightFactory =
    std::function<std::unique_ptr<weights::WeightSource>(std::shared_ptr<const gguf::File>, weights::Layout)>;

struct Options {
    int n_threads = 0;                 // 0: one per physical core
    int32_t max_batch_tokens = 512;    // working memory is sized for this many tokens per pass
    WeightFactory weights;             // default: resident (mmap)
};

// Which logits a sequence of a batch wants back.
enum class Logits { None, Last, All };

// One sequence's part of a batch: its cache (new tokens go at positions
// cache->size() onwards) and which logits it wants (a prompt chunk that does not end
// the prompt wants none, which skips the output layer for it).
struct SequenceBatch {
    kv::KvCache* cache = nullptr;
    std::span<const int32_t> tokens;
    Logits logits = Logits::Last;
    bool hidden = false;  // also return every new token's final hidden state (after the output norm)
};

// The layers a KV cache of this model holds, and which of them keep only the sliding window.
kv::Shape kv_shape(const HParams& hp);

class Model {
public:
    // Throws std::runtime_error (or gguf::GgufError) naming what is wrong with the file.
    static std::unique_ptr<Model> load(std::shared_ptr<const gguf::File> file, Options options = {});
    ~Model();

    const HParams& hparams() const;
    const gguf::File& file() const;
    std::shared_ptr<const gguf::File> file_ptr() const;
    int n_threads() const;
    // Tokens per pass: larger batches are split into passes of at most this many.
    void set_max_batch_tokens(int32_t n);
    // What the weight source has done (reads, stalls) so far (mode "none" while
    // replace_weights builds the next one).
    weights::Stats weight_stats() const;
    // Between forward passes (on the thread that runs them): drops the weight source, then
    // builds the next with `factory` (a memory plan for a new budget). The old source's
    // memory is given back before the new one takes any. A factory that throws leaves the
    // model without weights until a later replace_weights succeeds (forward() then throws).
    void replace_weights(const WeightFactory& factory);
    // The same with a source built ahead (in the background): swapped in at once.
    void replace_weights(std::unique_ptr<weights::WeightSource> source);
    // The source a factory builds for this model's layout (any thread; for replace_weights).
    std::unique_ptr<weights::WeightSource> build_weights(const WeightFactory& factory) const;
    // Layers computed so far, all passes together: it grows while a pass makes progress
    // (any thread may ask).
    uint64_t layers_done() const;

    // A cache for one sequence of at most `capacity` tokens (clamped to the trained context),
    // its blocks counted in `ledger` (a private one when null), keys and values stored as
    // `type` (Q8_0 needs a head size that is a multiple of 32: std::invalid_argument).
    kv::KvCache new_cache(int32_t capacity, std::shared_ptr<kv::Ledger> ledger = nullptr, kv::KvType type = kv::KvType::F16) const;
    kv::Shape kv_shape() const { return model::kv_shape(hparams()); }

    // Evaluates the batch. `logits` receives, in batch order, one row of n_vocab floats
    // per new token of sequences asking for All, one row (the last token's) for Last, and
    // none for None. `hidden` (when given) receives, in batch order, one row of n_embd floats
    // per new token of sequences asking for their hidden states: the last layer's output after
    // the final norm (what llama.cpp pools into embeddings). Each cache grows by its token
    // count. On an exception (bad token id, context full, weight read error) no cache has changed,
    // but a recurrent one (whose state a failed pass may have written) empties.
    void forward(std::span<const SequenceBatch> batch, std::vector<float>& logits, std::vector<float>* hidden = nullptr);

    // A reranker's (pooling_type rank) scores of one pooled hidden state (n_embd floats: the
    // state of the token HParams::rank names) through its classification head (RankHead); the
    // first is the relevance score. Throws std::logic_error for a model that is not a reranker.
    std::vector<float> classify(std::span<const float> pooled) const;

    struct Impl;

private:
    explicit Model(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Physical cores of this machine (the default thread count).
int physical_cores();

// Bytes of working memory a forward pass of `batch_tokens` tokens needs (activations,
// converted activations, attention states, which do not grow with the context) plus
// `logit_rows` rows of logits; for the memory budget.
uint64_t working_memory_bytes(const HParams& hp, int32_t batch_tokens, int32_t logit_rows, int threads);

}  // namespace strata::model
