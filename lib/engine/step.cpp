// engine/step.cpp — the engine thread. Each step: the scheduler plans (scheduler.h), the
// engine applies the plan — ends cancelled and overdue requests, prepares newly taken ones,
// evicts cached KV and admits the ones that now fit, runs the batch through the model —
// and each request's Generation takes its logits and says whether it goes on. Ended
// requests leave `actives` only after the step is done with them.
#include <algorithm>
#include <utility>

#include "engine/engine_impl.h"

namespace strata::engine {
namespace {

constexpr auto kRecentWindow = std::chrono::seconds(10);

}  // namespace

void Engine::Impl::loop() {
    for (;;) {
        beats.fetch_add(1, std::memory_order_relaxed);
        Clock::time_point sweep;
        {
            std::lock_guard lk(mu);
            if (Clock::now() >= next_expiry_sweep) expire_idle_sessions();
            sweep = next_expiry_sweep;
        }
        if (sched->done()) {
            if (regrowth) regrowth->thread.join();
            return;
        }
        adjust_memory();
        const StepPlan plan = sched->plan(Clock::now(), sched->wants_kv() ? kv_view() : KvView{});
        if (plan.idle()) {
            idle = true;
            sched->wait_for_work(sweep);
            idle = false;
            continue;
        }
        apply(plan);
        std::erase_if(actives, [](const auto& entry) { return entry.second.ended; });
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

void Engine::Impl::apply(const StepPlan& plan) {
    for (const Ending& e : plan.end) finish(take(e.handle), e.reason);
    for (const uint64_t handle : plan.prepare) {
        Active& a = take(handle);
        try {
            prepare(a);
        } catch (const EngineError& e) {
            fail(a, e);
        } catch (const std::exception& e) {
            fail(a, EngineError(Errc::InvalidParams, e.what()));
        }
    }
    if (!plan.evict.empty()) evict(plan.evict);
    for (const uint64_t handle : plan.admit) admit(actives.at(handle));
    if (!plan.batch.empty()) run_batch(plan.batch);
}

void Engine::Impl::run_batch(const std::vector<Feed>& feeds) {
    std::vector<model::SequenceBatch> batch;
    int32_t prompt_tokens = 0, generated = 0;
    const auto t0 = Clock::now();
    for (const Feed& f : feeds) {
        Active& a = actives.at(f.handle);
        const bool decoding = a.decoding();
        const int32_t* from = decoding ? a.next.data() : a.prompt.data() + a.fed;
        const auto logits_at = f.logits == LogitsAt::All ? model::Logits::All : f.logits == LogitsAt::Last ? model::Logits::Last : model::Logits::None;
        batch.push_back({a.session->cache.get(), std::span<const int32_t>(from, size_t(f.tokens)), logits_at, a.embedding()});
        if (decoding) ++generated;  // and its accepted guesses (record_verify)
        else prompt_tokens += f.tokens;
        // A recurrent state cannot be cut back to the guesses kept: the state before them is.
        if (decoding && f.tokens > 1 && a.session->cache->recurrent()) a.before_guesses = a.session->cache->snapshot();
        a.gen->mark_pass(t0);
    }
    try {
        model->forward(batch, logits, &hidden);
    } catch (const std::exception& e) {
        const EngineError err(Errc::ModelError, std::string("the forward pass failed: ") + e.what());
        log(3, std::string(err.what()) + " (" + std::to_string(feeds.size()) + " request(s) failed)");
        for (const Feed& f : feeds) fail(actives.at(f.handle), err);
        return;
    }
    record_step(t0, prompt_tokens, generated);
    const float* row = logits.data();
    const float* hidden_row = hidden.data();
    const size_t n_vocab = size_t(model->hparams().n_vocab), n_embd = size_t(model->hparams().n_embd);
    for (const Feed& f : feeds) {
        Active& a = actives.at(f.handle);
        if (a.embedding()) {
            pool_hidden(a, hidden_row, size_t(f.tokens));  // may finish it
            hidden_row += size_t(f.tokens) * n_embd;
            report_next(a);
            continue;
        }
        take_logits(a, f, row);
        row += f.logits == LogitsAt::All ? size_t(f.tokens) * n_vocab : f.logits == LogitsAt::Last ? n_vocab : 0;
    }
    draft_guesses();
    count_kv_kinds();
}

// After a pass: a prompt chunk moves the request on (and, at the prompt's end, its blocks
// become findable by later requests); logits go to its generation; the scheduler hears
// what the request feeds next.
void Engine::Impl::take_logits(Active& a, const Feed& f, const float* row) {
    if (a.decoding()) return verify(a, f, row);
    a.fed += size_t(f.tokens);
    if (a.decoding()) remember_prefix(a, false);
    else if (a.session->cache->recurrent() && (a.fed + 1 == a.prompt.size() || std::binary_search(a.snapshot_at.begin(), a.snapshot_at.end(), a.session->cache->size())))
        remember_prefix(a, true);  // a pause
    if (f.logits != LogitsAt::None) {
        int32_t token = -1;
        if (!go_on(a, on_token(a, row, token))) return;
        a.next = {token};
        if (plan_guesses(a)) return;  // reported after the draft's guesses
    }
    report_next(a);
}

// A decoding pass fed the last sampled token and f.tokens - 1 guesses after it, with logits
// at each. Row i gives the token after the first i + 1 fed ones, sampled exactly as without
// guesses; while it equals the next guess, that guess (already in the KV) is kept and the
// next row is read. The first token that differs, or that ends the request, ends the run,
// and the KV forgets the positions after the kept ones (a recurrent sequence goes back to its
// state before the pass and runs the kept ones again: rewind_recurrent). For sampled requests this is
// speculative sampling with a one-hot guess: the guess is kept with its probability p(g)
// under the sampler's distribution, and otherwise the token drawn is distributed as p
// without g, renormalised — the target's distribution exactly.
void Engine::Impl::verify(Active& a, const Feed& f, const float* rows) {
    kv::KvCache& cache = *a.session->cache;
    const int32_t base = cache.size() - f.tokens, guessed = f.tokens - 1;
    const size_t n_vocab = size_t(model->hparams().n_vocab);
    int32_t kept = 0, token = -1;
    std::optional<Generation::Outcome> outcome;
    for (;; ++kept) {
        outcome = on_token(a, rows + size_t(kept) * n_vocab, token);
        if (outcome != Generation::Outcome::Continue || kept == guessed || token != a.next[size_t(kept) + 1]) break;
    }
    if (guessed > 0) {
        a.spec.verified(guessed, kept);
        record_verify(guessed, kept);
    }
    // The fed token and the guesses kept stay; the request ends with its KV as it would have without guesses.
    if (cache.recurrent() && kept < guessed) {
        if (!rewind_recurrent(a, kept)) return;
    } else if (cache.truncate(base + kept + 1) != base + kept + 1) {
        return fail(a, EngineError(Errc::ModelError, "speculative decoding lost the attention window's KV"));
    }
    a.before_guesses.reset();
    if (!go_on(a, outcome)) return;
    a.next = {token};
    if (!plan_guesses(a)) report_next(a);
}

// The guesses to feed after the next token, within what the context, max_tokens and the
// grammar leave: the n-grams' now, or the draft's after the pass (true: draft_guesses()
// adds them and reports the request).
bool Engine::Impl::plan_guesses(Active& a) {
    if (a.ended || !a.decoding() || !a.spec.enabled() || a.next.size() != 1) return false;
    const std::vector<int32_t>& history = a.gen->history();
    const int32_t room = std::min(context - static_cast<int32_t>(history.size()), a.p.req.max_tokens - a.gen->generated() - 1);
    Speculation::Guess guess = a.spec.guess(history, room, ngram_pool);
    a.draft_ask = guess.draft;  // 0 unless the request's sources include the draft (uses_draft)
    add_guesses(a, std::move(guess.tokens));
    return a.draft_ask > 0;
}

// A recurrent sequence that did not keep all its guesses: its cache goes back to the snapshot
// taken before the pass (its state then, and the block it was filling), and its fed token
// and the kept guesses run again, in a pass of their own without logits. False when that
// pass failed (the request failed).
bool Engine::Impl::rewind_recurrent(Active& a, int32_t kept) {
    kv::KvCache& cache = *a.session->cache;
    const kv::Snapshot& before = *a.before_guesses;
    std::vector<kv::Blocks> full;
    for (int32_t i = 0; i < before.positions / kv::kBlockTokens; ++i) full.push_back(cache.block(i));
    cache.truncate(0);
    cache.restore(std::move(full), before);
    const model::SequenceBatch again{&cache, std::span<const int32_t>(a.next.data(), size_t(kept) + 1), model::Logits::None};
    std::vector<float> none;  // not `logits`: the step still reads other requests' rows there
    try {
        model->forward({&again, 1}, none);
    } catch (const std::exception& e) {
        fail(a, EngineError(Errc::ModelError, std::string("the forward pass failed: ") + e.what()));
        return false;
    }
    return true;
}

void Engine::Impl::add_guesses(Active& a, std::vector<int32_t> guesses) {
    guesses.resize(a.gen->admissible(guesses));
    a.next.insert(a.next.end(), guesses.begin(), guesses.end());
}

// The draft model's guesses for the requests that asked in this step, in passes they share;
// a draft that fails (a read error) leaves them without guesses this time, and is logged.
void Engine::Impl::draft_guesses() {
    std::vector<Draft::Ask> asks;
    std::vector<Active*> asking;
    for (auto& [handle, a] : actives) {
        if (a.ended || a.draft_ask <= 0) continue;
        if (!a.draft) a.draft.emplace(draft->new_sequence(context, kv_ledger));
        asks.push_back({&*a.draft, a.gen->history(), a.draft_ask, {}});
        asking.push_back(&a);
        a.draft_ask = 0;
    }
    if (asks.empty()) return;
    const double before = draft->seconds();
    try {
        draft->guess(asks);
    } catch (const std::exception& e) {
        log(4, std::string("the draft model's pass failed, requests go on without its guesses: ") + e.what());
        for (Draft::Ask& ask : asks) ask.guesses.clear();
    }
    {
        std::lock_guard lk(mu);
        if (!recent.empty()) recent.back().seconds += draft->seconds() - before;  // the step took that long too
    }
    for (size_t i = 0; i < asks.size(); ++i) {
        add_guesses(*asking[i], std::move(asks[i].guesses));
        report_next(*asking[i]);
    }
}

void Engine::Impl::report_next(const Active& a) {
    if (a.ended) return;
    if (a.decoding()) sched->feed_next(a.p.handle, static_cast<int32_t>(a.next.size()), true);
    else sched->feed_next(a.p.handle, static_cast<int32_t>(a.prompt.size() - a.fed), false, recurrent_pause(a));
}

// A recurrent sequence's prompt pauses where its last messages start (snapshot_at) and
// before its last token, where snapshots of its state are kept: the same prompt again (a
// regenerated answer) continues from the last, an edited last message from the message
// before it.
int32_t Engine::Impl::recurrent_pause(const Active& a) const {
    const auto left = static_cast<int32_t>(a.prompt.size() - a.fed);
    if (!a.session->cache || !a.session->cache->recurrent() || a.embedding() || left <= 1) return 0;
    const int32_t at = a.session->cache->size();
    const auto next = std::upper_bound(a.snapshot_at.begin(), a.snapshot_at.end(), at);
    return next != a.snapshot_at.end() && *next - at < left - 1 ? *next - at : left - 1;
}

// Samples the token after a pass and takes it into the generation: what it means for the
// request, or nothing when sampling failed (the request failed).
std::optional<Generation::Outcome> Engine::Impl::on_token(Active& a, const float* row, int32_t& token) {
    const std::span<const float> logits_row(row, size_t(model->hparams().n_vocab));
    try {
        token = a.gen->sample(logits_row);
    } catch (const std::exception& e) {
        fail(a, EngineError(Errc::ModelError, std::string("sampling failed: ") + e.what()));
        return std::nullopt;
    }
    const Generation::Outcome outcome = a.gen->accept(token, logits_row);
    send_output(a);
    return outcome;
}

// Whether the request goes on after a token; ends it when the token stopped it.
bool Engine::Impl::go_on(Active& a, std::optional<Generation::Outcome> outcome) {
    if (outcome == Generation::Outcome::Stop) finish(a, "stop");
    if (outcome == Generation::Outcome::Length) finish(a, "length");
    return outcome == Generation::Outcome::Continue;
}

void Engine::Impl::send_output(Active& a) {
    Generation::Output out = a.gen->take_output();
    for (const TokenLogprobs& lp : out.logprobs) a.p.sink->on_logprobs(lp);
    if (!out.text.empty()) a.p.sink->on_text(out.text);
}

void Engine::Impl::record_step(Clock::time_point t0, int32_t prompt_tokens, int32_t generated) {
    const auto t1 = Clock::now();
    std::lock_guard lk(mu);
    forward_passes++;
    pass_seconds += std::chrono::duration<double>(t1 - t0).count();
    recent.push_back({t1, std::chrono::duration<double>(t1 - t0).count(), prompt_tokens, generated});
    while (!recent.empty() && recent.front().end < t1 - kRecentWindow) recent.pop_front();
}

void Engine::Impl::record_verify(int32_t guessed, int32_t accepted) {
    std::lock_guard lk(mu);
    spec_passes++;
    spec_guessed += uint64_t(guessed);
    spec_accepted += uint64_t(accepted);
    spec_tokens += uint64_t(accepted) + 1;
    if (!recent.empty()) recent.back().generated_tokens += accepted;  // this step's, recorded before
}

// Ends a request: the rest of its text, its session written back, its result to the sink.
void Engine::Impl::finish(Active& a, const std::string& reason) {
    if (a.ended) return;
    Result result;
    if (a.gen) {
        a.gen->finish();
        send_output(a);
        result = a.gen->result(a.usage, a.p.submitted, Clock::now(), reason);
        result.timings.speculative_guessed = static_cast<int32_t>(a.spec.guessed());
        result.timings.speculative_accepted = static_cast<int32_t>(a.spec.accepted());
    } else {
        result.finish_reason = reason;
        result.usage = a.usage;
        result.timings.queued_ms = std::chrono::duration<double, std::milli>(Clock::now() - a.p.submitted).count();
    }
    result.embeddings = std::move(a.embeddings);
    release(a, true);
    count_kv_kinds();  // before the client hears of the end
    a.p.sink->on_done(result);
}

void Engine::Impl::fail(Active& a, const EngineError& e) {
    if (a.ended) return;
    release(a, false);
    {
        std::lock_guard lk(mu);
        requests_failed++;
    }
    a.p.sink->on_error(e);
}

// Writes what the request did back into its session (when keep_history), saves it, gives
// the session back, and takes the request out of the scheduler; it is `ended` from now on.
void Engine::Impl::release(Active& a, bool keep_history) {
    a.ended = true;
    sched->remove(a.p.handle);
    Session& s = *a.session;
    const GenerateRequest& r = a.p.req;
    // Only an admitted request has a history of its own (its generation's) to keep.
    const bool keep = keep_history && a.gen && !a.gen->history().empty() && !a.embedding();
    if (keep && s.cache) remember_prefix(a, true);
    {
        std::lock_guard lk(mu);
        s.kv_tick = ++kv_tick;
        if (keep) {
            s.tokens = a.gen->history();
            if (!r.messages.empty()) {
                s.chat = true;
                s.conversation = std::move(a.conversation);
                s.conversation.push_back({"assistant", a.gen->text()});
            }
            prompt_tokens_total += a.usage.prompt_tokens - a.usage.cached_tokens;
            messages_dropped += static_cast<uint64_t>(a.usage.dropped_messages);
            cached_tokens_total += a.usage.cached_tokens;
            completion_tokens_total += a.gen->generated();
            const size_t output = std::min(s.tokens.size(), size_t(a.gen->generated()) + NgramPool::kPoolGram);
            ngram_pool.learn(s.tokens, s.tokens.size() - output);
        } else if (keep_history && a.embedding()) {
            prompt_tokens_total += a.usage.prompt_tokens;
        }
        s.last_used = unix_now();
    }
    if (keep && !s.name.empty()) {
        try {
            store.save(s);
        } catch (const std::exception& e) {
            log(3, "cannot save session " + s.name + ": " + e.what());
        }
    }
    std::lock_guard lk(mu);
    a.released = true;
    s.busy = false;
}

}  // namespace strata::engine
