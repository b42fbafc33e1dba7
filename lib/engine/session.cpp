// engine/session.cpp — session metadata and the session files.
//
// A .session file is text with length-prefixed fields, so any bytes survive:
//   strata-session 1
//   name <name>
//   uid <uid>
//   created <unix s>
//   last_used <unix s>
//   chat <0|1>
//   tokens <n>
//   <n ids separated by spaces>
//   messages <m>
//   then m times: <role> <content byte length>\n<content bytes>\n
#include "engine/session.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

namespace strata::engine {

namespace fs = std::filesystem;

SessionInfo Session::info(bool with_history, const std::string& text) const {
    SessionInfo i;
    i.name = name;
    i.uid = uid;
    i.tokens = static_cast<int32_t>(tokens.size());
    i.messages = static_cast<int32_t>(conversation.size());
    i.cached = cache != nullptr;
    i.busy = busy;
    i.created = created;
    i.last_used = last_used;
    if (with_history) {
        i.conversation = conversation;
        i.text = text;
    }
    return i;
}

bool valid_session_name(const std::string& name) {
    if (name.empty() || name.size() > 64 || name[0] == '.') return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    });
}

SessionStore::SessionStore(const std::string& dir, uint64_t model_id) : model_id_(model_id) {
    if (!dir.empty()) dir_ = StateDir(dir);
}

namespace {

// The file name of a session in its user's namespace, and the one before namespaces.
std::string file_name(const Session& s, const char* ext) { return std::to_string(s.uid) + "-" + s.name + ext; }
std::string legacy_name(const Session& s, const char* ext) { return s.name + ext; }

}  // namespace

std::string SessionStore::path(const Session& s, const char* ext) const { return dir_.path() + "/" + file_name(s, ext); }

namespace {

std::string encode(const Session& s) {
    std::ostringstream o;
    o << "strata-session 1\nname " << s.name << "\nuid " << s.uid << "\ncreated " << s.created << "\nlast_used " << s.last_used
      << "\nchat " << (s.chat ? 1 : 0) << "\ntokens " << s.tokens.size() << "\n";
    for (size_t i = 0; i < s.tokens.size(); ++i) o << (i ? " " : "") << s.tokens[i];
    o << "\nmessages " << s.conversation.size() << "\n";
    for (const auto& m : s.conversation) o << m.role << " " << m.content.size() << "\n" << m.content << "\n";
    return o.str();
}

// Parses a .session file; nullopt when it is not one or is damaged.
std::optional<Session> decode(const std::string& bytes) {
    std::istringstream in(bytes);
    std::string word;
    int version = 0;
    Session s;
    size_t n_tokens = 0, n_messages = 0;
    int chat = 0;
    auto field = [&](const char* key, auto& value) { return (in >> word) && word == key && (in >> value); };
    if (!(in >> word) || word != "strata-session" || !(in >> version) || version != 1) return std::nullopt;
    if (!field("name", s.name) || !field("uid", s.uid) || !field("created", s.created) || !field("last_used", s.last_used) ||
        !field("chat", chat) || !field("tokens", n_tokens) || n_tokens > bytes.size())
        return std::nullopt;
    s.chat = chat != 0;
    s.tokens.resize(n_tokens);
    for (auto& t : s.tokens)
        if (!(in >> t) || t < 0) return std::nullopt;
    if (!field("messages", n_messages) || n_messages > bytes.size()) return std::nullopt;
    for (size_t i = 0; i < n_messages; ++i) {
        Message m;
        size_t len = 0;
        if (!(in >> m.role >> len) || in.get() != '\n' || len > bytes.size()) return std::nullopt;
        m.content.resize(len);
        if (!in.read(m.content.data(), static_cast<std::streamsize>(len)) || in.get() != '\n') return std::nullopt;
        s.conversation.push_back(std::move(m));
    }
    if (!valid_session_name(s.name)) return std::nullopt;
    return s;
}

}  // namespace

void SessionStore::migrate(const Session& s, std::vector<std::string>& problems) const {
    for (const char* ext : {".session", ".kv"}) {
        std::error_code ec;
        const std::string old_path = dir_.path() + "/" + legacy_name(s, ext);
        if (fs::exists(old_path, ec)) fs::rename(old_path, path(s, ext), ec);
        if (ec) problems.push_back("cannot rename " + old_path + " into its user's namespace: " + ec.message());
    }
}

std::vector<std::unique_ptr<Session>> SessionStore::load_all(std::vector<std::string>& problems) const {
    std::vector<std::unique_ptr<Session>> out;
    if (!enabled()) return out;
    std::error_code ec;
    std::vector<fs::path> files;  // listed first: migrate() renames entries
    for (const auto& e : fs::directory_iterator(dir_.path(), ec))
        if (e.path().extension() == ".session") files.push_back(e.path());
    for (const fs::path& file_path : files) {
        std::ifstream in(file_path, std::ios::binary);
        auto s = decode(std::string(std::istreambuf_iterator<char>(in), {}));
        const std::string file = file_path.filename().string();
        if (!s || (file != file_name(*s, ".session") && file != legacy_name(*s, ".session"))) {
            problems.push_back("ignoring damaged session file " + file_path.string());
            continue;
        }
        if (file != file_name(*s, ".session")) migrate(*s, problems);
        out.push_back(std::make_unique<Session>(std::move(*s)));
    }
    if (ec) problems.push_back("cannot read the session directory " + dir_.path() + ": " + ec.message());
    return out;
}

void SessionStore::save(const Session& s) const {
    if (!enabled() || s.name.empty()) return;
    const std::string bytes = encode(s);
    dir_.write_file(file_name(s, ".session"), [&](std::FILE* out) {
        if (std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size())
            throw std::system_error(errno, std::generic_category(), "cannot write session " + s.name);
    });
}

void SessionStore::save_cache(const Session& s) const {
    if (!enabled() || s.name.empty() || !s.cache) return;
    dir_.write_file(file_name(s, ".kv"), [&](std::FILE* out) { s.cache->write(out, model_id_); });
}

std::optional<kv::KvCache> SessionStore::load_cache(const Session& s, const kv::Shape& shape, int32_t capacity,
                                                    std::shared_ptr<kv::Ledger> ledger, kv::KvType type) const {
    if (!enabled() || s.name.empty()) return std::nullopt;
    auto c = kv::KvCache::load(path(s, ".kv"), model_id_, shape, capacity, std::move(ledger), type);
    drop_cache(s);  // used once: from now on the live cache is the truth
    if (c && c->size() > static_cast<int32_t>(s.tokens.size())) return std::nullopt;
    return c;
}

void SessionStore::drop_cache(const Session& s) const {
    if (!enabled()) return;
    std::error_code ec;
    fs::remove(path(s, ".kv"), ec);
}

void SessionStore::remove(const Session& s) const {
    if (!enabled()) return;
    std::error_code ec;
    drop_cache(s);
    fs::remove(path(s, ".session"), ec);
}

}  // namespace strata::engine
