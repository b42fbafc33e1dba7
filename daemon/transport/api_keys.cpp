// daemon/transport/api_keys.cpp — the API keys file (see api_keys.h).
#include "transport/api_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

namespace strata::daemon {
namespace {

constexpr size_t kMinKey = 16, kMaxKey = 256, kMaxName = 64;
constexpr off_t kMaxFile = 1 << 20;

bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > kMaxName)
        return false;
    for (const char c : name)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
            return false;
    return true;
}

bool valid_key(std::string_view key) {
    if (key.size() < kMinKey || key.size() > kMaxKey)
        return false;
    for (const char c : key)
        if (c < '!' || c > '~')
            return false;
    return true;
}

// Equal, in a time that depends on the lengths only, not on where the bytes differ.
bool same_key(std::string_view known, std::string_view given) {
    unsigned diff = known.size() == given.size() ? 0 : 1;
    for (size_t i = 0; i < given.size(); ++i)
        diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(known[i % known.size()]);
    return diff == 0;
}

std::string octal_mode(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

// The file's text, after checking who may read and change it.
std::string read_guarded(const std::string& path, uint32_t daemon_uid) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        throw ApiKeysError("server.api_keys_file " + path + ": cannot open it: " + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        throw ApiKeysError("server.api_keys_file " + path + ": " + std::strerror(errno));
    if (!S_ISREG(info.st_mode))
        throw ApiKeysError("server.api_keys_file " + path + " is not a regular file");
    if ((info.st_mode & 077) != 0)
        throw ApiKeysError("server.api_keys_file " + path + " is open to group or others (mode " +
                           octal_mode(info.st_mode) + "); API keys must be readable by their owner only: chmod 600 " +
                           path);
    if (info.st_uid != 0 && info.st_uid != daemon_uid)
        throw ApiKeysError("server.api_keys_file " + path + " belongs to uid " + std::to_string(info.st_uid) +
                           "; it must belong to root or to the user stratad runs as (uid " +
                           std::to_string(daemon_uid) + ")");
    if (info.st_size > kMaxFile)
        throw ApiKeysError("server.api_keys_file " + path + " is larger than 1 MiB");
    std::string text(static_cast<size_t>(info.st_size), '\0');
    size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw ApiKeysError("server.api_keys_file " + path + ": reading failed: " +
                               (n < 0 ? std::strerror(errno) : "the file shrank"));
        got += static_cast<size_t>(n);
    }
    return text;
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
            ++i;
        const size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t')
            ++i;
        if (i > start)
            out.push_back(line.substr(start, i - start));
    }
    return out;
}

}  // namespace

uint32_t api_user_uid(std::string_view name) {
    uint32_t hash = 2166136261u;  // FNV-1a
    for (const char c : name)
        hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
    const uint32_t uid = 0x80000000u | (hash & 0x7fffffffu);
    return uid == UINT32_MAX ? UINT32_MAX - 1 : uid;  // (uid_t)-1 means "no uid"
}

ApiKeys ApiKeys::load(const std::string& path, uint32_t daemon_uid) {
    const std::string text = read_guarded(path, daemon_uid);
    ApiKeys keys;
    std::map<uint32_t, std::string> names;  // owner id → name, to refuse two names sharing one
    size_t line_number = 0;
    for (size_t start = 0; start < text.size();) {
        const size_t end = std::min(text.find('\n', start), text.size());
        std::string_view line(text.data() + start, end - start);
        start = end + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        const auto fields = words(line);
        if (fields.empty() || fields[0].front() == '#')
            continue;
        const std::string where = path + ":" + std::to_string(line_number) + ": ";
        if (fields.size() != 2)
            throw ApiKeysError(where + "expected KEY NAME, got " + std::to_string(fields.size()) + " word(s)");
        if (!valid_key(fields[0]))
            throw ApiKeysError(where + "a key must be 16 to 256 printable ASCII characters without spaces");
        if (!valid_name(fields[1]))
            throw ApiKeysError(where + "the name '" + std::string(fields[1]) +
                               "' must be 1 to 64 characters of A-Z a-z 0-9 . _ -");
        if (keys.find(fields[0]))
            throw ApiKeysError(where + "this key is listed before (each key names one user)");
        const ApiUser user{std::string(fields[1]), api_user_uid(fields[1])};
        if (const auto [it, fresh] = names.emplace(user.uid, user.name); !fresh && it->second != user.name)
            throw ApiKeysError(where + "the names '" + it->second + "' and '" + user.name +
                               "' have the same owner id; rename one");
        keys.entries_.push_back({std::string(fields[0]), user});
    }
    if (keys.entries_.empty())
        throw ApiKeysError("server.api_keys_file " + path + " has no keys");
    return keys;
}

std::optional<ApiUser> ApiKeys::find(std::string_view key) const {
    std::optional<ApiUser> found;
    for (const Entry& entry : entries_)  // every entry is compared, found or not
        if (same_key(entry.key, key) && !found)
            found = entry.user;
    return found;
}

std::string ApiKeys::name_of(uint32_t uid) const {
    for (const Entry& entry : entries_)
        if (entry.user.uid == uid)
            return entry.user.name;
    return uid == api_user_uid(kAnonymousUser) ? kAnonymousUser : "";
}

}  // namespace strata::daemon
