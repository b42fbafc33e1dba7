// engine/session.h — a session: one conversation's token history, chat turns and KV
// cache, owned by a uid; and the on-disk form that keeps sessions across restarts.
// Must not touch: scheduling (scheduler.cpp), sockets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/state_dir.h"
#include "kv/kv_cache.h"

namespace strata::engine {

struct Session {
    std::string name;                    // "" for an anonymous (one-request) session
    uint32_t uid = 0;
    std::vector<int32_t> tokens;         // the whole history; the cache holds a prefix of it
    std::vector<Message> conversation;   // chat sessions: the turns so far
    bool chat = false;                   // decided by the first request (messages vs prompt)
    std::unique_ptr<kv::KvCache> cache;  // null: rebuilt from `tokens` on next use
    bool busy = false;                   // a request holds it (engine thread only then)
    uint64_t kv_tick = 0;                // when its KV cache was last used (engine's use counter)
    int64_t created = 0, last_used = 0;  // unix seconds

    SessionInfo info(bool with_history, const std::string& text) const;
};

// Whether `name` is a valid session name: 1–64 of [A-Za-z0-9._-], not starting with '.'.
bool valid_session_name(const std::string& name);

// Sessions on disk, one namespace per user: DIR/<uid>-<name>.session holds the history and
// conversation (small, written after every request), DIR/<uid>-<name>.kv the KV cache
// (written at shutdown, restored lazily). Files of the layout before namespaces
// (DIR/<name>.session, .kv) are renamed into their owner's namespace when loaded.
class SessionStore {
public:
    // dir "" disables persistence (every operation does nothing); else the directory is
    // made private and locked (StateDir; throws StateDirError).
    SessionStore(const std::string& dir, uint64_t model_id);
    bool enabled() const { return !dir_.path().empty(); }
    uint64_t model_id() const { return model_id_; }

    // Every readable session; damaged files are skipped and reported in `problems`.
    std::vector<std::unique_ptr<Session>> load_all(std::vector<std::string>& problems) const;
    void save(const Session& s) const;           // history only; throws std::system_error
    void save_cache(const Session& s) const;     // the KV cache, when the session has one
    std::optional<kv::KvCache> load_cache(const Session& s, const kv::Shape& shape, int32_t capacity,
                                          std::shared_ptr<kv::Ledger> ledger, kv::KvType type) const;
    void drop_cache(const Session& s) const;
    void remove(const Session& s) const;

private:
    std::string path(const Session& s, const char* ext) const;
    void migrate(const Session& s, std::vector<std::string>& problems) const;
    StateDir dir_;
    uint64_t model_id_;
};

}  // namespace strata::engine
