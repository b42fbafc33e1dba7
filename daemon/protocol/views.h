// daemon/protocol/views.h — the engine's values (results, sessions, model, status figures) and the
// daemon's latency percentiles as the JSON
// objects of strata-protocol(7). Owns: field names and number formatting of those objects
// (non-finite numbers become 0 so that the output is always valid JSON).
// Must not touch: envelopes (jsonrpc.h), OpenAI shapes (openai.h).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <span>
#include <string>

#include "engine/engine.h"
#include "figures/figures.h"
#include "host/latency.h"

namespace strata::daemon {

boost::json::object usage_json(const engine::Usage& usage);
boost::json::object timings_json(const engine::Timings& timings);
// The native generate result; `session` "" is reported as null (anonymous).
boost::json::object result_json(const engine::Result& result, const std::string& session, uint64_t seed);
// Tokens with their log-probabilities, OpenAI's chat shape (also the native one):
// [{"token","logprob","bytes":[...],"top_logprobs":[{"token","logprob","bytes"}]}]. A token's
// text has invalid UTF-8 replaced (its exact bytes are in "bytes"); a log-probability of
// -infinity is written as -9999 (as OpenAI does).
boost::json::array logprobs_json(std::span<const engine::TokenLogprobs> tokens);
// A log-probability as JSON writes it.
double logprob_value(float logprob);
// A session.list entry; with `detailed`, session.info's conversation and text too.
boost::json::object session_json(const engine::SessionInfo& info, bool detailed);
boost::json::object model_info_json(const engine::ModelInfo& info);
// Every status figure under its name, in the table's order (figures.h).
boost::json::object status_json(const figures::Snapshot& status);
// The recent window's percentiles (seconds) per endpoint and measure, endpoints without
// requests in the window left out: {"window_s":300,"endpoints":{"generate":
// {"time_to_first_token":{"count":N,"p50":X,"p90":X,"p99":X},...},...}}.
boost::json::object latency_json(const Latency& latency);

double finite(double value);

}  // namespace strata::daemon
