// daemon/protocol/random_id.cpp — random hex identifiers (see random_id.h).
#include "protocol/random_id.h"

#include <cstdio>
#include <random>

namespace strata::daemon {

std::string random_hex(size_t digits) {
    static thread_local std::mt19937_64 generator{std::random_device{}()};
    std::string out;
    while (out.size() < digits) {
        char chunk[17];
        std::snprintf(chunk, sizeof chunk, "%016llx", static_cast<unsigned long long>(generator()));
        out += chunk;
    }
    out.resize(digits);
    return out;
}

}  // namespace strata::daemon
