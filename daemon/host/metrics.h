// daemon/host/metrics.h — GET /metrics: the status figures (figures.h, which names them,
// types them and has their help texts) and the latency histograms (per endpoint) in the
// Prometheus text exposition format 0.0.4. Owns: that format, the histograms' names and help texts.
// Must not touch: HTTP (http_routes.cpp serves the text).
#pragma once

#include <string>

#include "figures/figures.h"
#include "host/latency.h"

namespace strata::daemon {

std::string prometheus_text(const figures::Snapshot& status, const Latency& latency);

}  // namespace strata::daemon
