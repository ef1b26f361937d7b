#pragma once

// A small blocking HTTP/1.1 client for compatd-soak's front-door traffic: one
// keep-alive connection to 127.0.0.1, requests written whole or byte by
// byte, answers read with Content-Length or chunked bodies. Header-only,
// POSIX.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tests/testing/http_chunked.h"
#include "tests/testing/loopback.h"

namespace compatd::soak {

struct HttpAnswer {
  int status = 0;
  std::string headers;  // the head after the status line, lowercased
  std::string body;
  bool closes = false;  // "connection: close"

  // The value of header `name` (lowercase), or "".
  std::string Header(absl::string_view name) const {
    const std::string key = absl::StrCat("\r\n", name, ":");
    const size_t at = absl::StrCat("\r\n", headers).find(key);
    if (at == std::string::npos) return "";
    const size_t start = at + key.size() - 2;
    const size_t end = headers.find("\r\n", start);
    return std::string(absl::StripAsciiWhitespace(
        absl::string_view(headers).substr(start, end - start)));
  }
};

// Reads one answer from `fd`, `buffer` holding bytes already received (and
// keeping what follows the answer). DEADLINE_EXCEEDED when nothing complete
// came within `timeout`, UNAVAILABLE when the connection closed first.
inline absl::StatusOr<HttpAnswer> ReadHttpAnswer(
    int fd, std::string* buffer, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  auto fill = [&]() -> absl::Status {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return absl::DeadlineExceededError("no complete answer in time");
    }
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
      return absl::DeadlineExceededError("no complete answer in time");
    }
    char chunk[65536];
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      return absl::UnavailableError(absl::StrCat("the connection closed after ",
                                                 buffer->size(),
                                                 " bytes of an answer"));
    }
    buffer->append(chunk, static_cast<size_t>(n));
    return absl::OkStatus();
  };
  size_t head_end;
  while ((head_end = buffer->find("\r\n\r\n")) == std::string::npos) {
    if (absl::Status s = fill(); !s.ok()) return s;
  }
  HttpAnswer answer;
  const absl::string_view head = absl::string_view(*buffer).substr(0, head_end);
  const size_t line_end = head.find("\r\n");
  const absl::string_view status_line = head.substr(0, line_end);
  if (!absl::StartsWith(status_line, "HTTP/1.") || status_line.size() < 12 ||
      !absl::SimpleAtoi(status_line.substr(9, 3), &answer.status)) {
    return absl::DataLossError(
        absl::StrCat("bad status line \"", status_line, "\""));
  }
  answer.headers = absl::AsciiStrToLower(
      line_end == absl::string_view::npos ? "" : head.substr(line_end + 2));
  answer.closes = answer.Header("connection") == "close";
  buffer->erase(0, head_end + 4);
  if (answer.Header("transfer-encoding") == "chunked") {
    while (!absl::StrContains(*buffer, "\r\n0\r\n\r\n") &&
           !absl::StartsWith(*buffer, "0\r\n\r\n")) {
      if (absl::Status s = fill(); !s.ok()) return s;
    }
    const size_t last =
        buffer->find("0\r\n\r\n") == 0 ? 5 : buffer->find("\r\n0\r\n\r\n") + 7;
    absl::StatusOr<std::string> body =
        testing::DecodeChunked(absl::string_view(*buffer).substr(0, last));
    if (!body.ok()) return body.status();
    answer.body = *std::move(body);
    buffer->erase(0, last);
    return answer;
  }
  size_t length = 0;
  const std::string content_length = answer.Header("content-length");
  if (!content_length.empty() && !absl::SimpleAtoi(content_length, &length)) {
    return absl::DataLossError(
        absl::StrCat("bad content-length \"", content_length, "\""));
  }
  if (content_length.empty() && answer.closes) {
    // The body runs to the end of the connection.
    while (fill().ok()) {
    }
    length = buffer->size();
  }
  while (buffer->size() < length) {
    if (absl::Status s = fill(); !s.ok()) return s;
  }
  answer.body = buffer->substr(0, length);
  buffer->erase(0, length);
  return answer;
}

// One keep-alive connection to 127.0.0.1:port, opened on first use and
// again after the server closed it.
class HttpClient {
 public:
  explicit HttpClient(int port) : port_(port) {}
  ~HttpClient() { Close(); }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    buffer_.clear();
  }

  // `method` `target` with `body` (Content-Length) and `headers` ("Name:
  // value" lines). A request on a reused connection that the server had
  // closed in the meantime (nothing of an answer received) is sent once
  // more on a new connection, as HTTP clients do for idempotent requests.
  absl::StatusOr<HttpAnswer> Call(
      absl::string_view method, absl::string_view target,
      absl::string_view body = "", const std::vector<std::string>& headers = {},
      std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
    std::string request = absl::StrCat(
        method, " ", target, " HTTP/1.1\r\nHost: 127.0.0.1:", port_, "\r\n");
    for (const std::string& h : headers) absl::StrAppend(&request, h, "\r\n");
    if (!body.empty() || method == "POST" || method == "PUT") {
      absl::StrAppend(&request, "Content-Type: application/json\r\n",
                      "Content-Length: ", body.size(), "\r\n");
    }
    absl::StrAppend(&request, "\r\n", body);
    for (int attempt = 0;; ++attempt) {
      const bool reused = fd_ >= 0;
      if (!reused) {
        fd_ = testing::ConnectLoopback(port_);
        if (fd_ < 0) {
          return absl::UnavailableError(
              absl::StrCat("cannot connect to 127.0.0.1:", port_));
        }
      }
      absl::Status sent = SendAll(request);
      absl::StatusOr<HttpAnswer> answer =
          sent.ok() ? ReadHttpAnswer(fd_, &buffer_, timeout)
                    : absl::StatusOr<HttpAnswer>(sent);
      if (!answer.ok()) {
        const bool stale = reused && attempt == 0 && buffer_.empty() &&
                           absl::IsUnavailable(answer.status());
        Close();
        if (stale) continue;
        return answer.status();
      }
      if (answer->closes) Close();
      return answer;
    }
  }

 private:
  absl::Status SendAll(absl::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return absl::UnavailableError("send() failed");
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  int port_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace compatd::soak
