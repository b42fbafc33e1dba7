// client/strata/commands.h — the strata commands. Each returns the exit status or throws
// one of the errors of rpc.h / options.h / io.h, which main() turns into exit codes.
#pragma once

#include "options.h"
#include "rpc.h"

namespace strata::client {

// The daemon ended a reply early (its result says "cancelled" though the user did not stop it).
inline constexpr int kExitCutOff = 5;
// A reply reached its deadline (--timeout, or the daemon's limits.request_timeout).
inline constexpr int kExitTimeout = 6;
inline constexpr const char* kTimeoutNote =
    "strata: the reply reached its deadline (--timeout or the daemon's limits.request_timeout); it is incomplete\n";

// Connects through --socket, $STRATA_SOCKET, $XDG_RUNTIME_DIR/strata.sock, the system socket.
RpcClient connect_for(const Options& options);

int run_generate(const Options& options);  // one completion of the arguments and/or stdin
int run_chat(const Options& options);      // interactive turns until end of input
int run_query(const Options& options);     // status, model, sessions list/show/rm/reset

}  // namespace strata::client
