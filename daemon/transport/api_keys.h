// daemon/transport/api_keys.h — who may use the TCP listener: the API keys of
// server.api_keys_file, one "KEY NAME" pair a line ('#' comments and blank lines allowed),
// each key naming the user it acts as. The file must be a regular file owned by root or by
// the daemon's own user and readable by nobody else (no group or other permission bits);
// keys are 16 to 256 printable ASCII characters, names 1 to 64 of A-Z a-z 0-9 . _ - ; a key
// listed twice is an error, a name may have several keys.
// A user of a key takes the place of a uid: sessions and per-user limits are counted
// under its own owner id, 2^31 + a hash of the name (uids from 2^31 up are left unused by
// Linux distributions), the same on every start and every host.
// Owns: the file's checks and syntax, key lookup (in time independent of where keys differ),
// the owner ids. Must not touch: HTTP (the caller reads the Authorization header).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strata::daemon {

struct ApiUser {
    std::string name;
    uint32_t uid = 0;  // the owner id of its sessions and limits
};

// The owner id of a key user (and of "anonymous", everyone on a TCP listener without keys).
uint32_t api_user_uid(std::string_view name);
inline constexpr const char* kAnonymousUser = "anonymous";

// A keys file that cannot be used; what() names the file, the line and what is wrong.
struct ApiKeysError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ApiKeys {
public:
    ApiKeys() = default;
    // Reads and checks `path`; `daemon_uid` is the user the daemon runs as. Throws ApiKeysError.
    static ApiKeys load(const std::string& path, uint32_t daemon_uid);

    // The user of `key`, if it is one of the file's.
    std::optional<ApiUser> find(std::string_view key) const;
    // The name of the key user whose owner id is `uid`, or "" (a system uid).
    std::string name_of(uint32_t uid) const;
    size_t size() const { return entries_.size(); }

private:
    struct Entry {
        std::string key;
        ApiUser user;
    };
    std::vector<Entry> entries_;
};

}  // namespace strata::daemon
