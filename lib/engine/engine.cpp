// engine/engine.cpp — the thread-safe front of the engine: loading, accepting requests
// (every limit is checked before a request is queued: request.cpp), sessions, shutdown.
#include <algorithm>

#include "chat/prompt.h"
#include "engine/engine_impl.h"

namespace strata::engine {
namespace {

// FNV-1a of the file's header (metadata and tensor table) and size: tells saved KV
// caches of this model from those of any other.
uint64_t model_id(const gguf::File& f) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](uint8_t b) { h = (h ^ b) * 1099511628211ull; };
    for (uint64_t i = 0; i < f.data_offset(); ++i) mix(f.bytes()[i]);
    for (int s = 0; s < 64; s += 8) mix(static_cast<uint8_t>(f.file_size() >> s));
    return h;
}

// A fill-in-the-middle request needs the model's FIM tokens, and runs without a session.
void check_infill(const GenerateRequest& request, const tokenizer::Tokenizer& tokenizer) {
    if (const std::string missing = tokenizer::missing_fim_tokens(tokenizer); !missing.empty())
        throw EngineError(Errc::InvalidParams, "Infill is not supported by this model: " + missing +
                                                   "(it has no tokenizer.ggml.fim_pre/suf/mid_token_id)", "input_prefix");
    if (!request.session.empty())
        throw EngineError(Errc::InvalidParams, "an infill request runs without a session", "session");
}

// engine.speculative and engine.draft_max as configured.
void check_speculation(Speculative mode, int32_t draft_max, bool have_draft) {
    if (mode == Speculative::Draft && !have_draft)
        throw std::runtime_error("engine.speculative = draft needs a draft model (model.draft), and none is configured");
    if (draft_max < 1 || draft_max > kMaxDraft)
        throw std::runtime_error("engine.draft_max " + std::to_string(draft_max) + " is out of range (1.." + std::to_string(kMaxDraft) + ")");
}

}  // namespace

void Engine::Impl::log(int priority, const std::string& message) const {
    if (config.log) config.log(priority, message);
    else std::fprintf(stderr, "<%d>%s\n", priority, message.c_str());
}

Engine::Impl::Impl(Config c) : config(std::move(c)), store("", 0) {
    file = gguf::File::open(config.model_path);
    store = SessionStore(config.state_dir, model_id(*file));  // before loading: a held state dir fails fast
    const auto hp = model::HParams::from_gguf(*file);
    context = session_context(config.context, hp.n_ctx_train);
    if (config.context > hp.n_ctx_train)
        log(4, "engine.context " + std::to_string(config.context) + " is more than the model was trained for (" +
                   std::to_string(hp.n_ctx_train) + " tokens); sessions get " + std::to_string(context));
    check_speculation(config.speculative, config.draft_max, !config.draft_path.empty());
    const int threads = config.threads > 0 ? config.threads : model::physical_cores();
    memory = std::make_unique<MemoryPlanner>(config, hp, context, threads);
    model::Options mo;
    mo.n_threads = threads;
    mo.weights = memory->factory();
    model = model::Model::load(file, mo);
    try {
        model->new_cache(1, nullptr, config.memory.kv_type);  // a KV type the model cannot take fails here, at start
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
    }
    const MemorySetup& ms = memory->setup();
    batch_tokens = ms.batch_tokens;
    model->set_max_batch_tokens(batch_tokens);
    kv_budget = ms.kv_budget;
    sched = std::make_unique<Scheduler>(config.limits, batch_tokens);
    log(6, "memory " + ms.plan.summary() + "; budget from " + ms.budget.source);
    if (!ms.plan.fits) log(4, "the model does not fit the memory budget in the chosen mode; expect the kernel to reclaim or kill");
    tokenizer = tokenizer::Tokenizer::from_gguf(*file);
    if (tokenizer->n_vocab() > model->hparams().n_vocab)
        throw std::runtime_error("the vocabulary has " + std::to_string(tokenizer->n_vocab()) + " tokens but the model only " +
                                 std::to_string(model->hparams().n_vocab) + " embeddings");
    if (!config.draft_path.empty()) {
        draft = std::make_unique<Draft>(config.draft_path, *tokenizer, threads, batch_tokens, config.memory.kv_type, config.draft_p_min);
        log(6, "draft model " + config.draft_path + " (" + std::to_string(draft->weight_bytes() >> 20) + " MiB) guesses for speculative decoding");
    }
    if (!config.chat_template.empty()) {
        model_family = chat::chat_family_from_name(config.chat_template);
    } else if (auto jinja = file->get_string("tokenizer.chat_template")) {
        try {
            model_template = std::make_unique<chat::Template>(*jinja);
        } catch (const chat::TemplateError& e) {
            model_template_problem = std::string("the model's chat template does not parse: ") + e.what();
            try {
                model_family = chat::chat_family_for_template(*jinja);
                log(4, model_template_problem + "; using the built-in " + std::string(chat::chat_family_name(*model_family)) + " format");
            } catch (const chat::ChatTemplateError&) {
                log(4, model_template_problem);
            }
        }
    } else {
        model_template_problem = "the model has no chat template (tokenizer.chat_template); choose one with chat_template";
    }
    limits = config.limits;
}

