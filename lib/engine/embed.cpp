// engine/embed.cpp — embeddings requests on the engine thread: tokenizing and bounding their
// inputs, running each input as a prompt of its own (a fresh cache, no prefix reuse: every
// token's hidden state is needed; whole in one pass for a model without causal attention),
// pooling the hidden states after the final norm (mean,
// first token, last token: the file's pooling_type, else Config::pooling) and L2-normalising,
// as llama.cpp's embeddings with llama-server's default normalisation.
// Must not touch: architecture names, JSON (the daemon shapes the answer).
#include <cmath>

#include "engine/engine_impl.h"

namespace strata::engine {

void Engine::Impl::prepare_embed(Active& a) {
    const auto& hp = model->hparams();
    int32_t limit;
    {
        std::lock_guard lk(mu);
        limit = std::min(limits.max_prompt_tokens, context);
    }
    // Without causal attention an input runs whole in one pass.
    if (!hp.causal) limit = std::min(limit, batch_tokens);
    const auto& inputs = a.p.req.embed;
    int32_t longest = 0, total = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto* text = std::get_if<std::string>(&inputs[i]);
        auto tokens = text ? tokenizer->encode(*text, true, true) : std::get<std::vector<int32_t>>(inputs[i]);
        const std::string field = "input[" + std::to_string(i) + "]";
        if (tokens.empty()) throw EngineError(Errc::InvalidParams, field + " has no tokens", field);
        const auto n = static_cast<int32_t>(tokens.size());
        if (n > limit)
            throw EngineError(Errc::InvalidParams,
                              field + " has " + std::to_string(n) + " tokens; the limit is " + std::to_string(limit) +
                                  (hp.causal ? " (the smaller of limits.max_prompt_tokens and the context)"
                                             : " (the smallest of limits.max_prompt_tokens, the context and engine.batch_tokens: "
                                               "this model's attention is not causal, so an input runs in one pass)"),
                              field);
        longest = std::max(longest, n);
        total += n;
        a.embed_inputs.push_back(std::move(tokens));
    }
    a.pooling = hp.pooling != model::Pooling::None ? hp.pooling : config.pooling;
    auto cache = std::make_unique<kv::KvCache>(model->new_cache(longest, kv_ledger, config.memory.kv_type));
    {
        std::lock_guard lk(mu);
        a.session->cache = std::move(cache);
    }
    a.usage.prompt_tokens = total;
    start_embed_input(a);
}

// The next input becomes the prompt, on an empty cache.
void Engine::Impl::start_embed_input(Active& a) {
    a.prompt = a.embed_inputs[a.embed_index];
    a.fed = 0;
    a.session->cache->truncate(0);
    a.pooled.assign(static_cast<size_t>(model->hparams().n_embd), 0.0f);
}

// Folds the hidden states of the next `n` tokens of the running input into its pool; after
// its last token, stores the normalised embedding and starts the next input, or finishes.
void Engine::Impl::pool_hidden(Active& a, const float* rows, size_t n) {
    const size_t E = a.pooled.size(), size = a.prompt.size();
    for (size_t j = 0; j < n; ++j) {
        const size_t pos = a.fed + j;
        const float* row = rows + j * E;
        const bool take = a.pooling == model::Pooling::Mean || (a.pooling == model::Pooling::Cls && pos == 0) ||
                          (a.pooling == model::Pooling::Last && pos + 1 == size);
        if (take)
            for (size_t e = 0; e < E; ++e) a.pooled[e] += row[e];
    }
    a.fed += n;
    if (a.fed < size) return;
    if (a.pooling == model::Pooling::Mean)
        for (float& v : a.pooled) v /= static_cast<float>(size);
    double sum = 0;
    for (const float v : a.pooled) sum += double(v) * v;
    const double scale = sum > 0 ? 1.0 / std::sqrt(sum) : 0.0;
    for (float& v : a.pooled) v = static_cast<float>(v * scale);
    a.embeddings.push_back(std::move(a.pooled));
    if (++a.embed_index < a.embed_inputs.size()) return start_embed_input(a);
    finish(a, "stop");
}

}  // namespace strata::engine
