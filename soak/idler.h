#pragma once

// Silent and idle connections to the gRPC port.

#include "soak/common.h"
#include "soak/http_worker.h"

namespace compatd::soak {

// Connections that never speak (no preface: closed at --handshake-timeout)
// and idle ones (preface and SETTINGS, then nothing: GOAWAY and closed at
// --max-connection-idle), kSilentConnections of each, reopened as compatd
// closes them. A connection held past its timeout + 5 s is a failure.
class Idler {
 public:
  explicit Idler(Env* env) : env_(*env) {}

  void Run() {
    struct Conn {
      std::unique_ptr<testing::RawHttp2> conn;
      bool preface = false;
      Clock::time_point opened;
    };
    std::vector<Conn> conns(2 * kSilentConnections);
    for (size_t i = 0; i < conns.size(); ++i) {
      conns[i].preface = i >= kSilentConnections;
    }
    while (!env_.stop.load()) {
      for (Conn& c : conns) {
        const auto now = Clock::now();
        const std::string kind =
            c.preface ? "idle with a preface" : "no preface";
        if (c.conn == nullptr) {
          c.conn = std::make_unique<testing::RawHttp2>();
          c.opened = now;
          if (!c.conn->Connect(env_.grpc_port, c.preface).ok()) {
            ++outcomes_[absl::StrCat(kind, ": cannot connect")];
            c.conn.reset();
          }
          continue;
        }
        bool closed;
        if (c.preface) {
          // Reads what came (a GOAWAY, then the close), answering SETTINGS
          // and PINGs as an idle client library would.
          // (Next rounds its timeout down to whole milliseconds: below 2 ms
          // it would not read at all.)
          absl::StatusOr<std::optional<testing::RawHttp2::Frame>> frame;
          do {
            frame = c.conn->Next(std::chrono::milliseconds(5));
          } while (frame.ok() && frame->has_value());
          closed = !frame.ok();
        } else {
          closed = Closed(c.conn->fd());
        }
        const auto limit = std::chrono::seconds(
            (c.preface ? kMaxConnectionIdleSeconds : kHandshakeTimeoutSeconds) +
            5);
        const double held =
            std::chrono::duration<double>(now - c.opened).count();
        if (closed) {
          ++outcomes_[absl::StrCat(kind, ": closed by compatd")];
          double& max = c.preface ? max_idle_held_ : max_silent_held_;
          max = std::max(max, held);
          c.conn.reset();
        } else if (now - c.opened > limit) {
          env_.failures.Add(
              "silent connection held",
              absl::StrCat(kind, ": still open after ",
                           absl::StrFormat("%.0f", held), " s (limit ",
                           c.preface ? kMaxConnectionIdleSeconds
                                     : kHandshakeTimeoutSeconds,
                           " s + 5 s)"));
          ++outcomes_[absl::StrCat(kind, ": still open (failure)")];
          c.conn.reset();
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  const Outcomes& outcomes() const { return outcomes_; }
  double max_silent_held() const { return max_silent_held_; }
  double max_idle_held() const { return max_idle_held_; }

 private:
  Env& env_;
  Outcomes outcomes_;
  double max_silent_held_ = 0;
  double max_idle_held_ = 0;
};

}  // namespace compatd::soak
