// daemon/host/metrics.h — GET /metrics: the engine's status, the daemon's counters and the
// latency histograms (per endpoint) in the Prometheus text exposition format 0.0.4. Owns: metric names, types and help texts.
// Must not touch: HTTP (http_routes.cpp serves the text).
#pragma once

#include <string>

#include "engine/engine.h"
#include "transport/server.h"

namespace strata::daemon {

std::string prometheus_text(const engine::Status& status, const Counters& counters, size_t open_connections,
                            const Latency& latency);

}  // namespace strata::daemon
