// engine/status.cpp — what the engine reports about itself: its status figures (one
// snapshot of the table in figures/figures.h) and the model it serves.
#include <unistd.h>

#include <fstream>
#include <map>

#include "engine/engine_impl.h"

namespace strata::engine {
namespace {

uint64_t rss_bytes() {
    std::ifstream in("/proc/self/statm");
    uint64_t pages = 0, resident = 0;
    in >> pages >> resident;
    return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

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
    st.set("weights_resident_bytes", ms.plan.resident_bytes);
    st.set("memory_pressure_events", m.memory_pressure_events);
    st.set("memory_released_bytes", m.memory_released_bytes);
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
    st.set("speculative_passes", m.spec_passes);
    st.set("speculative_guessed", m.spec_guessed);
    st.set("speculative_accepted", m.spec_accepted);
    st.set("speculative_accept_rate", m.spec_guessed ? double(m.spec_accepted) / double(m.spec_guessed) : 0);
    st.set("ngram_pool_entries", uint64_t(m.ngram_pool.entries()));
    st.set("ngram_pool_bytes", m.ngram_pool.bytes());
    st.set("speculative_tokens_per_pass", m.spec_passes ? double(m.spec_tokens) / double(m.spec_passes) : 0);
    st.set("draft_model", m.draft ? m.draft->path() : std::string());
    st.set("draft_passes", m.draft ? m.draft->passes() : uint64_t(0));
    const double draft_seconds = m.draft ? m.draft->seconds() : 0;
    st.set("draft_time_share", draft_seconds > 0 ? draft_seconds / (draft_seconds + m.pass_seconds) : 0);
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

}  // namespace strata::engine
