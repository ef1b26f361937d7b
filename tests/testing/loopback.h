#pragma once

// A TCP connection to 127.0.0.1, the one way the tests, the soak and their
// HTTP helpers reach a server's port. Header-only, POSIX.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace compatd::testing {

// Connects to 127.0.0.1:`port` with `timeout` on every send and receive
// (zero: none). Returns the socket, or -1 with errno set (the socket closed).
inline int ConnectLoopback(int port, timeval timeout = {0, 0}) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (timeout.tv_sec != 0 || timeout.tv_usec != 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

}  // namespace compatd::testing
