// engine/config.h — what the engine is configured with: the model, threads, per-session
// context, and the limits that protect it (checked before any work). The daemon fills
// this from strata.conf and the command line; the engine never reads files for it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "kv/kv_cache.h"
#include "model/hparams.h"
#include "weights/streamed.h"

namespace strata::engine {

using Clock = std::chrono::steady_clock;

// What a session that would outgrow its context does (limits.context_overflow).
enum class ContextOverflow {
    Error,           // the request fails with context_full
    TruncateMiddle,  // chat: keep the system message(s) and the new turn, drop the oldest turns
};

// Speculative decoding (engine.speculative, a request's `speculative`): none; n-gram guesses
// from the sequence's own tokens (guess.h); a draft model's (`model.draft`, draft.h);
// auto = n-grams, and the draft (when one is configured) when they have no guess.
enum class Speculative { Off, Ngram, Draft, Auto };
inline constexpr const char* kSpeculativeNames[] = {"off", "ngram", "draft", "auto"};  // by enum value
inline const char* speculative_name(Speculative s) { return kSpeculativeNames[static_cast<int>(s)]; }
inline std::optional<Speculative> speculative_from_name(std::string_view name) {
    for (int i = 0; i < 4; ++i)
        if (name == kSpeculativeNames[i]) return static_cast<Speculative>(i);
    return std::nullopt;
}
inline constexpr int32_t kMaxDraft = kv::kWindowSlack;  // engine.draft_max's ceiling: rejected guesses stay within the KV window slack

// Limits that can change while running (SIGHUP).
struct Limits {
    int32_t max_prompt_tokens = 8192;    // tokens a request may add to its session
    int32_t max_tokens = 4096;           // upper bound of a request's max_tokens
    int32_t default_max_tokens = 256;    // when the request does not say
    int32_t max_sessions = 256;          // named sessions in total
    int32_t max_sessions_per_user = 32;
    int32_t max_queued = 64;             // requests queued or running, all users together
    int32_t max_running_per_user = 8;    // more of one user wait in the queue
    int64_t session_idle_timeout_s = 30 * 86400;  // named sessions unused this long are deleted; 0 = never
    int64_t request_timeout_ms = 0;      // a request's deadline after submit (its own timeout may be shorter); 0 = none
    ContextOverflow context_overflow = ContextOverflow::Error;
};

// Where the engine reports problems: syslog priority (3 error, 4 warning, 6 info) and text.
using Logger = std::function<void(int priority, const std::string& message)>;

// How the model's weights are held (strata.conf [memory]).
struct MemoryConfig {
    std::string budget;                  // "6G", "75%", ... ; "" = cgroup limit, else MemAvailable
    std::string mode = "auto";           // auto, resident, streamed
    bool lock = false;                   // mlock the weights kept in memory
    uint64_t kv_bytes = 0;               // KV caches to keep in memory; 0 = one full context
    kv::KvType kv_type = kv::KvType::F16;  // how keys and values are stored
    weights::StreamOptions stream;       // streamer tuning (and its test fault hook)
};

// The per-session context for a model trained with `n_ctx_train` tokens: `configured`
// (0: the model's, at most 4096), never more than the model's nor less than 16. The
// engine warns when a configured value had to be lowered.
inline int32_t session_context(int32_t configured, int32_t n_ctx_train) {
    const int32_t wanted = configured > 0 ? configured : std::min<int32_t>(n_ctx_train, 4096);
    return std::clamp(wanted, 16, std::max(16, n_ctx_train));
}

struct Config {
    std::string model_path;
    std::string draft_path;              // model.draft: the draft model for speculative decoding; "" = none
    int threads = 0;                     // compute threads; 0 = physical cores
    int32_t context = 0;                 // per-session context; 0 = the model's, at most 4096 (session_context)
    int32_t batch_tokens = 0;            // tokens per forward pass (prompt chunks + decodes);
                                         // 0 = 512 resident, 2048 streamed (fewer passes per prompt)
    std::string chat_template;           // family name; "" = detect from the model
    Speculative speculative = Speculative::Auto;
    int32_t draft_max = 8;               // tokens guessed per verify pass, 1..kMaxDraft
    float draft_p_min = 0.1f;            // the draft model stops guessing below this probability of its token (draft.h)
    // How embeddings pool a model whose file names no pooling (decoder models): Last (the
    // only token that has seen the whole input under causal attention) or Mean.
    model::Pooling pooling = model::Pooling::Last;
    std::string state_dir;               // where sessions are saved; "" = not saved
    MemoryConfig memory;
    Limits limits;
    Logger log;                          // default: stderr with <N> priority prefixes
};

}  // namespace strata::engine
