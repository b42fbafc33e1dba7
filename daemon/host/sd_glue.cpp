// daemon/host/sd_glue.cpp — sd-daemon calls (see sd_glue.h).
#include "host/sd_glue.h"

#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include <cstring>
#include <stdexcept>

#include "host/log.h"

namespace strata::daemon::sd {

std::optional<int> listen_fd() {
    const int count = sd_listen_fds(1);
    if (count < 0)
        throw std::runtime_error(std::string("cannot read the sockets passed by systemd: ") + std::strerror(-count));
    for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + count; ++fd) {
        if (sd_is_socket_unix(fd, SOCK_STREAM, 1, nullptr, 0) > 0) {
            if (count > 1)
                log::warning("systemd passed ", count, " sockets; serving fd ", fd, " only");
            return fd;
        }
    }
    if (count > 0)
        throw std::runtime_error("systemd passed " + std::to_string(count) +
                                 " socket(s), but none is a listening Unix stream socket");
    return std::nullopt;
}

void notify(const std::string& state) {
    const int result = sd_notify(0, state.c_str());
    if (result < 0)
        log::debug("sd_notify failed: ", std::strerror(-result));
}

std::optional<std::chrono::microseconds> watchdog_interval() {
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
        return std::nullopt;
    return std::chrono::microseconds(usec / 2);
}

}  // namespace strata::daemon::sd
