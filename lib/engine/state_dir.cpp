// engine/state_dir.cpp — the private, locked, durably written state directory (see state_dir.h).
#include "engine/state_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace strata::engine {
namespace {

std::system_error os_error(const std::string& what) { return std::system_error(errno, std::generic_category(), what); }

// The pid recorded in a lock file, or "" when unreadable.
std::string holder_of(int fd) {
    char text[32] = {};
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    std::string pid(text, n > 0 ? static_cast<size_t>(n) : 0);
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return pid;
}

void sync_directory(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw os_error("cannot open the directory " + dir);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) throw std::system_error(err, std::generic_category(), "cannot sync the directory " + dir);
}

}  // namespace

StateDir::StateDir(const std::string& path) : path_(path) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) throw StateDirError("cannot create the state directory " + path + ": " + ec.message());
    if (::chmod(path.c_str(), 0700) != 0)
        throw StateDirError("cannot make the state directory " + path + " private (mode 0700): " + std::strerror(errno));
    const std::string lock = path + "/.lock";
    lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd_ < 0) throw StateDirError("cannot open " + lock + ": " + std::strerror(errno));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        const std::string pid = holder_of(lock_fd_);
        ::close(lock_fd_);
        lock_fd_ = -1;
        if (err != EWOULDBLOCK) throw StateDirError("cannot lock " + lock + ": " + std::strerror(err));
        throw StateDirError("the state directory " + path + " is in use by another stratad (pid " +
                            (pid.empty() ? std::string("unknown") : pid) +
                            "); stop it or give this one another sessions.state_dir");
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
        throw StateDirError("cannot write " + lock + ": " + std::strerror(errno));
}

StateDir::StateDir(StateDir&& other) noexcept
    : path_(std::move(other.path_)), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

StateDir& StateDir::operator=(StateDir&& other) noexcept {
    if (this != &other) {
        if (lock_fd_ >= 0) ::close(lock_fd_);
        path_ = std::move(other.path_);
        lock_fd_ = std::exchange(other.lock_fd_, -1);
    }
    return *this;
}

StateDir::~StateDir() {
    if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

void StateDir::write_file(const std::string& name, const std::function<void(std::FILE*)>& write) const {
    write_file_durably(path_, name, write);
}

void write_file_durably(const std::string& dir, const std::string& name, const std::function<void(std::FILE*)>& write) {
    const std::string target = dir + "/" + name, tmp = target + ".tmp";
    ::unlink(tmp.c_str());  // a leftover (perhaps of another mode) is never reused
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw os_error("cannot create " + tmp);
    std::FILE* file = ::fdopen(fd, "wb");
    if (file == nullptr) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        throw std::system_error(err, std::generic_category(), "cannot open " + tmp);
    }
    try {
        write(file);
        if (std::fflush(file) != 0 || ::fsync(fd) != 0) throw os_error("cannot write " + tmp);
    } catch (...) {
        std::fclose(file);
        ::unlink(tmp.c_str());
        throw;
    }
    if (std::fclose(file) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw std::system_error(err, std::generic_category(), "cannot write " + tmp);
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw std::system_error(err, std::generic_category(), "cannot rename " + tmp);
    }
    sync_directory(dir);
}

}  // namespace strata::engine
