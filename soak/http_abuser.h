#pragma once

// Garbage and oversized bodies to the front door.

#include "soak/common.h"
#include "soak/http_worker.h"

namespace compatd::soak {

// Garbage and oversized bodies to the front door, one connection each.
class HttpAbuser {
 public:
  explicit HttpAbuser(Env* env) : env_(*env), rng_(env->seed * 40503 + 3) {}

  void Run() {
    const Options& o = env_.options;
    while (!env_.stop.load()) {
      if (o.oversized && (!o.http_garbage || Below(rng_, 3) == 0)) {
        Oversized();
      } else if (o.http_garbage) {
        Garbage();
      }
      std::this_thread::sleep_for(
          std::chrono::milliseconds(20 + Below(rng_, 40)));
    }
  }

  const Tally& tally() const { return tally_; }
  const Outcomes& outcomes() const { return outcomes_; }

 private:
  void Oversized() {
    const bool chunked = Below(rng_, 2) == 0;
    const size_t bytes = kMaxHttpBodyBytes + 1 + Below(rng_, 64 << 20);
    const std::string label = absl::StrCat(
        chunked ? "chunked" : "Content-Length", " body of ", bytes, " bytes");
    absl::StatusOr<HttpAnswer> answer =
        OversizedHead(env_.http_port, chunked, bytes);
    Count(tally_, Class::kOversized,
          chunked ? "POST, chunked" : "POST, Content-Length",
          static_cast<grpc::StatusCode>(answer.ok() ? answer->status : 0));
    env_.calls.fetch_add(1, std::memory_order_relaxed);
    if (!answer.ok() || answer->status != 413) {
      env_.failures.Add(
          "oversized body not refused with 413",
          absl::StrCat(label, ": ",
                       answer.ok() ? absl::StrCat("HTTP ", answer->status, " ",
                                                  Shorten(answer->body))
                                   : answer.status().ToString()));
    }
  }

  std::string RandomBytes(size_t max) {
    std::string bytes(1 + Below(rng_, max), '\0');
    for (char& c : bytes) c = static_cast<char>(Below(rng_, 256));
    return bytes;
  }

  // Random bytes, requests cut short, bodies shorter than announced,
  // malformed heads. Whatever answer comes must be a 4xx (or none: the
  // connection closed); the port must keep accepting.
  void Garbage() {
    const std::string valid = absl::StrCat(
        "POST /v1/GetFeature HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\nContent-Length: 20\r\n\r\n",
        R"({"name":"WatchList"})");
    std::string scenario;
    std::string payload;
    bool read = true;
    switch (Below(rng_, 5)) {
      case 0:
        scenario = "random bytes";
        payload = RandomBytes(4096);
        break;
      case 1:
        scenario = "request cut short, then closed";
        payload = valid.substr(0, Below(rng_, valid.size()));
        read = false;
        break;
      case 2:
        scenario = "malformed head";
        payload = absl::StrCat("GET /v1/GetFeature HTTP/1.1\r\nHost: x\r\n",
                               RandomBytes(64), "\r\n\r\n");
        break;
      case 3:
        scenario = "bad Content-Length";
        payload =
            "POST /v1/GetFeature HTTP/1.1\r\nHost: x\r\nContent-Length: "
            "-5\r\n\r\n{}";
        break;
      default:
        scenario = "request line of random bytes";
        payload = absl::StrCat(RandomBytes(32), " / HTTP/1.1\r\n\r\n");
        break;
    }
    const int fd = testing::ConnectLoopback(env_.http_port, timeval{2, 0});
    if (fd < 0) {
      if (!env_.stop.load()) {
        env_.failures.Add("port closed",
                          absl::StrCat("cannot connect to the front door: ",
                                       std::strerror(errno)));
      }
      return;
    }
    (void)send(fd, payload.data(), payload.size(), MSG_NOSIGNAL);
    int status = 0;
    if (read) {
      std::string buffer;
      absl::StatusOr<HttpAnswer> answer =
          ReadHttpAnswer(fd, &buffer, std::chrono::milliseconds(2000));
      if (answer.ok()) status = answer->status;
    }
    close(fd);
    ++outcomes_[absl::StrCat(
        scenario, ": ",
        status == 0 ? "closed, no answer" : absl::StrCat("HTTP ", status))];
    Count(tally_, Class::kHttpGarbage, scenario,
          static_cast<grpc::StatusCode>(status));
    if (status != 0 && (status < 400 || status >= 500)) {
      env_.failures.Add("garbage answered with a status that is not 4xx",
                        absl::StrCat(scenario, ": HTTP ", status, " for ",
                                     Shorten(absl::CEscape(payload), 120)));
    }
  }

  Env& env_;
  Rng rng_;
  Tally tally_;
  Outcomes outcomes_;
};

}  // namespace compatd::soak
