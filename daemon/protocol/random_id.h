// daemon/protocol/random_id.h — random identifiers the daemon hands out (OpenAI response ids
// "chatcmpl-…", tool call ids "call_…"): hex digits from a per-thread generator seeded by
// the system's random device. Not secrets.
#pragma once

#include <cstddef>
#include <string>

namespace strata::daemon {

std::string random_hex(size_t digits);

}  // namespace strata::daemon
