// client/strata/rpc.h — one connection to stratad speaking newline-delimited JSON-RPC 2.0
// (see strata-protocol(7)): connecting through the socket candidates, plain calls, and a
// streamed `generate` that a first Ctrl-C cancels. The failures main() turns into exit
// codes are the exception types below.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "io.h"
#include "socket_lookup.h"

namespace strata::client {

// No daemon answers at any socket candidate (exit 3).
struct ConnectError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The connection failed or the daemon sent something unreadable before the answer was
// complete (exit 4).
struct BrokenConnection : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The daemon answered with a JSON-RPC error (exit 1). what() is the daemon's message,
// with the parameter at fault when the daemon names one.
struct DaemonError : std::runtime_error {
    DaemonError(const std::string& message, std::string type) : std::runtime_error(message), type(std::move(type)) {}
    std::string type;  // error.data.type: "invalid_params", "busy", ...
};
// A signal ended the command (exit 128 + signal).
struct Interrupted {
    int signal;
};

class RpcClient {
public:
    // Connects to the first candidate that accepts; throws ConnectError naming every
    // candidate tried and why it failed, and which of `elsewhere` (not used, only probed
    // then) a daemon answers at.
    static RpcClient connect(const std::vector<SocketCandidate>& candidates,
                             const std::vector<SocketCandidate>& elsewhere = {});

    RpcClient(RpcClient&& other) noexcept;
    RpcClient& operator=(RpcClient&&) = delete;
    ~RpcClient();

    // --json: every line received is copied to standard output as it arrives.
    void echo_lines(bool on) { echo_ = on; }

    // Sends one request and waits for its result; throws DaemonError, BrokenConnection,
    // Interrupted (any signal: nothing is running that would need cancelling).
    boost::json::object call(std::string_view method, boost::json::object params = {});

    struct Outcome {
        boost::json::object result;
        bool cancelled = false;  // the user pressed Ctrl-C and the request was cancelled
        bool cut_off = false;    // the daemon cancelled it (shutdown, a limit): the reply is incomplete (exit 5)
        bool timed_out = false;  // it reached its deadline (finish_reason "timeout"): incomplete (exit 6)
    };
    // Sends a generate request and passes each streamed piece of text to `on_text` (not
    // called while lines are echoed: they are the output) until the result arrives.
    // The first signal sends `cancel` and waits a few seconds at most for the cancelled
    // result: after SIGINT the outcome says `cancelled`; after SIGTERM or SIGHUP, and on a
    // second signal or when the wait runs out, Interrupted is thrown.
    // A reasoning model's thinking ("reasoning" beside "text") goes to `on_reasoning`.
    Outcome generate(boost::json::object params, const std::function<void(std::string_view)>& on_text,
                     const std::function<void(std::string_view)>& on_reasoning = [](std::string_view) {});

private:
    explicit RpcClient(int fd) : fd_(fd), reader_(fd) {}

    int64_t send(std::string_view method, boost::json::object params);
    // The next message; Interrupted-style outcomes are reported through `got`.
    LineReader::Got receive(boost::json::object& message, int timeout_ms);

    int fd_;
    LineReader reader_;
    int64_t next_id_ = 1;
    bool echo_ = false;
};

}  // namespace strata::client
