// engine/scheduler.cpp — the engine thread. Each step it admits queued requests
// (tokenizing, rendering the chat template, reusing the longest cached prefix), applies
// cancellations, and builds one batch for one forward pass: the next token of every
// decoding request first, then prompt chunks of requests in prefill (oldest first) up to
// the batch token budget. After the pass it samples, detokenizes incrementally, checks the
// stop conditions and streams text to the sinks.
#include <algorithm>

#include "chat/chat.h"
#include "engine/engine_impl.h"

namespace strata::engine {
namespace {

constexpr auto kRecentWindow = std::chrono::seconds(10);

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b, size_t limit) {
    size_t n = 0;
    while (n < limit && n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
}

}  // namespace

void Engine::Impl::loop() {
    std::unique_lock lk(mu);
    for (;;) {
        beats.fetch_add(1, std::memory_order_relaxed);
        if (actives.empty() && queue.empty()) {
            if (stopping) return;
            idle = true;
            cv.wait(lk, [&] { return stopping || !queue.empty(); });
            idle = false;
            continue;
        }
        std::set<uint64_t> cancelled;
        cancelled.swap(cancels);
        const bool expired = stopping && Clock::now() >= deadline;
        std::deque<Pending> admitted = take_admissible(cancelled, expired);
        lk.unlock();
        for (auto& p : admitted) admit(std::move(p));
        cancel_marked(cancelled, expired);
        if (!actives.empty()) step();
        lk.lock();
    }
}

// The queued requests that may run now, in order: those of users under
// limits.max_running_per_user (the others wait their turn), and cancelled ones (to end them).
std::deque<Pending> Engine::Impl::take_admissible(const std::set<uint64_t>& cancelled, bool expired) {
    std::deque<Pending> admitted, waiting;
    for (Pending& p : queue) {
        int32_t& mine = running_per_user[p.req.uid];
        if (mine < limits.max_running_per_user || expired || cancelled.count(p.handle) != 0) {
            ++mine;
            admitted.push_back(std::move(p));
        } else {
            waiting.push_back(std::move(p));
        }
    }
    queue.swap(waiting);
    running += static_cast<int32_t>(admitted.size());
    return admitted;
}

void Engine::Impl::admit(Pending p) {
    Active& a = actives.emplace_back();
    a.p = std::move(p);
    if (!a.p.session) a.anonymous = std::make_unique<Session>();
    a.session = a.p.session ? a.p.session : a.anonymous.get();
    try {
        prepare(a);
    } catch (const EngineError& e) {
        fail(a, e);
    } catch (const std::exception& e) {
        fail(a, EngineError(Errc::InvalidParams, e.what()));
    }
}

// The session's whole token sequence after this request's input.
std::vector<int32_t> Engine::Impl::render(Active& a) const {
    Session& s = *a.session;
    const GenerateRequest& r = a.p.req;
    if (r.messages.empty()) {
        if (s.chat) throw EngineError(Errc::InvalidParams, "session \"" + s.name + "\" is a chat session: send messages, or reset it", "prompt");
        std::vector<int32_t> full = s.tokens;
        const auto add = s.tokens.empty() ? tokenizer->encode(*r.prompt, true, false) : tokenizer->encode_continuation(*r.prompt, false);
        full.insert(full.end(), add.begin(), add.end());
        if (full.empty()) throw EngineError(Errc::InvalidParams, "the prompt is empty and the vocabulary has no BOS token", "prompt");
        return full;
    }
    if (!s.chat && !s.tokens.empty())
        throw EngineError(Errc::InvalidParams, "session \"" + s.name + "\" holds raw text: send a prompt, or reset it", "messages");
    std::vector<tokenizer::ChatMessage> conv;
    for (const auto& m : s.conversation) conv.push_back({m.role, m.content});
    for (const auto& m : r.messages) conv.push_back({m.role, m.content});
    if (!a.p.family) {
        const std::string text = render_model_template(conv);
        // The template writes BOS itself when it wants one (as llama.cpp, no second BOS).
        const bool renders_bos = tokenizer->bos() >= 0 && text.starts_with(tokenizer->token_text(tokenizer->bos()));
        return tokenizer->encode(text, !renders_bos, true);
    }
    tokenizer::ChatTokens specials;
    if (tokenizer->bos() >= 0) specials.bos = std::string(tokenizer->token_text(tokenizer->bos()));
    if (tokenizer->eos() >= 0) specials.eos = std::string(tokenizer->token_text(tokenizer->eos()));
    std::string text;
    try {
        text = tokenizer::render_chat(*a.p.family, conv, true, specials, {});
    } catch (const tokenizer::ChatTemplateError& e) {
        throw EngineError(Errc::InvalidParams, e.what(), "messages");
    }
    return tokenizer->encode(text, !tokenizer::chat_family_renders_bos(*a.p.family), true);
}

// The conversation through the model's own Jinja template, as apply_chat_template renders it
// (generation prompt on, today's date); a template error fails this request only.
std::string Engine::Impl::render_model_template(const std::vector<tokenizer::ChatMessage>& conv) const {
    chat::ChatInput in;
    chat::List messages;
    for (const auto& m : conv) {
        chat::Dict d;
        d.set("role", chat::Value(m.role));
        d.set("content", chat::Value(m.content));
        messages.emplace_back(std::move(d));
    }
    in.messages = chat::Value(std::move(messages));
    if (tokenizer->bos() >= 0) in.bos_token = std::string(tokenizer->token_text(tokenizer->bos()));
    if (tokenizer->eos() >= 0) in.eos_token = std::string(tokenizer->token_text(tokenizer->eos()));
    in.date = chat::today();
    try {
        return chat::apply_chat_template(*model_template, in);
    } catch (const chat::TemplateRaised& e) {
        throw EngineError(Errc::InvalidParams, std::string("the model's chat template refused the conversation: ") + e.what(), "messages");
    } catch (const chat::TemplateError& e) {
        throw EngineError(Errc::InvalidParams, std::string("the model's chat template failed: ") + e.what(), "messages");
    }
}

void Engine::Impl::prepare(Active& a) {
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
    if (static_cast<int32_t>(full.size()) >= context)
        throw EngineError(Errc::ContextFull, "the session would hold " + std::to_string(full.size()) + " tokens; the context is " +
                                                 std::to_string(context) + " (reset the session or start a new one)");
    attach_cache(a, full);
    a.history = std::move(full);
    a.sampler.emplace(r.sampling, model->hparams().n_vocab);
    if (r.grammar) a.constraint.emplace(r.grammar, constraint_vocab());
    const size_t window = std::min<size_t>(a.history.size(), r.sampling.penalty_last_n);
    for (size_t i = a.history.size() - window; i < a.history.size(); ++i) a.sampler->accept(a.history[i]);
    const bool at_start = std::all_of(a.history.begin(), a.history.end(), [&](int32_t t) { return t == tokenizer->bos(); });
    a.decoder.emplace(*tokenizer, tokenizer::StreamDecoder::Options{.at_start = at_start, .replace_invalid = true});
    a.stop.emplace(r.stop);
    a.result.usage.prompt_tokens = static_cast<int32_t>(a.history.size());
    a.result.usage.cached_tokens = static_cast<int32_t>(a.history.size() - a.prompt.size());
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

// Finds or makes the session's KV cache and reuses its longest prefix shared with `full`;
// a.prompt becomes what is left to feed (at least one token, to get logits).
void Engine::Impl::attach_cache(Active& a, const std::vector<int32_t>& full) {
    Session& s = *a.session;
    const auto& hp = model->hparams();
    if (!s.cache) {
        evict_caches(uint64_t(full.size()) * model->new_cache(1).bytes_per_position());
        auto restored = store.load_cache(s, hp.n_layer, hp.kv_dim(), context);
        auto cache = restored ? std::make_unique<kv::KvCache>(std::move(*restored)) : std::make_unique<kv::KvCache>(model->new_cache(context));
        std::lock_guard lk(mu);
        s.cache = std::move(cache);
    }
    size_t reuse = common_prefix(s.tokens, full, static_cast<size_t>(s.cache->size()));
    if (reuse == full.size()) --reuse;
    s.cache->truncate(static_cast<int32_t>(reuse));
    a.prompt.assign(full.begin() + static_cast<std::ptrdiff_t>(reuse), full.end());
}

// Drops the KV caches of idle sessions, least recently used first, until `need` more
// bytes fit the KV budget (their history stays; the cache is rebuilt on next use).
void Engine::Impl::evict_caches(uint64_t need) {
    std::lock_guard lk(mu);
    uint64_t used = kv_bytes();
    while (used + need > kv_budget) {
        Session* victim = nullptr;
        for (auto& [key, s] : sessions)
            if (s->cache && !s->busy && (!victim || s->last_used < victim->last_used)) victim = s.get();
        if (!victim) return;
        used -= victim->cache->bytes();
        victim->cache.reset();
    }
}

void Engine::Impl::cancel_marked(const std::set<uint64_t>& handles, bool all) {
    for (auto it = actives.begin(); it != actives.end();) {
        auto next = std::next(it);
        if (all || handles.count(it->p.handle)) finish(*it, "cancelled");
        it = next;
    }
}

void Engine::Impl::step() {
    std::vector<model::SequenceBatch> batch;
    std::vector<Active*> who;
    std::vector<size_t> chunk;
    int32_t budget = batch_tokens, prompt_tokens = 0, generated = 0;
    for (auto& a : actives)
        if (a.decoding() && budget > 0) {
            batch.push_back({a.session->cache.get(), std::span<const int32_t>(&a.next, 1), model::Logits::Last});
            who.push_back(&a);
            chunk.push_back(1);
            --budget;
            ++generated;
        }
    for (auto& a : actives)
        if (!a.decoding() && budget > 0) {
            const size_t n = std::min<size_t>(budget, a.prompt.size() - a.fed);
            const bool last = a.fed + n == a.prompt.size();
            batch.push_back({a.session->cache.get(), std::span<const int32_t>(a.prompt.data() + a.fed, n), last ? model::Logits::Last : model::Logits::None});
            who.push_back(&a);
            chunk.push_back(n);
            budget -= static_cast<int32_t>(n);
            prompt_tokens += static_cast<int32_t>(n);
        }
    const auto t0 = Clock::now();
    for (Active* a : who)
        if (!a->started) {
            a->started = true;
            a->first_pass = t0;
        }
    try {
        model->forward(batch, logits);
    } catch (const std::exception& e) {
        const EngineError err(Errc::ModelError, std::string("the forward pass failed: ") + e.what());
        log(3, std::string(err.what()) + " (" + std::to_string(who.size()) + " request(s) failed)");
        for (Active* a : who) fail(*a, err);
        return;
    }
    record_step(t0, prompt_tokens, generated);
    const float* row = logits.data();
    for (size_t i = 0; i < who.size(); ++i) {
        Active& a = *who[i];
        const bool has_row = batch[i].logits == model::Logits::Last;
        if (a.decoding()) a.next = -1;
        else a.fed += chunk[i];
        if (!has_row) continue;
        on_token(a, row);
        row += model->hparams().n_vocab;
    }
}

void Engine::Impl::record_step(Clock::time_point t0, int32_t prompt_tokens, int32_t generated) {
    const auto t1 = Clock::now();
    std::lock_guard lk(mu);
    forward_passes++;
    recent.push_back({t1, std::chrono::duration<double>(t1 - t0).count(), prompt_tokens, generated});
    while (!recent.empty() && recent.front().end < t1 - kRecentWindow) recent.pop_front();
}

// Samples the token after a pass and decides whether the request goes on.
void Engine::Impl::on_token(Active& a, const float* row) {
    const int32_t n_vocab = model->hparams().n_vocab;
    if (a.result.usage.completion_tokens == 0) a.first_token = Clock::now();
    int32_t token;
    try {
        const std::span<const float> logits(row, n_vocab);
        token = a.constraint ? a.constraint->sample(*a.sampler, logits) : a.sampler->sample(logits);
    } catch (const std::exception& e) {
        fail(a, EngineError(Errc::ModelError, std::string("sampling failed: ") + e.what()));
        return;
    }
    if (tokenizer->is_eog(token) && !a.p.req.ignore_eos) return finish(a, "stop");
    a.sampler->accept(token);
    if (a.constraint) a.constraint->accept(token);
    a.history.push_back(token);
    a.result.usage.completion_tokens++;
    if (token < tokenizer->n_vocab()) {
        const auto step = a.stop->feed(a.decoder->push(token));
        emit(a, step.text);
        if (step.stop) return finish(a, "stop");
    }
    // Feeding the token needs one more position in the cache.
    if (a.result.usage.completion_tokens >= a.p.req.max_tokens || a.session->cache->size() >= context) return finish(a, "length");
    a.next = token;
}

void Engine::Impl::emit(Active& a, const std::string& text) {
    if (text.empty()) return;
    a.result.text += text;
    a.p.sink->on_text(text);
}

void Engine::Impl::finish(Active& a, const std::string& reason) {
    if (!a.stop->stopped()) emit(a, a.stop->feed(a.decoder->flush()).text + a.stop->finish());
    const auto now = Clock::now();
    auto& t = a.result.timings;
    auto& u = a.result.usage;
    if (a.started) {
        t.queued_ms = ms(a.first_pass - a.p.submitted);
        const auto prefill_end = u.completion_tokens ? a.first_token : now;
        t.prompt_ms = ms(prefill_end - a.first_pass);
        t.generate_ms = u.completion_tokens ? ms(now - a.first_token) : 0;
        t.prompt_tps = t.prompt_ms > 0 ? (u.prompt_tokens - u.cached_tokens) / (t.prompt_ms / 1000) : 0;
        t.generate_tps = t.generate_ms > 0 && u.completion_tokens > 1 ? (u.completion_tokens - 1) / (t.generate_ms / 1000) : 0;
    } else {
        t.queued_ms = ms(now - a.p.submitted);
    }
    a.result.finish_reason = reason;
    release(a, true);
    a.p.sink->on_done(a.result);
    actives.remove_if([&](const Active& x) { return &x == &a; });
}

void Engine::Impl::fail(Active& a, const EngineError& e) {
    release(a, false);
    {
        std::lock_guard lk(mu);
        requests_failed++;
    }
    a.p.sink->on_error(e);
    actives.remove_if([&](const Active& x) { return &x == &a; });
}

// Writes what the request did back into its session (when keep_history), saves it, and
// gives the session and the request's slot back.
void Engine::Impl::release(Active& a, bool keep_history) {
    Session& s = *a.session;
    const GenerateRequest& r = a.p.req;
    {
        std::lock_guard lk(mu);
        if (keep_history && !a.history.empty()) {
            s.tokens = a.history;
            if (!r.messages.empty()) {
                s.chat = true;
                s.conversation.insert(s.conversation.end(), r.messages.begin(), r.messages.end());
                s.conversation.push_back({"assistant", a.result.text});
            }
            prompt_tokens_total += a.result.usage.prompt_tokens - a.result.usage.cached_tokens;
            cached_tokens_total += a.result.usage.cached_tokens;
            completion_tokens_total += a.result.usage.completion_tokens;
        }
        s.last_used = unix_now();
    }
    if (keep_history && !s.name.empty()) {
        try {
            store.save(s);
        } catch (const std::exception& e) {
            log(3, "cannot save session " + s.name + ": " + e.what());
        }
    }
    std::lock_guard lk(mu);
    s.busy = false;
    running--;
    if (--running_per_user[r.uid] == 0) running_per_user.erase(r.uid);
}

}  // namespace strata::engine
