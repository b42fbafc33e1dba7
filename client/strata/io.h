// client/strata/io.h — the POSIX plumbing under the client: signals noted through a
// self-pipe (so waits wake up on Ctrl-C), line-by-line reading of a file descriptor with
// a timeout, and complete writes. No protocol knowledge here.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace strata::client {

// Standard output was closed under us (e.g. `strata ... | head -1`): main() exits quietly.
struct StdoutClosed : std::runtime_error {
    StdoutClosed() : std::runtime_error("standard output is closed") {}
};

namespace signals {
// From now on SIGINT, SIGTERM and SIGHUP are noted (and interrupt blocking calls) instead
// of killing the process; SIGPIPE is ignored (a closed pipe shows up as EPIPE).
void install();
// The oldest noted signal, or 0 when none is pending. Never blocks.
int take();
// The self-pipe's read end, readable while a signal is pending (-1 before install()).
int wait_fd();
}  // namespace signals

// Reads `\n`-terminated lines from a file descriptor, waking up for noted signals.
class LineReader {
public:
    enum class Got { Line, Eof, Signal, Timeout };

    explicit LineReader(int fd) : fd_(fd) {}
    // The next line without its `\n` (a last unterminated line counts as a line). Signal:
    // a noted signal is waiting (fetch it with signals::take()). timeout_ms < 0 waits forever.
    // Throws std::system_error on read errors and std::runtime_error past `max_line` bytes.
    Got next(std::string& line, int timeout_ms = -1);

private:
    int fd_;
    std::string buffer_;
    bool eof_ = false;
    static constexpr size_t max_line = size_t(256) << 20;
};

// Writes all of `data`; returns 0 or the errno that stopped it.
int write_all(int fd, std::string_view data);
// Writes to standard output at once (the output streams); throws StdoutClosed on EPIPE.
void write_stdout(std::string_view data);
// What to do with a reasoning model's thinking: with `show` (--show-reasoning), write it to
// standard error, faint on a terminal, so that standard output stays the answer; else drop it.
std::function<void(std::string_view)> reasoning_writer(bool show);

}  // namespace strata::client
