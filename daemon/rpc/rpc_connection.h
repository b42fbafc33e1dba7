// daemon/rpc/rpc_connection.h — one native-protocol connection: reads request lines (at most
// server.max_request_bytes each; a longer line is answered with invalid_request and the
// rest of it is skipped without being buffered), dispatches them, keeps its generate
// and embed requests in flight (up to server.max_requests_per_connection) and writes their token
// notifications and results through a bounded output queue. Stops reading while half the
// output buffer is unsent (a client that floods requests waits for its answers); cancels
// its requests and closes when the client goes away or lets the buffer overflow (tokens
// keep coming while it does not read). The first request line, and any line begun, must
// be complete within server.idle_timeout (else an error and the connection closes);
// between requests a connection may wait (an interactive chat). On TCP (server.tcp_jsonrpc)
// a connection acts for the user of the API key it gives in an `authenticate` call, its
// first (unless the listener runs without keys); on the Unix socket for its peer's uid.
// Owns: the connection's request bookkeeping and its identity.
// Must not touch: the JSON-RPC envelope (jsonrpc.h), method semantics (methods.h).
#pragma once

#include <array>
#include <boost/json/value.hpp>
#include <map>
#include <memory>
#include <string>

#include "rpc/jsonrpc.h"
#include "protocol/reply_stream.h"
#include "transport/client_connection.h"

namespace strata::daemon {

class RpcConnection final : public ClientConnection {
public:
    // `received`: the bytes already read while the protocol was being recognised.
    RpcConnection(Server& server, Socket socket, Peer peer, Server::Slot slot, std::string received);

    // `input_ended`: the client already shut its writing side.
    void start(bool input_ended);
    void refuse(const ApiError& error);  // answers every line with nothing but this error: sends it and closes

    void cancel_requests() override;
    void close_when_idle() override;

    void on_text(uint64_t key, std::string text) override;
    void on_done(uint64_t key, engine::Result result) override;
    void on_error(uint64_t key, ApiError error) override;

private:
    struct InFlight {
        std::optional<boost::json::value> id;  // absent: sent as a notification, nothing is answered
        bool stream = true;
        uint64_t handle = 0;
        std::string session;
        uint64_t seed = 0;
        std::optional<bool> embed_base64;  // an `embed` request: its encoding (absent: a generation)
        chat::ReasoningSyntax reasoning;   // a chat reply with thinking: "reasoning" apart from "text"
        std::optional<ReplyStream> reply;  // and its stream
    };
    void send_parts(const InFlight& entry, const ChatReply& parts);  // a token notification

    void feed(std::string_view bytes);
    bool consume(std::string_view bytes);  // false: stopped early, the rest is in held_
    bool output_backed_up() const;
    void read();
    void on_read(boost::system::error_code ec, size_t count);
    void handle_line(std::string_view line);
    void dispatch(RpcRequest& request);
    void check_room(const RpcRequest& request) const;  // throws unless one more request may start
    void start_generate(RpcRequest& request);
    void start_embed(RpcRequest& request);
    void cancel(const RpcRequest& request);
    boost::json::value authenticate(const RpcRequest& request);
    void finish(uint64_t key, const std::function<std::string(const boost::json::value&)>& answer);
    void end_of_input();
    void request_overdue() override;
    void close_if_done();

    size_t requests_in_flight() const override { return in_flight_.size(); }
    void forget_requests() override { in_flight_.clear(); }

    std::string pending_;  // received before start()
    std::array<char, 65536> read_buffer_{};
    std::string held_;  // received but not yet taken while the output was backed up
    std::string line_;
    bool skipping_line_ = false;  // the rest of an over-long line is being discarded
    bool input_ended_ = false;
    bool had_request_ = false;    // a complete (or over-long) request line arrived
    bool closing_ = false;        // close once nothing is in flight and the output is sent
    uint64_t next_key_ = 1;
    std::map<uint64_t, InFlight> in_flight_;
    std::optional<uint32_t> uid_;  // whom requests run for; none on TCP before `authenticate`
};

}  // namespace strata::daemon
