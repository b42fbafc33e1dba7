// engine/scheduler.cpp — the engine thread. Each step it admits queued requests
// (tokenizing, rendering the chat template, reusing the longest cached prefix), applies
// cancellations, and builds one batch for one forward pass: the next token of every
// decoding request first, then prompt chunks of requests in prefill (oldest first) up to
// the batch token budget. After the pass it samples, detokenizes incrementally, checks the
// stop conditions and streams text to the sinks.
#include <algorithm>
#include <unordered_set>
#include <utility>

#include "engine/engine_impl.h"
#include "sampling/logprobs.h"

namespace strata::engine {
namespace {

constexpr auto kRecentWindow = std::chrono::seconds(10);

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
        if (Clock::now() >= next_expiry_sweep) expire_idle_sessions();
        if (actives.empty() && !kv_wait.empty()) requeue_kv_waiting({});
        if (actives.empty() && queue.empty()) {
            if (stopping) return;
            idle = true;
            cv.wait_until(lk, next_expiry_sweep, [&] { return stopping || !queue.empty(); });
            idle = false;
            continue;
        }
        Ending ending;
        for (const uint64_t handle : std::exchange(cancels, {})) ending.emplace(handle, "cancelled");
        mark_overdue(ending);
        requeue_kv_waiting(ending);
        const bool expired = stopping && Clock::now() >= deadline;
        std::deque<Pending> admitted = take_admissible(ending, expired);
        lk.unlock();
        for (auto& p : admitted) admit(std::move(p), ending);
        end_marked(ending, expired);
        if (!actives.empty()) step();
        lk.lock();
    }
}

// Deletes named sessions unused for limits.session_idle_timeout from memory and disk (a
// session a request holds or waits for is busy, never idle); sweeps again in a quarter of
// the timeout, at most a minute later.
void Engine::Impl::expire_idle_sessions() {
    const int64_t timeout = limits.session_idle_timeout_s;
    next_expiry_sweep = Clock::now() + std::chrono::seconds(std::clamp<int64_t>(timeout / 4, 1, 60));
    if (timeout <= 0) return;
    const int64_t now = unix_now();
    for (auto it = sessions.begin(); it != sessions.end();) {
        const Session& s = *it->second;
        if (s.busy || now - s.last_used < timeout) {
            ++it;
            continue;
        }
        log(6, "session \"" + s.name + "\" of uid " + std::to_string(s.uid) + " expired: unused for " +
                   std::to_string(now - s.last_used) + " s (limits.session_idle_timeout)");
        store.remove(s);
        ++sessions_expired;
        it = sessions.erase(it);
    }
}

// Requests past their deadline (GenerateRequest::timeout), wherever they are: queued,
// waiting for KV room, or running. A request already cancelled stays "cancelled".
void Engine::Impl::mark_overdue(Ending& ending) const {
    const auto now = Clock::now();
    auto check = [&](const Pending& p) {
        if (p.req.timeout.count() > 0 && now >= p.submitted + p.req.timeout) ending.emplace(p.handle, "timeout");
    };
    for (const Pending& p : queue) check(p);
    for (const Pending& p : kv_wait) check(p);
    for (const Active& a : actives) check(a.p);
}

