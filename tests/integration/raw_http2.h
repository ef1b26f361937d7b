#pragma once

// Just enough HTTP/2 (h2c with prior knowledge, RFC 9113) to misbehave as a
// client on purpose: frames written by hand over a plain socket to
// 127.0.0.1, with the client's SETTINGS of the test's choosing (e.g. a
// stream window of 0: the server may send headers but no DATA). The
// connection answers the server's SETTINGS and PINGs and tracks its send
// windows, so that large DATA stays within what the server allows.
// Header-only, POSIX.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tests/testing/loopback.h"

namespace compatd::testing {

class RawHttp2 {
 public:
  struct Frame {
    uint8_t type = 0;
    uint8_t flags = 0;
    uint32_t stream = 0;
    std::string payload;
  };
  static constexpr uint8_t kData = 0, kHeaders = 1, kRstStream = 3,
                           kSettings = 4, kPing = 6, kGoAway = 7,
                           kWindowUpdate = 8;
  static constexpr uint8_t kEndStream = 1, kAck = 1, kEndHeaders = 4;
  static constexpr uint16_t kSettingsInitialWindowSize = 4;

  RawHttp2() = default;
  RawHttp2(const RawHttp2&) = delete;
  RawHttp2& operator=(const RawHttp2&) = delete;
  ~RawHttp2() { Close(); }

