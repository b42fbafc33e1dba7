// engine/admission.cpp — a request on its way in, on the engine thread: taken off the queue,
// prepared (its input rendered and checked against the limits, its session's KV cache found
// or made, the longest cached prefix reused: what it still needs is reported to the
// scheduler), then admitted (its KV reserved, its Generation made).
// Must not touch: batching and when to admit (scheduler.h), sinks (step.cpp).
#include <algorithm>

#include "engine/engine_impl.h"

namespace strata::engine {
namespace {

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b, size_t limit) {
    size_t n = 0;
    while (n < limit && n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
}

}  // namespace

// The request behind a handle: running already, or taken off the queue now.
Active& Engine::Impl::take(uint64_t handle) {
    if (const auto it = actives.find(handle); it != actives.end()) return it->second;
    Active& a = actives[handle];
    {
        std::lock_guard lk(mu);
        a.p = std::move(queued.at(handle));
        queued.erase(handle);
    }
    if (!a.p.session) a.anonymous = std::make_unique<Session>();
    a.session = a.p.session ? a.p.session : a.anonymous.get();
    return a;
}

void Engine::Impl::prepare(Active& a) {
    if (a.embedding()) {
        prepare_embed(a);
        sched->prepared(a.p.handle, {0, static_cast<int32_t>(a.prompt.size()), !model->hparams().causal, false});
        return;
    }
    const GenerateRequest& r = a.p.req;
    std::vector<int32_t> full = render(a);
    Session& s = *a.session;
    const size_t before = common_prefix(s.tokens, full, s.tokens.size());
    const int32_t added = static_cast<int32_t>(full.size() - before);
    Limits lim;
    {
        std::lock_guard lk(mu);
        lim = limits;
    }
    if (added > lim.max_prompt_tokens)
        throw EngineError(Errc::InvalidParams,
                          "the prompt adds " + std::to_string(added) + " tokens; the limit is " + std::to_string(lim.max_prompt_tokens),
                          r.messages.empty() ? "prompt" : "messages");
    if (lim.context_overflow == ContextOverflow::TruncateMiddle && !r.messages.empty())
        truncate_middle(a, full);
    else if (static_cast<int32_t>(full.size()) >= context)
        throw EngineError(Errc::ContextFull,
                          "the session would hold " + std::to_string(full.size()) + " tokens; the context is " + std::to_string(context) +
                              " (reset the session or start a new one; with limits.context_overflow = truncate_middle a chat "
                              "drops its oldest turns instead)");
    uint64_t fresh = attach_cache(a, full);
    if (uses_draft(r)) fresh += draft->kv_bytes_for(static_cast<int32_t>(full.size()), batch_tokens);  // its own cache, from the start
    if (s.cache->recurrent() && !r.messages.empty()) a.snapshot_at = message_starts(a, full, s.cache->size());
    a.history = std::move(full);
    a.usage.prompt_tokens = static_cast<int32_t>(a.history.size());
    a.usage.cached_tokens = static_cast<int32_t>(a.history.size() - a.prompt.size());
    sched->prepared(a.p.handle, {fresh, static_cast<int32_t>(a.prompt.size()), false, true, recurrent_pause(a)});
}

// Its KV reserved (counted in the ledger from now on), its generation made.
void Engine::Impl::admit(Active& a) {
    try {
        if (!a.embedding()) a.session->cache->reserve_ahead(static_cast<int32_t>(a.prompt.size()));
        a.gen.emplace(*tokenizer, a.p.req, a.p.req.grammar ? constraint_vocab() : nullptr, model->hparams().n_vocab, context,
                      a.embedding() ? std::vector<int32_t>{} : std::move(a.history));
        const Speculative mode = a.p.req.speculative.value_or(config.speculative);
        a.spec = Speculation(mode == Speculative::Off ? 0 : config.draft_max, mode != Speculative::Draft, uses_draft(a.p.req));
    } catch (const std::exception& e) {
        fail(a, EngineError(Errc::ModelError, std::string("cannot start the request: ") + e.what()));
    }
}

// Whether the request's guesses may come from the draft model (engine.speculative or its own
// `speculative`: draft, or auto with a draft configured).
bool Engine::Impl::uses_draft(const GenerateRequest& r) const {
    const Speculative mode = r.speculative.value_or(config.speculative);
    return draft && r.embed.empty() && (mode == Speculative::Draft || mode == Speculative::Auto);
}

// The vocabulary's token bytes and trie for grammars, built on the first constrained request.
std::shared_ptr<const sampling::ConstraintVocab> Engine::Impl::constraint_vocab() {
    if (!vocab_for_grammars) {
        std::vector<std::string> bytes(static_cast<size_t>(model->hparams().n_vocab));
        for (int32_t id = 0; id < tokenizer->n_vocab(); ++id)
            if (!tokenizer->is_eog(id)) bytes[static_cast<size_t>(id)] = tokenizer->piece(id, false);
        const auto eog = tokenizer->eog_ids();
        vocab_for_grammars = std::make_shared<const sampling::ConstraintVocab>(std::move(bytes), std::vector<int32_t>(eog.begin(), eog.end()));
    }
    return vocab_for_grammars;
}

// Finds or makes the session's KV cache and reuses its longest prefix shared with `full`,
// continued by the prefix cache's blocks where the session's own cache ends on a block
// boundary (a new or anonymous session: from the start); a.prompt becomes what is left to
// feed (at least one token, to get logits). Returns the KV bytes the prompt still takes
// (reserved at admission). A prompt whose KV alone exceeds memory.kv_budget fails with
// context_full naming the limit. Generated tokens' KV is not reserved ahead: running
// requests may take the budget over by what they generate; sliding-window layers' blocks
// come pass by pass and go as the window moves on.
uint64_t Engine::Impl::attach_cache(Active& a, const std::vector<int32_t>& full) {
    Session& s = *a.session;
    const kv::KvType type = config.memory.kv_type;
    const kv::KvCache sizing = model->new_cache(1, nullptr, type);
    const auto bytes_for = [&](size_t positions) { return sizing.bytes_for(static_cast<int32_t>(positions), batch_tokens); };
    const uint64_t need = bytes_for(full.size());
    if (need > kv_budget)
        throw EngineError(Errc::ContextFull, "the prompt's KV cache needs " + std::to_string(need >> 20) + " MiB; memory.kv_budget is " +
                                                 std::to_string(kv_budget >> 20) + " MiB" +
                                                 (memory->setup().plan.fits ? "" : " (what the memory budget leaves under memory pressure)"));
    if (!s.cache) {
        auto restored = store.load_cache(s, model->kv_shape(), context, kv_ledger, type);
        auto cache = std::make_unique<kv::KvCache>(restored ? std::move(*restored) : model->new_cache(context, kv_ledger, type));
        std::lock_guard lk(mu);
        s.cache = std::move(cache);
    }
    size_t reuse = common_prefix(s.tokens, full, static_cast<size_t>(s.cache->size()));
    if (reuse == full.size()) --reuse;
    s.cache->truncate(static_cast<int32_t>(reuse));
    std::lock_guard lk(mu);
    s.kv_tick = ++kv_tick;
    prefixes.extend(full, *s.cache, static_cast<int32_t>(full.size()) - 1, kv_tick);
    a.prompt.assign(full.begin() + s.cache->size(), full.end());
    return need - bytes_for(static_cast<size_t>(s.cache->size()));
}

}  // namespace strata::engine
