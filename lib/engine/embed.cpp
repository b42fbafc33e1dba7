// engine/embed.cpp — embeddings requests on the engine thread: tokenizing and bounding their
// inputs, running each input as a prompt of its own (a fresh cache, no prefix reuse: every
// token's hidden state is needed; whole in one pass for a model without causal attention),
// pooling the hidden states after the final norm (mean,
// first token, last token: the file's pooling_type, else Config::pooling) and L2-normalising,
// as llama.cpp's embeddings with llama-server's default normalisation; a reranker's
// query/document pairs pooled as its RankHead says and scored by its classification head.
// Must not touch: architecture names, JSON (the daemon shapes the answer).
#include <cmath>

#include "tokenizer/layouts.h"

#include "engine/engine_impl.h"

namespace strata::engine {

// An input's tokens: text as a prompt, ids as they are, a query/document pair as the file's
// rerank template or llama.cpp's server lays it out.
std::vector<int32_t> Engine::Impl::input_tokens(const EmbedInput& input) const {
    if (const auto* text = std::get_if<std::string>(&input)) return tokenizer->encode(*text, true, true);
    if (const auto* ids = std::get_if<std::vector<int32_t>>(&input)) return *ids;
    const auto& pair = std::get<RerankPair>(input);
    const auto rerank_template = file->get_string("tokenizer.chat_template.rerank");
    if (!rerank_template) return tokenizer::pair_tokens(*tokenizer, pair.query, pair.document);
    std::string text(*rerank_template);
    for (const auto& [key, value] : {std::pair<std::string_view, const std::string&>{"{query}", pair.query}, {"{document}", pair.document}})
        for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
            text.replace(at, key.size(), value);
    return tokenizer->encode(text, false, true);
}

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
        auto tokens = input_tokens(inputs[i]);
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
        const model::Pooling pooling = a.pooling == model::Pooling::Rank ? model->hparams().rank.token : a.pooling;
        const bool take = pooling == model::Pooling::Mean || (pooling == model::Pooling::Cls && pos == 0) ||
                          (pooling == model::Pooling::Last && pos + 1 == size);
        if (take)
            for (size_t e = 0; e < E; ++e) a.pooled[e] += row[e];
    }
    a.fed += n;
    if (a.fed < size) return;
    if (a.pooling == model::Pooling::Mean)
        for (float& v : a.pooled) v /= static_cast<float>(size);
    if (a.pooling == model::Pooling::Rank) return next_embed_input(a, model->classify(a.pooled));
    double sum = 0;
    for (const float v : a.pooled) sum += double(v) * v;
    const double scale = sum > 0 ? 1.0 / std::sqrt(sum) : 0.0;
    for (float& v : a.pooled) v = static_cast<float>(v * scale);
    next_embed_input(a, std::move(a.pooled));
}

// Stores the running input's vector; starts the next input, or finishes.
void Engine::Impl::next_embed_input(Active& a, std::vector<float> vector) {
    a.embeddings.push_back(std::move(vector));
    if (++a.embed_index < a.embed_inputs.size()) return start_embed_input(a);
    finish(a, "stop");
}

}  // namespace strata::engine
