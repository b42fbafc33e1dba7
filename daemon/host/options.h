// daemon/host/options.h — stratad's command line: the configuration file to read, overrides of
// single keys (--model, --socket, ... and the general --set section.key=value), and the
// actions --check-config, --help and --version. Owns: option syntax and the usage text.
// Must not touch: what the keys mean (settings.cpp).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "host/settings.h"

namespace strata::daemon {

struct Options {
    std::string config_path = kDefaultConfigPath;
    bool config_required = false;  // --config given: the file must exist
    std::vector<Override> overrides;
    bool check_config = false;
    bool help = false;
    bool version = false;
};

// A malformed command line (exit status 2).
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

Options parse_options(int argc, char** argv);  // throws UsageError
std::string usage_text();

}  // namespace strata::daemon
