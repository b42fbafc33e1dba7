// client/strata/io.cpp — self-pipe signals, line reading, complete writes.
#include "io.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <system_error>

namespace strata::client {

namespace signals {

namespace {

int pipe_fds[2] = {-1, -1};

extern "C" void note_signal(int sig) {
    const int saved = errno;
    const unsigned char byte = static_cast<unsigned char>(sig);
    [[maybe_unused]] ssize_t n = ::write(pipe_fds[1], &byte, 1);
    errno = saved;
}

}  // namespace

int wait_fd() { return pipe_fds[0]; }

void install() {
    if (pipe_fds[0] >= 0) return;
    if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
    struct sigaction sa {};
    sa.sa_handler = note_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: blocking reads of the terminal return EINTR
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

int take() {
    unsigned char byte = 0;
    if (pipe_fds[0] < 0 || ::read(pipe_fds[0], &byte, 1) != 1) return 0;
    return byte;
}

}  // namespace signals

LineReader::Got LineReader::next(std::string& line, int timeout_ms) {
    for (;;) {
        if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
            line.assign(buffer_, 0, nl);
            buffer_.erase(0, nl + 1);
            return Got::Line;
        }
        if (eof_) {
            if (buffer_.empty()) return Got::Eof;
            line = std::move(buffer_);
            buffer_.clear();
            return Got::Line;
        }
        if (buffer_.size() > max_line) throw std::runtime_error("a line longer than 256 MiB");
        pollfd fds[2] = {{signals::wait_fd(), POLLIN, 0}, {fd_, POLLIN, 0}};
        const int ready = ::poll(fds, 2, timeout_ms);
        if (ready < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
        if (ready == 0) return Got::Timeout;
        if (ready < 0 || (fds[0].revents & POLLIN)) return Got::Signal;
        char chunk[65536];
        const ssize_t n = ::read(fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) return Got::Signal;
        if (n < 0) throw std::system_error(errno, std::generic_category(), "read");
        if (n == 0) eof_ = true;
        buffer_.append(chunk, static_cast<size_t>(n));
    }
}

int write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return 0;
}

void write_stdout(std::string_view data) {
    const int err = write_all(STDOUT_FILENO, data);
    if (err == EPIPE) throw StdoutClosed();
    if (err != 0) throw std::system_error(err, std::generic_category(), "writing standard output");
}

std::function<void(std::string_view)> reasoning_writer(bool show) {
    if (!show) return [](std::string_view) {};
    return [tty = ::isatty(STDERR_FILENO) != 0](std::string_view data) {
        if (!data.empty()) write_all(STDERR_FILENO, tty ? "\033[2m" + std::string(data) + "\033[0m" : std::string(data));
    };
}

}  // namespace strata::client
