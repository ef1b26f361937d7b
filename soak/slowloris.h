#pragma once

// Slowloris on /metrics and the front door.

#include "soak/common.h"
#include "soak/http_worker.h"

namespace compatd::soak {

// Slowloris: requests trickled a byte at a time, never finished, on
// /metrics and on the front door. compatd must close each within its header
// timeout (http::Server, 10 s) of the accept; /metrics scrapes and front
// door calls go on meanwhile.
class Slowloris {
 public:
  explicit Slowloris(Env* env) : env_(*env) {}

  void Run() {
    struct Conn {
      int fd = -1;
      int port = 0;
      bool metrics = false;
      size_t sent = 0;
      Clock::time_point opened;
    };
    const std::string request =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " +
        std::string(4096, 'z');
    std::vector<Conn> conns(2 * kSlowlorisPerPort);
    for (size_t i = 0; i < conns.size(); ++i) {
      conns[i].metrics = i < kSlowlorisPerPort;
      conns[i].port = conns[i].metrics ? env_.metrics_port : env_.http_port;
    }
    const auto limit = std::chrono::seconds(kHttpHeaderTimeoutSeconds + 5);
    while (!env_.stop.load()) {
      for (Conn& c : conns) {
        const auto now = Clock::now();
        if (c.fd < 0) {
          c.fd = testing::ConnectLoopback(c.port);
          c.sent = 0;
          c.opened = now;
          if (c.fd < 0) continue;
        }
        const std::string where = c.metrics ? "/metrics" : "front door";
        if (Closed(c.fd) || send(c.fd, request.data() + c.sent % request.size(),
                                 1, MSG_NOSIGNAL) != 1) {
          const double held =
              std::chrono::duration<double>(now - c.opened).count();
          max_held_ = std::max(max_held_, held);
          ++outcomes_[absl::StrCat(where, ": closed by compatd")];
          close(c.fd);
          c.fd = -1;
          continue;
        }
        ++c.sent;
        if (now - c.opened > limit) {
          env_.failures.Add(
              "slowloris connection held",
              absl::StrCat(where, ": a request trickled for ",
                           std::chrono::duration_cast<std::chrono::seconds>(
                               now - c.opened)
                               .count(),
                           " s (", c.sent,
                           " bytes) is still open; the header timeout is ",
                           kHttpHeaderTimeoutSeconds, " s"));
          ++outcomes_[absl::StrCat(where, ": still open (failure)")];
          close(c.fd);
          c.fd = -1;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    for (Conn& c : conns) {
      if (c.fd >= 0) close(c.fd);
    }
  }

  const Outcomes& outcomes() const { return outcomes_; }
  double max_held() const { return max_held_; }

 private:
  Env& env_;
  Outcomes outcomes_;
  double max_held_ = 0;
};

}  // namespace compatd::soak
