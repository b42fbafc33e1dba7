// daemon/transport/sniff.cpp — protocol recognition (see sniff.h).
#include "transport/sniff.h"

#include <array>

namespace strata::daemon {
namespace {

constexpr std::array<std::string_view, 7> kMethods{"GET ", "POST ", "HEAD ", "PUT ", "DELETE ", "OPTIONS ", "PATCH "};

// "METHOD SP target SP HTTP/1.x", with an optional trailing '\r'.
bool is_request_line(std::string_view line, std::string_view method) {
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    line.remove_prefix(method.size());
    const size_t space = line.find(' ');
    if (space == 0 || space == std::string_view::npos)
        return false;
    const std::string_view version = line.substr(space + 1);
    return version == "HTTP/1.1" || version == "HTTP/1.0";
}

}  // namespace

Protocol sniff(std::string_view bytes) {
    for (const std::string_view method : kMethods) {
        if (bytes.size() < method.size()) {
            if (method.starts_with(bytes))
                return Protocol::NeedMore;
            continue;
        }
        if (!bytes.starts_with(method))
            continue;
        const size_t end = bytes.find('\n');
        if (end == std::string_view::npos)
            return bytes.size() > kMaxRequestLineSniff ? Protocol::Http : Protocol::NeedMore;
        return is_request_line(bytes.substr(0, end), method) ? Protocol::Http : Protocol::Native;
    }
    return Protocol::Native;
}

}  // namespace strata::daemon
