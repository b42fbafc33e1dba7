// client/strata/render.h — how strata shows the daemon's answers to a person: status and
// model fields, the latency table, the session table, one session's history, the speed line of -v. Pure
// functions from JSON to text.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>

namespace strata::client {

// One "name: value" line per field, names aligned; nested objects indented below their
// name; `*_bytes` fields also in KiB/MiB/GiB.
std::string render_fields(const boost::json::object& fields);

// status: its fields as render_fields shows them, the numbers of the status figures
// (figures.h) in their units (bytes also in KiB/MiB/GiB, seconds, per second, percent), then
// the latency percentiles as a table (endpoint, measure, count, p50, p90, p99).
std::string render_status(const boost::json::object& status);

// The session.list table. The OWNER column appears when some session is not `my_uid`'s.
std::string render_session_table(const boost::json::array& sessions, uint32_t my_uid);

// session.info: the fields, then the conversation turns (or the raw text).
std::string render_session(const boost::json::object& info);

// From a generate result: prompt and generation token counts, times and tokens/s.
std::string render_speed(const boost::json::object& result);

}  // namespace strata::client
