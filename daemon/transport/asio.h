// daemon/transport/asio.h — the Asio and Boost.JSON names the daemon uses, in one place.
// Owns: namespace aliases and the socket type (one type for Unix and TCP connections).
// Must not touch: anything else.
#pragma once

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

namespace strata::daemon {

namespace asio = boost::asio;
using Socket = asio::generic::stream_protocol::socket;

}  // namespace strata::daemon
