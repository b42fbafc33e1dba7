// daemon/transport/sniff.h — recognising the protocol from a connection's first bytes: an HTTP/1.x
// request line ("GET /health HTTP/1.1") means HTTP, anything else the native protocol.
// Owns: that decision. Must not touch: sockets (connection.cpp reads the bytes).
#pragma once

#include <cstddef>
#include <string_view>

namespace strata::daemon {

enum class Protocol { NeedMore, Http, Native };

inline constexpr size_t kMaxRequestLineSniff = 8192;  // an HTTP request line longer than this is still HTTP

Protocol sniff(std::string_view first_bytes);

}  // namespace strata::daemon
