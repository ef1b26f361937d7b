#pragma once

// header-only: the head of a large POST, then nothing, on the front door.

#include "soak/common.h"
#include "soak/http_worker.h"

namespace compatd::soak {

// Heads of large POSTs whose bodies never come (issue 36: four heads of a
// 16 MiB AdmissionReview reserved the HTTP ports' memory budget, and both
// ports answered 429 for 30 s): kHeaderOnlyAdmission to
// /admission/v1/validate declaring kMaxAdmissionBodyBytes (16 MiB, its
// bound), kHeaderOnlyAudit to /audit/v1/events declaring
// --max-http-body-bytes (3 MiB, its bound), reopened as compatd closes them.
// Every other head to /audit/v1/events declares 16 MiB instead, past its
// bound: that one must be refused at once with 413. A head within its bound
// must get no answer and be closed within the body timeout (http::Server,
// 30 s) + 5 s; meanwhile /healthz must answer 200 (once a second here; the
// light classes' p99 and the /metrics scrapes are judged by the run).
class HeaderOnly {
 public:
  explicit HeaderOnly(Env* env) : env_(*env), healthz_(env->http_port) {}

  void Run() {
    std::vector<Conn> conns(kHeaderOnlyAdmission + kHeaderOnlyAudit);
    for (size_t i = 0; i < conns.size(); ++i) {
      conns[i].audit = i >= kHeaderOnlyAdmission;
    }
    auto next_probe = Clock::now();
    while (!env_.stop.load()) {
      for (Conn& c : conns) {
        if (c.fd < 0) {
          Open(c);
        } else {
          Look(c);
        }
      }
      if (Clock::now() >= next_probe) {
        Probe();
        next_probe = Clock::now() + std::chrono::seconds(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    for (Conn& c : conns) {
      if (c.fd >= 0) close(c.fd);
    }
    healthz_.Close();
  }

  const Outcomes& outcomes() const { return outcomes_; }
  double max_held() const { return max_held_; }
  double min_held() const { return closed_ > 0 ? min_held_ : 0; }
  uint64_t closed() const { return closed_; }
  double max_healthz_ms() const { return max_healthz_ms_; }

 private:
  struct Conn {
    int fd = -1;
    bool audit = false;
    bool over_bound = false;  // this head declares more than the route takes
    bool next_over_bound = false;
    std::string what;
    Clock::time_point opened;
  };

  void Open(Conn& c) {
    c.over_bound = c.audit && c.next_over_bound;
    c.next_over_bound = c.audit && !c.next_over_bound;
    const size_t declared =
        c.audit && !c.over_bound ? kMaxHttpBodyBytes : kMaxAdmissionBodyBytes;
    const absl::string_view path =
        c.audit ? "/audit/v1/events" : "/admission/v1/validate";
    c.what = absl::StrCat(path, ", Content-Length ", declared,
                          c.over_bound ? " (over its bound)" : "");
    const std::string head = absl::StrCat(
        "POST ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\n",
        "Content-Type: application/json\r\nContent-Length: ", declared,
        "\r\n\r\n");
    c.fd = testing::ConnectLoopback(env_.http_port, timeval{2, 0});
    c.opened = Clock::now();
    if (c.fd < 0) {
      if (!env_.stop.load()) {
        env_.failures.Add("port closed",
                          absl::StrCat("header-only: cannot connect to the "
                                       "front door: ",
                                       std::strerror(errno)));
      }
      return;
    }
    if (send(c.fd, head.data(), head.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(head.size())) {
      ++outcomes_[absl::StrCat("header-only ", c.what, ": send failed")];
      close(c.fd);
      c.fd = -1;
    }
  }

  // What came on `c`: nothing yet (still within its limit, or a failure
  // past it), an answer, or the close.
  void Look(Conn& c) {
    const auto now = Clock::now();
    const double held = std::chrono::duration<double>(now - c.opened).count();
    pollfd pfd{c.fd, POLLIN, 0};
    if (poll(&pfd, 1, 0) > 0) {
      std::string buffer;
      absl::StatusOr<HttpAnswer> answer =
          ReadHttpAnswer(c.fd, &buffer, std::chrono::milliseconds(2000));
      const bool closed = !answer.ok() && buffer.empty() &&
                          absl::IsUnavailable(answer.status());
      Ended(c, held, closed ? 0 : answer.ok() ? answer->status : -1);
      return;
    }
    const auto limit =
        std::chrono::seconds(c.over_bound ? 5 : kHttpBodyTimeoutSeconds + 5);
    if (now - c.opened > limit) {
      env_.failures.Add(
          "header-only connection held",
          absl::StrFormat("%s: still open after %.0f s with no body (limit "
                          "%d s)",
                          c.what, held, limit.count()));
      ++outcomes_[absl::StrCat("header-only ", c.what,
                               ": still open (failure)")];
      close(c.fd);
      c.fd = -1;
    }
  }

  // `c` answered `status` (0: closed without an answer; -1: something that
  // is not an answer) after `held` seconds.
  void Ended(Conn& c, double held, int status) {
    close(c.fd);
    c.fd = -1;
    const bool expected = c.over_bound ? status == 413 : status == 0;
    ++outcomes_[absl::StrCat("header-only ", c.what, ": ",
                             status == 0    ? "closed by compatd"
                             : status == -1 ? "not an HTTP answer"
                                            : absl::StrCat("HTTP ", status),
                             expected ? "" : " (failure)")];
    if (!expected) {
      env_.failures.Add(
          "header-only request answered unexpectedly",
          absl::StrFormat(
              "%s: %s after %.1f s; expected %s", c.what,
              status == 0 ? "closed" : absl::StrCat("HTTP ", status), held,
              c.over_bound ? "413 at once"
                           : "no answer, closed after the body "
                             "timeout"));
      return;
    }
    if (c.over_bound) return;
    ++closed_;
    max_held_ = std::max(max_held_, held);
    min_held_ = std::min(min_held_, held);
  }

  // GET /healthz: 200 while the heads are held.
  void Probe() {
    const Clock::time_point start = Clock::now();
    absl::StatusOr<HttpAnswer> answer = healthz_.Call("GET", "/healthz");
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    max_healthz_ms_ = std::max(max_healthz_ms_, ms);
    if (!answer.ok() || answer->status != 200) {
      env_.failures.Add("header-only: /healthz not answered",
                        answer.ok() ? absl::StrCat("HTTP ", answer->status, " ",
                                                   Shorten(answer->body))
                                    : answer.status().ToString());
    }
  }

  Env& env_;
  HttpClient healthz_;
  Outcomes outcomes_;
  uint64_t closed_ = 0;
  double max_held_ = 0;
  double min_held_ = 1e9;
  double max_healthz_ms_ = 0;
};

}  // namespace compatd::soak
