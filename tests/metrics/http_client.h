#pragma once

// A minimal HTTP/1.1 client over a plain socket, for tests of the /metrics
// endpoint: one request, Connection: close, read to EOF (10 s timeout).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tests/testing/loopback.h"

namespace compatd::testing {

struct HttpResponse {
  int status = 0;
  std::string headers;  // raw, lower-cased names
  std::string body;
};

inline absl::StatusOr<HttpResponse> HttpRequest(int port,
                                                absl::string_view method,
                                                absl::string_view path) {
  const int fd = ConnectLoopback(port, timeval{10, 0});
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("connect to port ", port));
  }
  const std::string request =
      absl::StrCat(method, " ", path,
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  if (send(fd, request.data(), request.size(), 0) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("send failed");
  }
  std::string raw;
  char buffer[4096];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    raw.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) {
    return absl::DataLossError(absl::StrCat("no header end in: ", raw));
  }
  HttpResponse response;
  response.headers = absl::AsciiStrToLower(raw.substr(0, end));
  response.body = raw.substr(end + 4);
  std::vector<absl::string_view> status_line =
      absl::StrSplit(absl::string_view(raw).substr(0, raw.find("\r\n")), ' ');
  if (status_line.size() < 2 ||
      !absl::SimpleAtoi(status_line[1], &response.status)) {
    return absl::DataLossError(absl::StrCat("bad status line in: ", raw));
  }
  return response;
}

}  // namespace compatd::testing