// The queued requests that may run now, in order: those of users under
// limits.max_running_per_user (the others wait their turn), and those to end (cancelled or
// overdue: they end without running).
std::deque<Pending> Engine::Impl::take_admissible(const Ending& ending, bool expired) {
    std::deque<Pending> admitted, waiting;
    for (Pending& p : queue) {
        int32_t& mine = running_per_user[p.req.uid];
        if (mine < limits.max_running_per_user || expired || ending.count(p.handle) != 0) {
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

void Engine::Impl::admit(Pending p, const Ending& ending) {
    Active& a = actives.emplace_back();
    a.p = std::move(p);
    if (!a.p.session) a.anonymous = std::make_unique<Session>();
    a.session = a.p.session ? a.p.session : a.anonymous.get();
    if (const auto end = ending.find(a.p.handle); end != ending.end()) return finish(a, end->second);  // ended while queued
    try {
        if (prepare(a)) return;
        // Its KV does not fit beside the running requests': it waits for one of them to end.
        std::lock_guard lk(mu);
        kv_wait.push_back(std::move(a.p));
        kv_wait_actives = actives.size() - 1;
        --running;
        if (--running_per_user[kv_wait.back().req.uid] == 0) running_per_user.erase(kv_wait.back().req.uid);
        actives.pop_back();
    } catch (const EngineError& e) {
        fail(a, e);
    } catch (const std::exception& e) {
        fail(a, EngineError(Errc::InvalidParams, e.what()));
    }
}

// Requests waiting for KV room go back to the front of the queue once a running request
// ended (or is cancelled, or the engine stops). Called with mu held.
void Engine::Impl::requeue_kv_waiting(const Ending& ending) {
    if (kv_wait.empty()) return;
    const bool cancel = std::any_of(kv_wait.begin(), kv_wait.end(), [&](const Pending& p) { return ending.count(p.handle) != 0; });
    if (actives.size() >= kv_wait_actives && !cancel && !stopping) return;
    while (!kv_wait.empty()) {
        queue.push_front(std::move(kv_wait.back()));
        kv_wait.pop_back();
    }
}

bool Engine::Impl::prepare(Active& a) {
    if (a.embedding()) {
        prepare_embed(a);
        return true;
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
    if (!attach_cache(a, full)) return false;
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
    return true;
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
// feed (at least one token, to get logits). A prompt whose KV alone exceeds
// memory.kv_budget fails with context_full naming the limit; one whose new KV does not fit
// beside the running requests' (their prompts' blocks are allocated at once, but for the
// sliding-window layers' blocks, which come pass by pass and go as the window moves on;
// after evicting idle caches and cached prefixes) returns false, to wait. Generated tokens'
// KV is not reserved ahead: running requests may take the budget over by what they
// generate.
bool Engine::Impl::attach_cache(Active& a, const std::vector<int32_t>& full) {
    Session& s = *a.session;
    const kv::KvType type = config.memory.kv_type;
    const kv::KvCache sizing = model->new_cache(1, nullptr, type);
    const auto bytes_for = [&](size_t positions) { return sizing.bytes_for(static_cast<int32_t>(positions), batch_tokens); };
    const uint64_t need = bytes_for(full.size());
    if (need > kv_budget)
        throw EngineError(Errc::ContextFull, "the prompt's KV cache needs " + std::to_string(need >> 20) + " MiB; memory.kv_budget is " +
                                                 std::to_string(kv_budget >> 20) + " MiB");
    {
        const uint64_t fresh = need - bytes_for(std::min<size_t>(full.size(), s.cache ? size_t(s.cache->size()) : 0));
        std::lock_guard lk(mu);
        evict_caches(fresh);
        if (kv_ledger->bytes() + fresh > kv_budget && actives.size() > 1) return false;
    }
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
    s.cache->reserve_ahead(static_cast<int32_t>(a.prompt.size()));  // counted in the ledger from now on
    return true;
}

// Makes the full blocks of the request's sequence so far findable by later requests.
void Engine::Impl::remember_prefix(Active& a) {
    std::lock_guard lk(mu);
    prefixes.insert(a.history, *a.session->cache, ++kv_tick);
}

// Evicts, least recently used first, cached prefixes and idle sessions' KV caches until
// `need` more bytes fit memory.kv_budget (a session keeps its history: its cache is
// rebuilt, or reloaded from disk, on next use). Blocks still shared elsewhere free nothing
// until their last holder lets go.
void Engine::Impl::evict_caches(uint64_t need) {
    while (kv_ledger->bytes() + need > kv_budget) {
        Session* victim = nullptr;
        for (auto& [key, s] : sessions)
            if (s->cache && !s->busy && (!victim || s->kv_tick < victim->kv_tick)) victim = s.get();
        const bool prefix_first = prefixes.entries() > 0 && (!victim || prefixes.oldest_tick() <= victim->kv_tick);
        if (prefix_first) {
            prefixes.evict_oldest();
        } else if (victim) {
            victim->cache.reset();
            ++kv_evictions;
        } else {
            return;
        }
    }
}

// KV bytes by holder, for status: blocks of running requests, then of idle sessions, then
// those only the prefix cache holds (a shared block counts once, for its first holder).
void Engine::Impl::count_kv_kinds() {
    std::unordered_set<const kv::Block*> seen;
    auto count = [&](const kv::KvCache& c) {
        uint64_t bytes = 0;
        for (int32_t i = 0; i * kv::kBlockTokens < c.size(); ++i)
            for (const kv::BlockRef* part : c.block(i).parts())
                if (*part && seen.insert(part->get()).second) bytes += (*part)->bytes();
        return bytes;
    };
    KvKinds k;
    for (const Active& a : actives)  // a released request's session may already be gone (deleted by its owner)
        if (!a.released && a.session->cache) k.running += count(*a.session->cache);
    std::lock_guard lk(mu);
    for (const auto& [key, s] : sessions)
        if (s->cache && !s->busy) k.idle += count(*s->cache);
    k.prefix = kv_ledger->bytes() > k.running + k.idle ? kv_ledger->bytes() - k.running - k.idle : 0;
    kv_kinds = k;
}

void Engine::Impl::end_marked(const Ending& ending, bool all) {
    for (auto it = actives.begin(); it != actives.end();) {
        auto next = std::next(it);
        const auto end = ending.find(it->p.handle);
        if (all || end != ending.end()) finish(*it, all ? "cancelled" : end->second);
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
    const bool whole = !model->hparams().causal;  // without causal attention an input runs in one pass
    for (auto& a : actives)
        if (!a.decoding() && budget > 0 && (!whole || a.prompt.size() - a.fed <= size_t(budget))) {
            const size_t n = std::min<size_t>(budget, a.prompt.size() - a.fed);
            const bool last = a.fed + n == a.prompt.size() && !a.embedding();
            batch.push_back({a.session->cache.get(), std::span<const int32_t>(a.prompt.data() + a.fed, n),
                             last ? model::Logits::Last : model::Logits::None, a.embedding()});
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
        model->forward(batch, logits, &hidden);
    } catch (const std::exception& e) {
        const EngineError err(Errc::ModelError, std::string("the forward pass failed: ") + e.what());
        log(3, std::string(err.what()) + " (" + std::to_string(who.size()) + " request(s) failed)");
        for (Active* a : who) fail(*a, err);
        return;
    }
    record_step(t0, prompt_tokens, generated);
    const float* row = logits.data();
    const float* hidden_row = hidden.data();
    for (size_t i = 0; i < who.size(); ++i) {
        Active& a = *who[i];
        if (a.embedding()) {
            pool_hidden(a, hidden_row, chunk[i]);  // may finish it
            hidden_row += chunk[i] * size_t(model->hparams().n_embd);
            continue;
        }
        const bool has_row = batch[i].logits == model::Logits::Last;
        if (a.decoding()) {
            a.next = -1;
        } else {
            a.fed += chunk[i];
            if (a.decoding()) remember_prefix(a);
        }
        if (!has_row) continue;
        on_token(a, row);
        row += model->hparams().n_vocab;
    }
    count_kv_kinds();
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
    if (a.p.req.logprobs >= 0) record_logprobs(a, {row, size_t(n_vocab)}, token);
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

void Engine::Impl::record_logprobs(Active& a, std::span<const float> logits, int32_t token) {
    const sampling::Logprobs lp = sampling::logprobs_of(logits, token, a.p.req.logprobs);
    auto choice = [&](const sampling::TokenLogprob& t) {
        return TokenChoice{t.id, t.id < tokenizer->n_vocab() ? std::string(tokenizer->piece(t.id, false)) : std::string(), t.logprob};
    };
    TokenLogprobs entry{choice(lp.chosen), {}};
    for (const auto& t : lp.top) entry.top.push_back(choice(t));
    a.p.sink->on_logprobs(entry);
    a.result.logprobs.push_back(std::move(entry));
}

void Engine::Impl::emit(Active& a, const std::string& text) {
    if (text.empty()) return;
    a.result.text += text;
    a.p.sink->on_text(text);
}

void Engine::Impl::finish(Active& a, const std::string& reason) {
    if (a.stop && !a.stop->stopped()) emit(a, a.stop->feed(a.decoder->flush()).text + a.stop->finish());  // no stop: never prepared
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
    count_kv_kinds();  // before the client hears of the end
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
    if (keep_history && s.cache && !a.history.empty()) remember_prefix(a);
    {
        std::lock_guard lk(mu);
        s.kv_tick = ++kv_tick;
        if (keep_history && !a.history.empty()) {
            s.tokens = a.history;
            if (!r.messages.empty()) {
                s.chat = true;
                s.conversation = std::move(a.conversation);
                s.conversation.push_back({"assistant", a.result.text});
            }
            prompt_tokens_total += a.result.usage.prompt_tokens - a.result.usage.cached_tokens;
            messages_dropped += static_cast<uint64_t>(a.result.usage.dropped_messages);
            cached_tokens_total += a.result.usage.cached_tokens;
            completion_tokens_total += a.result.usage.completion_tokens;
        } else if (keep_history && a.embedding()) {
            prompt_tokens_total += a.result.usage.prompt_tokens;
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
    a.released = true;
    s.busy = false;
    running--;
    if (--running_per_user[r.uid] == 0) running_per_user.erase(r.uid);
}

}  // namespace strata::engine