Engine::Engine(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {
    Impl& m = *impl_;
    std::vector<std::string> problems;
    for (auto& s : m.store.load_all(problems)) m.sessions.emplace(SessionKey{s->uid, s->name}, std::move(s));
    for (const auto& p : problems) m.log(4, p);
    m.thread = std::thread([&m] { m.loop(); });
}

Engine::~Engine() { shutdown(0); }

Session* Engine::Impl::reserve_session(const GenerateRequest& r) {
    if (r.session.empty()) return nullptr;
    auto it = sessions.find(SessionKey{r.uid, r.session});
    if (it == sessions.end()) {
        const auto own = std::count_if(sessions.begin(), sessions.end(), [&](const auto& kv) { return kv.second->uid == r.uid; });
        if (static_cast<int32_t>(sessions.size()) >= limits.max_sessions)
            throw EngineError(Errc::Busy, "too many sessions (" + std::to_string(limits.max_sessions) + "); delete some");
        if (own >= limits.max_sessions_per_user)
            throw EngineError(Errc::Busy, "you have " + std::to_string(own) + " sessions, the limit; delete some");
        auto s = std::make_unique<Session>();
        s->name = r.session;
        s->uid = r.uid;
        s->created = s->last_used = unix_now();
        it = sessions.emplace(SessionKey{r.uid, r.session}, std::move(s)).first;
    }
    Session& s = *it->second;
    if (s.busy) throw EngineError(Errc::Busy, "session \"" + r.session + "\" is busy with another request");
    s.busy = true;
    return &s;
}

// A chat request's built-in family, or null for the model's own template.
std::optional<chat::ChatFamily> Engine::Impl::chat_family(const GenerateRequest& request) const {
    if (!request.chat_template.empty()) {
        try {
            return chat::chat_family_from_name(request.chat_template);
        } catch (const chat::ChatTemplateError& e) {
            throw EngineError(Errc::InvalidParams, e.what(), "chat_template");
        }
    }
    if (!model_family && !model_template)
        throw EngineError(Errc::InvalidParams, "cannot render messages: " + model_template_problem, "chat_template");
    return model_family;
}

chat::ReasoningSyntax Engine::reasoning_syntax(const GenerateRequest& request) const {
    const Impl& m = *impl_;
    std::optional<chat::ChatFamily> family;
    try {
        family = m.chat_family(request);
    } catch (const EngineError&) {
        return {};  // submit() refuses the request
    }
    if (family) return chat::Prompt(*family, *m.tokenizer).reasoning("");
    const std::string source(m.file->get_string("tokenizer.chat_template").value_or(""));
    return chat::Prompt(*m.model_template, *m.tokenizer, request.template_variables).reasoning(source);
}

uint64_t Engine::submit(GenerateRequest request, std::shared_ptr<Sink> sink) {
    Impl& m = *impl_;
    const std::optional<chat::ChatFamily> family = request.messages.empty() ? std::nullopt : m.chat_family(request);
    if (request.infill) check_infill(request, *m.tokenizer);
    if (request.sampling.penalty_last_n < 0) request.sampling.penalty_last_n = m.context;
    std::lock_guard lk(m.mu);
    if (m.sched->stopping()) throw EngineError(Errc::ShuttingDown, "the daemon is shutting down");
    check_request(request, m.limits, m.model->hparams().n_vocab);
    const bool reranker = m.model->hparams().pooling == model::Pooling::Rank;
    if (!request.embed.empty() && std::holds_alternative<RerankPair>(request.embed[0]) && !reranker)
        throw EngineError(Errc::InvalidParams,
                          "this model is not a reranker: its pooling_type is not rank (a cross-encoder with a classification head, "
                          "or Qwen3-Reranker)", "model");
    if (request.speculative == Speculative::Draft && !m.draft)
        throw EngineError(Errc::InvalidParams, "speculative = draft needs a draft model (model.draft), and none is configured",
                          "speculative");
    if (request.embed.empty() && !m.model->hparams().output_head)
        throw EngineError(Errc::InvalidParams, "this model has no output layer: it computes embeddings only (embed, /v1/embeddings)",
                          request.prompt ? "prompt" : "messages");
    const std::chrono::milliseconds limit(m.limits.request_timeout_ms);
    if (limit.count() > 0 && (request.timeout.count() == 0 || request.timeout > limit)) request.timeout = limit;
    m.sched->check_room();
    Session* session = m.reserve_session(request);
    const uint64_t handle = m.next_handle++;
    m.requests_total++;
    const auto now = Clock::now();
    const auto deadline = request.timeout.count() > 0 ? now + request.timeout : Clock::time_point::max();
    const uint32_t uid = request.uid;
    m.queued.emplace(handle, Pending{handle, std::move(request), std::move(sink), session, family, now});
    m.sched->submit(handle, uid, now, deadline);
    return handle;
}

void Engine::cancel(uint64_t handle) { impl_->sched->cancel(handle); }

std::vector<int32_t> Engine::tokenize(std::string_view text, bool add_special, bool parse_special) const {
    return impl_->tokenizer->encode(text, add_special, parse_special);
}

std::string Engine::detokenize(const std::vector<int32_t>& ids) const {
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= impl_->tokenizer->n_vocab())
            throw EngineError(Errc::InvalidParams,
                              "token id " + std::to_string(ids[i]) + " is outside the vocabulary of " + std::to_string(impl_->tokenizer->n_vocab()),
                              "tokens[" + std::to_string(i) + "]");
    return impl_->tokenizer->decode(ids, false);
}

