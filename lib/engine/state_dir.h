// engine/state_dir.h — the directory where sessions are kept: private to the daemon's user
// (0700, files 0600, whatever the umask), held by one daemon at a time (an exclusive lock
// on DIR/.lock, which records the holder's pid), and written durably (a temporary file,
// fsync, rename over the old file, fsync of the directory: a crash leaves the old file or
// the new one, never a truncated one).
// Owns: those file-system calls. Must not touch: what the files contain (session.cpp, kv/).
#pragma once

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>

namespace strata::engine {

// Replaces `dir`/`name` with what `write` puts into the FILE (mode 0600), durably (for files
// kept beside the sessions, in a directory the daemon's StateDir holds). `write` throws on
// failure; nothing is replaced then. Throws std::system_error.
void write_file_durably(const std::string& dir, const std::string& name, const std::function<void(std::FILE*)>& write);

// The directory cannot be made, made private, or locked (another daemon holds it).
class StateDirError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class StateDir {
public:
    StateDir() = default;  // none: nothing is kept
    // Creates `path` if needed, sets it to 0700 and takes its lock. Throws StateDirError.
    explicit StateDir(const std::string& path);
    StateDir(StateDir&& other) noexcept;
    StateDir& operator=(StateDir&& other) noexcept;
    StateDir(const StateDir&) = delete;
    StateDir& operator=(const StateDir&) = delete;
    ~StateDir();

    const std::string& path() const { return path_; }

    // Replaces DIR/`name` with what `write` puts into the FILE (mode 0600), durably.
    // `write` throws on failure; nothing is replaced then. Throws std::system_error.
    void write_file(const std::string& name, const std::function<void(std::FILE*)>& write) const;

private:
    std::string path_;
    int lock_fd_ = -1;
};

}  // namespace strata::engine
