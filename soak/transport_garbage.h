#pragma once

// Raw TCP garbage to both ports.

#include "soak/common.h"

namespace compatd::soak {

// ---------------------------------------------------------------------------
// Raw TCP garbage to both ports. The only check: the port still accepts.

class TransportGarbage {
 public:
  TransportGarbage(Env* env) : env_(*env), rng_(env->seed * 104729 + 1) {}

  void Run() {
    while (!env_.stop.load()) {
      OneConnection();
      std::this_thread::sleep_for(
          std::chrono::milliseconds(20 + Below(rng_, 60)));
    }
  }

  const std::map<std::string, uint64_t>& counts() const { return counts_; }

 private:
  std::string RandomBytes(size_t max) {
    std::string bytes(1 + Below(rng_, max), '\0');
    for (char& c : bytes) c = static_cast<char>(Below(rng_, 256));
    return bytes;
  }

  static constexpr absl::string_view kPreface =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

  // What one connection sends, and how it ends.
  struct Garbage {
    std::string scenario;
    std::string payload;
    bool read_reply = false;
    bool reset = false;
  };

  // One to four HTTP/2 frames of random type, flags, stream and body.
  std::string RandomFrames() {
    std::string payload;
    for (size_t n = 1 + Below(rng_, 4); n > 0; --n) {
      const std::string body = RandomBytes(64);
      const char header[9] = {0,
                              0,
                              static_cast<char>(body.size()),
                              static_cast<char>(Below(rng_, 12)),  // frame type
                              static_cast<char>(Below(rng_, 256)),  // flags
                              0,
                              0,
                              0,
                              static_cast<char>(Below(rng_, 8))};  // stream
      payload.append(header, sizeof(header));
      payload.append(body);
    }
    return payload;
  }

  Garbage PickGarbage(bool grpc_port) {
    Garbage g;
    g.read_reply = Below(rng_, 2) == 0;
    switch (Below(rng_, 6)) {
      case 0:
        g.scenario = "connect, close";
        break;
      case 1:
        g.scenario = "random bytes";
        g.payload = RandomBytes(4096);
        break;
      case 2:
        if (grpc_port) {
          g.scenario = "HTTP/2 preface, random frames";
          g.payload = std::string(kPreface) + RandomFrames();
        } else {
          g.scenario = "HTTP request cut short";
          const std::string full =
              "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
          g.payload = full.substr(0, Below(rng_, full.size()));
        }
        break;
      case 3:
        if (grpc_port) {
          g.scenario = "half an HTTP/2 preface";
          g.payload = std::string(kPreface.substr(0, Below(rng_, 24)));
        } else {
          g.scenario = "huge header";
          g.payload = absl::StrCat("GET /metrics HTTP/1.1\r\nX-Soak: ",
                                   std::string(20000, 'a'), "\r\n\r\n");
          g.read_reply = true;
        }
        break;
      case 4:
        if (grpc_port) {
          g.scenario = "HTTP/1.1 request";
          g.payload = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        } else {
          g.scenario = "unknown path";
          g.payload = absl::StrCat("GET /", Below(rng_, 1000000),
                                   "?x=%zz HTTP/1.0\r\n\r\n");
        }
        g.read_reply = true;
        break;
      default:
        g.scenario = "random bytes, then reset";
        g.payload = RandomBytes(1024);
        g.reset = true;
        break;
    }
    return g;
  }

  void OneConnection() {
    const bool grpc_port = Below(rng_, 2) == 0;
    const int port = grpc_port ? env_.grpc_port : env_.metrics_port;
    const Garbage g = PickGarbage(grpc_port);
    ++counts_[absl::StrCat(grpc_port ? "gRPC port: " : "metrics port: ",
                           g.scenario)];
    const int fd = testing::ConnectLoopback(port, timeval{0, 300000});
    if (fd < 0) {
      if (!env_.stop.load()) {
        env_.failures.Add("port closed",
                          absl::StrCat("cannot connect to 127.0.0.1:", port,
                                       ": ", std::strerror(errno)));
      }
      return;
    }
    if (!g.payload.empty()) {
      (void)send(fd, g.payload.data(), g.payload.size(), MSG_NOSIGNAL);
    }
    if (g.read_reply) {
      char buffer[4096];
      for (int i = 0; i < 16; ++i) {
        if (recv(fd, buffer, sizeof(buffer), 0) <= 0) break;
      }
    }
    if (g.reset) {
      linger hard{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
    }
    close(fd);
  }

  Env& env_;
  Rng rng_;
  std::map<std::string, uint64_t> counts_;
};

}  // namespace compatd::soak
