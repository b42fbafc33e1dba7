// engine/engine.cpp — the thread-safe front of the engine: loading, admission control
// (every limit is checked before a request is queued), sessions, status, shutdown.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "engine/engine_impl.h"
#include "sampling/logprobs.h"

namespace strata::engine {

std::string_view errc_name(Errc code) {
    switch (code) {
        case Errc::InvalidParams: return "invalid_params";
        case Errc::SessionNotFound: return "session_not_found";
        case Errc::Busy: return "busy";
        case Errc::ContextFull: return "context_full";
        case Errc::ModelError: return "model_error";
        case Errc::ShuttingDown: return "shutting_down";
        case Errc::Internal: return "internal_error";
    }
    return "internal_error";
}

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

uint64_t rss_bytes() {
    std::ifstream in("/proc/self/statm");
    uint64_t pages = 0, resident = 0;
    in >> pages >> resident;
    return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

// An embeddings request: no session, and no empty input or token id outside the vocabulary
// (lengths are checked once tokenized, on the engine thread).
void check_embed_request(const GenerateRequest& r, int32_t n_vocab) {
    if (!r.session.empty()) throw EngineError(Errc::InvalidParams, "embeddings do not use a session", "session");
    for (size_t i = 0; i < r.embed.size(); ++i) {
        const std::string field = "input[" + std::to_string(i) + "]";
        const auto* ids = std::get_if<std::vector<int32_t>>(&r.embed[i]);
        if (ids ? ids->empty() : std::get<std::string>(r.embed[i]).empty())
            throw EngineError(Errc::InvalidParams, field + " is empty", field);
        if (!ids) continue;
        for (size_t j = 0; j < ids->size(); ++j)
            if ((*ids)[j] < 0 || (*ids)[j] >= n_vocab)
                throw EngineError(Errc::InvalidParams,
                                  field + "[" + std::to_string(j) + "]: token id " + std::to_string((*ids)[j]) +
                                      " is outside the vocabulary of " + std::to_string(n_vocab),
                                  field + "[" + std::to_string(j) + "]");
    }
}

void check_request(const GenerateRequest& r, const Limits& limits, int32_t n_vocab) {
    if (r.timeout.count() < 0)
        throw EngineError(Errc::InvalidParams, "timeout must not be negative", "timeout");
    if (!r.embed.empty()) return check_embed_request(r, n_vocab);
    if (r.prompt.has_value() == !r.messages.empty())
        throw EngineError(Errc::InvalidParams, "give exactly one of prompt and messages", r.prompt ? "messages" : "prompt");
    for (size_t i = 0; i < r.messages.size(); ++i) {
        const auto& role = r.messages[i].role;
        if (role != "system" && role != "user" && role != "assistant" && role != "tool")
            throw EngineError(Errc::InvalidParams, "role \"" + role + "\" is not system, user, assistant or tool",
                              "messages[" + std::to_string(i) + "].role");
    }
    if (!r.session.empty() && uses_tools(r))
        throw EngineError(Errc::InvalidParams, "tools and tool messages need a request without a session (send the whole conversation)",
                          "session");
    if (r.max_tokens < 1 || r.max_tokens > limits.max_tokens)
        throw EngineError(Errc::InvalidParams,
                          "max_tokens " + std::to_string(r.max_tokens) + " is out of range [1, " + std::to_string(limits.max_tokens) + "]",
                          "max_tokens");
    if (r.logprobs < -1 || r.logprobs > sampling::kMaxTopLogprobs)
        throw EngineError(Errc::InvalidParams, "logprobs " + std::to_string(r.logprobs) + " is out of range [0, " +
                                                   std::to_string(sampling::kMaxTopLogprobs) + "]", "logprobs");
    if (!r.session.empty() && !valid_session_name(r.session))
        throw EngineError(Errc::InvalidParams, "session name must be 1-64 characters of A-Z a-z 0-9 . _ - (not starting with .)", "session");
    try {
        sampling::validate(r.sampling, n_vocab);
        sampling::StopMatcher check(r.stop);
    } catch (const sampling::SamplingError& e) {
        throw EngineError(Errc::InvalidParams, e.what(), e.field());
    }
}

}  // namespace

bool uses_tools(const GenerateRequest& r) {
    return !r.tools.is_none() ||
           std::any_of(r.messages.begin(), r.messages.end(), [](const Message& m) { return m.role == "tool" || !m.tool_calls.is_none(); });
}

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

uint64_t Engine::submit(GenerateRequest request, std::shared_ptr<Sink> sink) {
    Impl& m = *impl_;
    std::optional<chat::ChatFamily> family;
    if (!request.messages.empty()) {
        if (!request.chat_template.empty()) {
            try {
                family = chat::chat_family_from_name(request.chat_template);
            } catch (const chat::ChatTemplateError& e) {
                throw EngineError(Errc::InvalidParams, e.what(), "chat_template");
            }
        } else if (m.model_family) {
            family = m.model_family;
        } else if (!m.model_template) {
            throw EngineError(Errc::InvalidParams, "cannot render messages: " + m.model_template_problem, "chat_template");
        }
    }
    if (request.sampling.penalty_last_n < 0) request.sampling.penalty_last_n = m.context;
    std::lock_guard lk(m.mu);
    if (m.sched->stopping()) throw EngineError(Errc::ShuttingDown, "the daemon is shutting down");
    check_request(request, m.limits, m.model->hparams().n_vocab);
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

Status Engine::status() const {
    const Impl& m = *impl_;
    std::lock_guard lk(m.mu);
    Status st;
    st.set("model", m.model->hparams().name);
    const MemorySetup& ms = m.memory->setup();
    const weights::Stats ws = m.model->weight_stats();
    st.set("weights_mode", std::string(weights::mode_name(ms.plan.mode)));
    st.set("memory_plan", ms.plan.summary());
    st.set("memory_budget_bytes", ms.budget.bytes);
    st.set("memory_budget_source", ms.budget.source);
    st.set("streamed_bytes_per_pass", ms.plan.streamed_bytes);
    st.set("weights_bytes_read", ws.bytes_read);
    st.set("read_bytes_per_s", ws.read_bytes_per_s());
    st.set("read_stall_s", ws.stall_s);
    st.set("read_retries", ws.retries);
    st.set("pass_bound_per_s", ms.plan.pass_bound(ws.read_bytes_per_s()));
    st.set("batch_tokens", m.batch_tokens);
    st.set("threads", m.model->n_threads());
    st.set("uptime_s", std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - m.started_at).count());
    st.set("sessions", static_cast<int32_t>(m.sessions.size()));
    st.set("requests_running", m.sched->running());
    st.set("requests_queued", m.sched->queued());
    st.set("requests_total", m.requests_total);
    st.set("requests_failed", m.requests_failed);
    st.set("prompt_tokens_total", m.prompt_tokens_total);
    st.set("completion_tokens_total", m.completion_tokens_total);
    st.set("cached_tokens_total", m.cached_tokens_total);
    st.set("sessions_expired", m.sessions_expired);
    st.set("messages_dropped", m.messages_dropped);
    st.set("forward_passes", m.forward_passes);
    double secs = 0, prompt = 0, gen = 0;
    for (const auto& r : m.recent) {
        secs += r.seconds;
        prompt += r.prompt_tokens;
        gen += r.generated_tokens;
    }
    st.set("generate_tps_recent", secs > 0 ? gen / secs : 0);
    st.set("prompt_tps_recent", secs > 0 ? prompt / secs : 0);
    st.set("kv_bytes", m.kv_ledger->bytes());
    st.set("kv_mapped_bytes", m.kv_ledger->mapped_bytes());
    st.set("kv_type", std::string(kv::kv_type_name(m.config.memory.kv_type)));
    st.set("kv_budget_bytes", m.kv_budget);
    st.set("kv_bytes_running", m.kv_kinds.running);
    st.set("kv_bytes_idle", m.kv_kinds.idle);
    st.set("kv_bytes_prefix", m.kv_kinds.prefix);
    st.set("kv_evictions", m.kv_evictions + m.prefixes.stats().evictions);
    st.set("prefix_cache_blocks", m.prefixes.entries());
    st.set("prefix_cache_lookups", m.prefixes.stats().lookups);
    st.set("prefix_cache_hits", m.prefixes.stats().hits);
    st.set("rss_bytes", rss_bytes());
    const uint64_t computed = m.prompt_tokens_total - std::min(m.cached_tokens_total, m.prompt_tokens_total) + m.completion_tokens_total;
    st.set("weights_bytes_read_per_token", computed ? double(ws.bytes_read) / double(computed) : 0);
    st.set("expert_cache_bytes", ws.expert_cache_bytes);
    st.set("expert_cache_hits", ws.expert_hits);
    st.set("expert_cache_misses", ws.expert_misses);
    st.set("expert_bytes_read", ws.expert_bytes_read);
    st.set("expert_cache_hit_rate", ws.expert_hit_rate());
    return st;
}

ModelInfo Engine::model_info() const {
    const Impl& m = *impl_;
    const auto& hp = m.model->hparams();
    ModelInfo mi;
    mi.name = hp.name;
    mi.arch = hp.arch;
    mi.path = m.config.model_path;
    mi.n_vocab = hp.n_vocab;
    mi.n_ctx_train = hp.n_ctx_train;
    mi.n_embd = hp.n_embd;
    mi.n_layer = hp.n_layer;
    mi.n_head = hp.n_head;
    mi.n_head_kv = hp.n_head_kv;
    mi.n_ff = hp.n_ff;
    mi.file_bytes = m.file->file_size();
    std::map<std::string, int> types;
    for (const auto& t : m.file->tensors()) {
        mi.n_params += static_cast<uint64_t>(t.elements());
        types[std::string(dtype_name(t.type))]++;
    }
    mi.tensor_types.assign(types.begin(), types.end());
    if (m.model_family) mi.chat_template = std::string(chat::chat_family_name(*m.model_family));
    else if (m.model_template) mi.chat_template = "jinja";
    mi.chat_template_source = std::string(m.file->get_string("tokenizer.chat_template").value_or(""));
    mi.context = m.context;
    return mi;
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
