#pragma once

// A stand-in for Prometheus' HTTP API on 127.0.0.1 for the fleet tests: it
// answers each request with what `handler` returns for its decoded query
// (after an optional delay), one connection at a time, and records the
// requests' heads. Stops (and joins) when destroyed.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace compatd::fleet {

struct FakeReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body{};
  std::chrono::milliseconds delay{0};
  // Send no Content-Length: the body ends when the connection closes.
  bool no_length = false;
};

class FakePrometheus {
 public:
  using Handler = std::function<FakeReply(const std::string& query)>;

  explicit FakePrometheus(Handler handler) : handler_(std::move(handler)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    listen(fd_, 16);
    thread_ = std::thread([this] { Run(); });
  }
  ~FakePrometheus() {
    stop_.store(true);
    thread_.join();
    close(fd_);
  }

  int port() const { return port_; }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_); }

  // The heads of the requests so far.
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

  // %XX and '+' decoded.
  static std::string Decode(absl::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '%' && i + 2 < text.size()) {
        out.push_back(static_cast<char>(
            std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
        i += 2;
      } else if (text[i] == '+') {
        out.push_back(' ');
      } else {
        out.push_back(text[i]);
      }
    }
    return out;
  }

 private:
  void Run() {
    while (!stop_.load()) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      Serve(client);
      close(client);
    }
  }

  void Serve(int client) {
    std::string head;
    char buffer[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      pollfd p{client, POLLIN, 0};
      if (poll(&p, 1, 2000) <= 0) return;
      const ssize_t n = recv(client, buffer, sizeof(buffer), 0);
      if (n <= 0) return;
      head.append(buffer, static_cast<size_t>(n));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(head);
    }
    std::string query;
    const size_t q = head.find("query=");
    if (q != std::string::npos) {
      const size_t end = head.find_first_of(" &", q);
      query = Decode(head.substr(q + 6, end - q - 6));
    }
    FakeReply reply = handler_(query);
    const auto until = std::chrono::steady_clock::now() + reply.delay;
    while (std::chrono::steady_clock::now() < until && !stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const std::string answer = absl::StrCat(
        "HTTP/1.1 ", reply.status, " X\r\nContent-Type: ", reply.content_type,
        reply.no_length
            ? std::string()
            : absl::StrCat("\r\nContent-Length: ", reply.body.size()),
        "\r\nConnection: close\r\n\r\n", reply.body);
    size_t sent = 0;
    while (sent < answer.size()) {
      const ssize_t n = send(client, answer.data() + sent, answer.size() - sent,
                             MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

// An instant vector answer: samples of (labels JSON, value).
inline std::string VectorAnswer(
    const std::vector<std::pair<std::string, std::string>>& samples) {
  std::string result{};
  for (const auto& [metric, value] : samples) {
    if (!result.empty()) result.append(",");
    absl::StrAppend(&result, "{\"metric\":", metric,
                    ",\"value\":[1764230400.5,\"", value, "\"]}");
  }
  return absl::StrCat(
      "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
      "\"result\":[",
      result, "]}}");
}

}  // namespace compatd::fleet