  // Connects; with `preface`, sends the connection preface and SETTINGS
  // (`settings`: identifier -> value).
  absl::Status Connect(int port, bool preface = true,
                       std::map<uint16_t, uint32_t> settings = {}) {
    port_ = port;
    fd_ = ConnectLoopback(port);
    if (fd_ < 0) return absl::UnavailableError("cannot connect");
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (!preface) return absl::OkStatus();
    std::string payload;
    for (const auto& [id, value] : settings) {
      payload.push_back(static_cast<char>(id >> 8));
      payload.push_back(static_cast<char>(id));
      payload += Uint32(value);
      if (id == kSettingsInitialWindowSize) initial_window_ = value;
    }
    std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    AppendFrame(&out, kSettings, 0, 0, payload);
    return Send(out);
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

  // A gRPC call's HEADERS for `path` (e.g. "/compatd.v1.CompatibilityPolicy/
  // GetFeature") on `stream` (odd, increasing).
  std::string HeadersFrame(uint32_t stream, absl::string_view path,
                           bool end_stream = false) const {
    std::string out;
    AppendFrame(&out, kHeaders, kEndHeaders | (end_stream ? kEndStream : 0),
                stream, HeaderBlock(path, port_));
    return out;
  }

  // The HPACK block of a gRPC call's request headers for `path` on 127.0.0.1
  // `port`.
  static std::string HeaderBlock(absl::string_view path, int port) {
    std::string block;
    for (const auto& [name, value] :
         std::vector<std::pair<std::string, std::string>>{
             {":method", "POST"},
             {":scheme", "http"},
             {":path", std::string(path)},
             {":authority", absl::StrCat("127.0.0.1:", port)},
             {"content-type", "application/grpc"},
             {"te", "trailers"}}) {
      // RFC 7541 6.2.2, literal without indexing, new name; every string
      // here is shorter than 127 bytes.
      block.push_back(0);
      block.push_back(static_cast<char>(name.size()));
      block += name;
      block.push_back(static_cast<char>(value.size()));
      block += value;
    }
    return block;
  }
  absl::Status SendHeaders(uint32_t stream, absl::string_view path,
                           bool end_stream = false) {
    stream_windows_[stream] = initial_window_server_;
    return Send(HeadersFrame(stream, path, end_stream));
  }

  // A gRPC message: its 5-byte prefix and `message`.
  static std::string GrpcMessage(absl::string_view message) {
    return std::string(1, '\0') +
           Uint32(static_cast<uint32_t>(message.size())) + std::string(message);
  }

  // DATA on `stream`, in frames of at most 16 KiB, waiting (and answering
  // the server) for flow-control window as needed. UNAVAILABLE when the
  // server resets the stream, sends GOAWAY or closes before all is sent.
  absl::Status SendData(
      uint32_t stream, absl::string_view data, bool end_stream = false,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    do {
      const int64_t window =
          std::min<int64_t>(connection_window_, stream_windows_[stream]);
      const size_t n =
          std::min<size_t>({data.size(), size_t{16384},
                            static_cast<size_t>(std::max<int64_t>(0, window))});
      if (n == 0 && !data.empty()) {
        if (std::chrono::steady_clock::now() > end) {
          return absl::DeadlineExceededError("no flow-control window");
        }
        absl::StatusOr<std::optional<Frame>> frame =
            Next(std::chrono::milliseconds(100));
        if (!frame.ok()) return frame.status();
        if (frame->has_value() &&
            ((*frame)->type == kRstStream || (*frame)->type == kGoAway)) {
          unread_.push_back(**frame);
          return absl::UnavailableError(
              absl::StrCat("the server sent frame type ", (*frame)->type));
        }
        if (frame->has_value()) unread_.push_back(**frame);
        continue;
      }
      std::string out;
      const bool last = n == data.size();
      AppendFrame(&out, kData, last && end_stream ? kEndStream : 0, stream,
                  data.substr(0, n));
      if (absl::Status s = Send(out); !s.ok()) return s;
      connection_window_ -= static_cast<int64_t>(n);
      stream_windows_[stream] -= static_cast<int64_t>(n);
      data.remove_prefix(n);
    } while (!data.empty());
    return absl::OkStatus();
  }

  absl::Status SendRstStream(uint32_t stream, uint32_t code = 8) {
    std::string out;
    AppendFrame(&out, kRstStream, 0, stream, Uint32(code));
    return Send(out);
  }

  // Lets the server send `bytes` more on `stream` (0: the connection).
  absl::Status WindowUpdate(uint32_t stream, uint32_t bytes = 1u << 30) {
    std::string out;
    AppendFrame(&out, kWindowUpdate, 0, stream, Uint32(bytes));
    return Send(out);
  }

  absl::Status Send(absl::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return absl::UnavailableError("send() failed");
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  // The next frame other than SETTINGS, PING and WINDOW_UPDATE (answered or
  // applied on the way); nullopt if none came within `timeout`; UNAVAILABLE
  // once the server has closed the connection.
  absl::StatusOr<std::optional<Frame>> Next(std::chrono::milliseconds timeout) {
    if (!unread_.empty()) {
      Frame frame = std::move(unread_.front());
      unread_.erase(unread_.begin());
      return frame;
    }
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (std::optional<Frame> frame = TakeFrame()) {
        if (frame->type == kSettings && !(frame->flags & kAck)) {
          ApplySettings(frame->payload);
          std::string out;
          AppendFrame(&out, kSettings, kAck, 0, "");
          if (absl::Status s = Send(out); !s.ok()) return s;
        } else if (frame->type == kPing && !(frame->flags & kAck)) {
          std::string out;
          AppendFrame(&out, kPing, kAck, 0, frame->payload);
          if (absl::Status s = Send(out); !s.ok()) return s;
        } else if (frame->type == kWindowUpdate && frame->payload.size() == 4) {
          const int64_t increment = ReadUint32(frame->payload, 0) & 0x7fffffff;
          if (frame->stream == 0) {
            connection_window_ += increment;
          } else {
            stream_windows_[frame->stream] += increment;
          }
        } else if (frame->type != kSettings && frame->type != kPing) {
          return frame;
        }
        continue;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::optional<Frame>();
      pollfd pfd{fd_, POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[65536];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        return absl::UnavailableError("the server closed the connection");
      }
      in_.append(buffer, static_cast<size_t>(n));
    }
  }

  // Reads until the server closes the connection; OK with how long it took,
  // DEADLINE_EXCEEDED if it is still open after `timeout`.
  absl::StatusOr<std::chrono::milliseconds> WaitForClose(
      std::chrono::milliseconds timeout) {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < timeout) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          timeout - (std::chrono::steady_clock::now() - start));
      pollfd pfd{fd_, POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(std::max<int64_t>(1, left.count()))) <=
          0) {
        continue;
      }
      char buffer[65536];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
      }
    }
    return absl::DeadlineExceededError("the connection is still open");
  }

  static std::string Uint32(uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  }
  static uint32_t ReadUint32(absl::string_view bytes, size_t at) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
           (uint32_t{p[2]} << 8) | p[3];
  }
  static void AppendFrame(std::string* out, uint8_t type, uint8_t flags,
                          uint32_t stream, absl::string_view payload) {
    out->append(Uint32(static_cast<uint32_t>(payload.size())).substr(1));
    out->push_back(static_cast<char>(type));
    out->push_back(static_cast<char>(flags));
    out->append(Uint32(stream));
    out->append(payload.data(), payload.size());
  }

 private:
  void ApplySettings(absl::string_view payload) {
    for (size_t i = 0; i + 6 <= payload.size(); i += 6) {
      const uint16_t id =
          static_cast<uint16_t>((static_cast<unsigned char>(payload[i]) << 8) |
                                static_cast<unsigned char>(payload[i + 1]));
      if (id != kSettingsInitialWindowSize) continue;
      const int64_t value = ReadUint32(payload, i + 2);
      for (auto& [stream, window] : stream_windows_) {
        window += value - initial_window_server_;
      }
      initial_window_server_ = value;
    }
  }

  std::optional<Frame> TakeFrame() {
    if (in_.size() < 9) return std::nullopt;
    const auto* h = reinterpret_cast<const unsigned char*>(in_.data());
    const size_t length = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
    if (in_.size() < 9 + length) return std::nullopt;
    Frame frame;
    frame.type = h[3];
    frame.flags = h[4];
    frame.stream = ReadUint32(in_, 5) & 0x7fffffff;
    frame.payload = in_.substr(9, length);
    in_.erase(0, 9 + length);
    return frame;
  }

  int fd_ = -1;
  int port_ = 0;
  std::string in_;
  std::vector<Frame> unread_;
  // What this client announced, and the server's windows for what it sends.
  uint32_t initial_window_ = 65535;
  int64_t initial_window_server_ = 65535;
  int64_t connection_window_ = 65535;
  std::map<uint32_t, int64_t> stream_windows_;
};

}  // namespace compatd::testing