Session& Engine::Impl::find_session(const std::string& name, uint32_t uid) const {
    auto it = sessions.find(SessionKey{uid, name});
    if (it == sessions.end())
        throw EngineError(Errc::SessionNotFound, "no session \"" + name + "\" of uid " + std::to_string(uid));
    return *it->second;
}

std::string Engine::Impl::session_text(const Session& s) const { return s.chat ? std::string() : tokenizer->decode(s.tokens, false); }

std::vector<SessionInfo> Engine::list_sessions(uint32_t uid) const {
    std::lock_guard lk(impl_->mu);
    std::vector<SessionInfo> out;
    for (const auto& [key, s] : impl_->sessions)
        if (s->uid == uid || uid == 0) out.push_back(s->info(false, {}));
    return out;
}

SessionInfo Engine::session_info(const std::string& name, uint32_t uid) const {
    std::lock_guard lk(impl_->mu);
    const Session& s = impl_->find_session(name, uid);
    return s.info(true, impl_->session_text(s));
}

void Engine::reset_session(const std::string& name, uint32_t uid) {
    Impl& m = *impl_;
    std::lock_guard lk(m.mu);
    Session& s = m.find_session(name, uid);
    if (s.busy) throw EngineError(Errc::Busy, "session \"" + name + "\" is busy with a request");
    s.tokens.clear();
    s.conversation.clear();
    s.chat = false;
    s.cache.reset();
    s.last_used = unix_now();
    m.store.drop_cache(s);
    m.store.save(s);
}

void Engine::delete_session(const std::string& name, uint32_t uid) {
    Impl& m = *impl_;
    std::lock_guard lk(m.mu);
    Session& s = m.find_session(name, uid);
    if (s.busy) throw EngineError(Errc::Busy, "session \"" + name + "\" is busy with a request");
    m.store.remove(s);
    m.sessions.erase(SessionKey{uid, name});
}

Clock::duration Engine::stalled_for() const {
    const Impl& m = *impl_;
    const uint64_t progress = m.beats.load(std::memory_order_relaxed) + m.model->layers_done();
    std::lock_guard lk(m.watch_mu);
    const auto now = Clock::now();
    if (m.idle || progress != m.seen_progress) {
        m.seen_progress = progress;
        m.seen_at = now;
    }
    return now - m.seen_at;
}

void Engine::update_limits(const Limits& limits) {
    std::lock_guard lk(impl_->mu);
    impl_->limits = limits;
    impl_->sched->update_limits(limits);
}

void Engine::shutdown(int grace_ms) {
    Impl& m = *impl_;
    if (!m.sched->stopping()) m.sched->stop(Clock::now() + std::chrono::milliseconds(std::max(0, grace_ms)));
    if (m.thread.joinable()) m.thread.join();
    std::lock_guard lk(m.mu);
    for (const auto& [key, s] : m.sessions) {
        try {
            m.store.save(*s);
            m.store.save_cache(*s);
        } catch (const std::exception& e) {
            m.log(3, "cannot save session " + s->name + " of uid " + std::to_string(s->uid) + ": " + e.what());
        }
    }
}

}  // namespace strata::engine
