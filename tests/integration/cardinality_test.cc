// A flood of 100,000 distinct, random User-Agents (and random
// x-kubernetes-component / x-kubernetes-version values) against the real
// compatd binary: the scrape's compatd_client_requests_total series, the
// ListClients rows and the server's resident memory stay bounded, and every
// call is still counted exactly once.
//
// gRPC C++ fixes the User-Agent per channel (its http client filter
// overwrites any per-call value), and 100,000 channels would mean 100,000
// connections. So the flood speaks HTTP/2 itself (h2c with prior knowledge,
// as any gRPC client does on a plaintext port): a few connections, each with
// many concurrent streams, every stream a unary ResolveVersions call whose
// headers are literal HPACK fields. Responses are not decoded; the server's
// own grpc_server_handled_total says how every call ended.

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/loopback.h"
#include "tests/testing/status_matchers.h"

namespace compatd {
namespace {

using namespace std::chrono_literals;
using testing::Sample;
using testing::Select;

// The TSan build undefines __SANITIZE_THREAD__ and defines COMPATD_TSAN
// (CMakeLists.txt says why).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || \
    defined(COMPATD_TSAN)
#define COMPATD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COMPATD_SANITIZED 1
#endif
#endif

#ifdef COMPATD_SANITIZED
// make test-asan / test-tsan: compatd runs several times slower, with shadow
// memory and a quarantine of freed blocks. Fewer calls (still far past every
// bound), and RSS and time are printed but not bounded.
constexpr bool kSanitized = true;
constexpr int kCalls = 20000;
#else
constexpr bool kSanitized = false;
constexpr int kCalls = 100000;
#endif
constexpr int kConnections = 4;
constexpr int kStreamsInFlight = 128;  // per connection
constexpr char kPath[] = "/compatd.v1.CompatibilityPolicy/ResolveVersions";
constexpr char kPolicyService[] = "compatd.v1.CompatibilityPolicy";

using Headers = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------------------
// A minimal HTTP/2 client for unary gRPC calls (RFC 9113, RFC 7541).

enum FrameType : uint8_t {
  kData = 0,
  kHeaders = 1,
  kRstStream = 3,
  kSettings = 4,
  kPing = 6,
  kGoAway = 7,
  kWindowUpdate = 8,
};
constexpr uint8_t kEndStream = 0x1;
constexpr uint8_t kAck = 0x1;
constexpr uint8_t kEndHeaders = 0x4;
constexpr uint32_t kMaxWindow = 0x7fffffff;

void AppendFrame(std::string* out, uint8_t type, uint8_t flags, uint32_t stream,
                 absl::string_view payload) {
  const uint32_t length = static_cast<uint32_t>(payload.size());
  const char header[9] = {
      static_cast<char>(length >> 16), static_cast<char>(length >> 8),
      static_cast<char>(length),       static_cast<char>(type),
      static_cast<char>(flags),        static_cast<char>(stream >> 24),
      static_cast<char>(stream >> 16), static_cast<char>(stream >> 8),
      static_cast<char>(stream)};
  out->append(header, 9);
  out->append(payload.data(), payload.size());
}

std::string Uint32(uint32_t v) {
  return std::string({static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                      static_cast<char>(v >> 8), static_cast<char>(v)});
}

// RFC 7541 5.1: an integer with an N-bit prefix (the prefix bits above N are
// zero: a literal without indexing, or a string without Huffman coding).
void AppendHpackInteger(std::string* out, uint64_t value, int prefix_bits) {
  const uint64_t max_prefix = (1u << prefix_bits) - 1;
  if (value < max_prefix) {
    out->push_back(static_cast<char>(value));
    return;
  }
  out->push_back(static_cast<char>(max_prefix));
  value -= max_prefix;
  while (value >= 128) {
    out->push_back(static_cast<char>((value % 128) + 128));
    value /= 128;
  }
  out->push_back(static_cast<char>(value));
}

// RFC 7541 6.2.2: literal header field without indexing, new name; plain
// (not Huffman-coded) strings. Touches no dynamic table.
void AppendLiteralHeader(std::string* out, absl::string_view name,
                         absl::string_view value) {
  out->push_back(0);
  AppendHpackInteger(out, name.size(), 7);
  out->append(name.data(), name.size());
  AppendHpackInteger(out, value.size(), 7);
  out->append(value.data(), value.size());
}

struct ConnectionStats {
  int completed = 0;     // streams the server ended (END_STREAM)
  int reset = 0;         // streams the server reset (RST_STREAM)
  int server_pings = 0;  // PINGs answered
};

// One connection; RunCalls() runs `count` calls with at most `in_flight`
// streams open at once.
class RawGrpcConnection {
 public:
  ~RawGrpcConnection() {
    if (fd_ >= 0) close(fd_);
  }

  absl::Status Connect(int port) {
    fd_ = testing::ConnectLoopback(port);
    if (fd_ < 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to 127.0.0.1:", port));
    }
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
    authority_ = absl::StrCat("127.0.0.1:", port);
    out_ = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    // Our receive windows as large as allowed, so the server never waits.
    AppendFrame(&out_, kSettings, 0, 0,
                std::string("\x00\x04", 2) + Uint32(kMaxWindow));
    AppendFrame(&out_, kWindowUpdate, 0, 0, Uint32(kMaxWindow - 65535));
    return absl::OkStatus();
  }

  // Calls `kPath` `count` times with `message` (a serialized request) and
  // the headers `headers_of(i)` for call i, until all have ended or
  // `deadline`.
  template <typename HeadersOf>
  absl::StatusOr<ConnectionStats> RunCalls(
      int count, int in_flight, absl::string_view message, HeadersOf headers_of,
      std::chrono::steady_clock::time_point deadline) {
    std::string data = std::string(1, '\0') +
                       Uint32(static_cast<uint32_t>(message.size())) +
                       std::string(message);
    std::vector<bool> done(static_cast<size_t>(count), false);
    ConnectionStats stats;
    int sent = 0;
    int ended = 0;
    while (ended < count) {
      if (std::chrono::steady_clock::now() > deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat(ended, " of ", count,
                         " calls ended before the "
                         "deadline (",
                         sent, " sent)"));
      }
      // Open streams while the server's limits allow.
      while (sent < count && sent - ended < in_flight &&
             sent - ended < max_concurrent_streams_ &&
             send_window_ >= static_cast<int64_t>(data.size()) &&
             out_.size() - out_offset_ < (1 << 20)) {
        const uint32_t stream = 2 * static_cast<uint32_t>(sent) + 1;
        std::string block;
        AppendLiteralHeader(&block, ":method", "POST");
        AppendLiteralHeader(&block, ":scheme", "http");
        AppendLiteralHeader(&block, ":path", kPath);
        AppendLiteralHeader(&block, ":authority", authority_);
        AppendLiteralHeader(&block, "content-type", "application/grpc");
        AppendLiteralHeader(&block, "te", "trailers");
        for (const auto& [name, value] : headers_of(sent)) {
          AppendLiteralHeader(&block, name, value);
        }
        if (block.size() > 16384) {
          return absl::InvalidArgumentError(
              "a header block larger than the default frame size");
        }
        AppendFrame(&out_, kHeaders, kEndHeaders, stream, block);
        AppendFrame(&out_, kData, kEndStream, stream, data);
        send_window_ -= static_cast<int64_t>(data.size());
        ++sent;
      }
      pollfd pfd{fd_, POLLIN, 0};
      if (out_offset_ < out_.size()) pfd.events |= POLLOUT;
      if (poll(&pfd, 1, 100) < 0) continue;
      if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) {
        if (!(pfd.revents & POLLIN)) {
          return absl::UnavailableError(absl::StrCat(
              "the server closed the connection after ", ended, " calls"));
        }
      }
      if (pfd.revents & POLLOUT) {
        const ssize_t n = send(fd_, out_.data() + out_offset_,
                               out_.size() - out_offset_, MSG_NOSIGNAL);
        if (n > 0) out_offset_ += static_cast<size_t>(n);
        if (out_offset_ == out_.size()) {
          out_.clear();
          out_offset_ = 0;
        }
      }
      if (pfd.revents & POLLIN) {
        char buffer[65536];
        const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
        if (n == 0) {
          return absl::UnavailableError(absl::StrCat(
              "the server closed the connection after ", ended, " calls"));
        }
        if (n > 0) in_.append(buffer, static_cast<size_t>(n));
        absl::Status s = ParseFrames(&done, &stats, &ended);
        if (!s.ok()) return s;
      }
    }
    return stats;
  }

 private:
  absl::Status ParseFrames(std::vector<bool>* done, ConnectionStats* stats,
                           int* ended) {
    size_t pos = 0;
    while (in_.size() - pos >= 9) {
      const auto* h = reinterpret_cast<const unsigned char*>(in_.data() + pos);
      const size_t length = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
      if (in_.size() - pos < 9 + length) break;
      const uint8_t type = h[3];
      const uint8_t flags = h[4];
      const uint32_t stream = ((uint32_t{h[5]} << 24) | (uint32_t{h[6]} << 16) |
                               (uint32_t{h[7]} << 8) | h[8]) &
                              0x7fffffff;
      const absl::string_view payload(in_.data() + pos + 9, length);
      pos += 9 + length;
      auto end_stream = [&](bool reset) {
        const size_t index = (stream - 1) / 2;
        if (stream == 0 || stream % 2 == 0 || index >= done->size() ||
            (*done)[index]) {
          return;
        }
        (*done)[index] = true;
        ++*ended;
        ++(reset ? stats->reset : stats->completed);
      };
      switch (type) {
        case kData:
        case kHeaders:
          if (flags & kEndStream) end_stream(false);
          break;
        case kRstStream:
          end_stream(true);
          break;
        case kSettings:
          if (flags & kAck) break;
          for (size_t i = 0; i + 6 <= payload.size(); i += 6) {
            const auto* p =
                reinterpret_cast<const unsigned char*>(payload.data() + i);
            const uint16_t id = static_cast<uint16_t>((p[0] << 8) | p[1]);
            const uint32_t value = (uint32_t{p[2]} << 24) |
                                   (uint32_t{p[3]} << 16) |
                                   (uint32_t{p[4]} << 8) | p[5];
            if (id == 3) {  // SETTINGS_MAX_CONCURRENT_STREAMS
              max_concurrent_streams_ =
                  static_cast<int>(std::min<uint32_t>(value, 1u << 30));
            }
          }
          AppendFrame(&out_, kSettings, kAck, 0, "");
          break;
        case kPing:
          if (!(flags & kAck)) {
            AppendFrame(&out_, kPing, kAck, 0, payload);
            ++stats->server_pings;
          }
          break;
        case kGoAway: {
          const auto* p =
              reinterpret_cast<const unsigned char*>(payload.data());
          const uint32_t code = payload.size() >= 8
                                    ? (uint32_t{p[4]} << 24) |
                                          (uint32_t{p[5]} << 16) |
                                          (uint32_t{p[6]} << 8) | p[7]
                                    : 0;
          return absl::UnavailableError(absl::StrCat(
              "the server sent GOAWAY (error code ", code, ") after ", *ended,
              " calls: ", payload.size() > 8 ? payload.substr(8) : ""));
        }
        case kWindowUpdate:
          if (stream == 0 && payload.size() == 4) {
            const auto* p =
                reinterpret_cast<const unsigned char*>(payload.data());
            send_window_ += ((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                             (uint32_t{p[2]} << 8) | p[3]) &
                            0x7fffffff;
          }
          break;
        default:  // PRIORITY, CONTINUATION of a block we do not decode, ...
          break;
      }
    }
    in_.erase(0, pos);
    return absl::OkStatus();
  }

  int fd_ = -1;
  std::string authority_;
  std::string out_;
  size_t out_offset_ = 0;
  std::string in_;
  int64_t send_window_ = 65535;  // the connection's, as the server grants it
  int max_concurrent_streams_ = 1 << 30;
};

// ---------------------------------------------------------------------------
// Random callers

std::string RandomString(std::mt19937_64& rng, absl::string_view alphabet,
                         size_t min_length, size_t max_length) {
  std::uniform_int_distribution<size_t> length(min_length, max_length);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string out(length(rng), ' ');
  for (char& c : out) c = alphabet[pick(rng)];
  return out;
}

constexpr absl::string_view kNameChars =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._";
constexpr absl::string_view kHex = "0123456789abcdef";

struct Caller {
  Headers headers;
  // What the KEP-4330 table says of it at the embedded catalog's cluster
  // versions (emulation 1.36, min-compatibility 1.35): kubelet 1.33..1.36,
  // kubectl 1.35..1.37 are allowed.
  bool out_of_allowance = false;
};

// The headers of call `index` (globally unique): a different User-Agent
// every time, of several shapes.
Caller RandomCaller(std::mt19937_64& rng, int index) {
  std::uniform_int_distribution<int> small(0, 999);
  const std::string unique = absl::StrCat(index);
  Caller caller;
  Headers& headers = caller.headers;
  switch (index % 8) {
    case 0:
    case 1:
    case 2:  // an invented component in Kubernetes form: verdict unknown
      headers.emplace_back(
          "user-agent",
          absl::StrCat(RandomString(rng, kNameChars, 3, 40), "/v", small(rng),
                       ".", small(rng), ".", unique, " (linux/amd64) ",
                       "kubernetes/", RandomString(rng, kHex, 7, 7)));
      break;
    case 3: {  // a real component at a random version: judged by the policy
      const int minor = small(rng);
      caller.out_of_allowance = minor < 33 || minor > 36;
      headers.emplace_back("user-agent",
                           absl::StrCat("kubelet/v1.", minor, ".", unique,
                                        " (linux/arm64) kubernetes/",
                                        RandomString(rng, kHex, 7, 7), "/",
                                        RandomString(rng, kNameChars, 0, 20)));
      break;
    }
    case 4: {
      const int major = small(rng) % 3;
      const int minor = small(rng);
      // v0.0.x is client-go's placeholder: no version, verdict unknown.
      caller.out_of_allowance = (major == 0 && minor != 0) || major == 2 ||
                                (major == 1 && (minor < 35 || minor > 37));
      headers.emplace_back("user-agent",
                           absl::StrCat("kubectl/v", major, ".", minor, ".",
                                        unique, " (darwin/arm64) kubernetes/",
                                        RandomString(rng, kHex, 7, 7)));
      break;
    }
    case 5: {  // printable junk, up to 2 KiB, quotes and backslashes included
      std::string junk;
      for (char c = 0x20; c < 0x7f; ++c) junk.push_back(c);
      headers.emplace_back(
          "user-agent",
          absl::StrCat("x", RandomString(rng, junk, 0, 2000), " ", unique));
      break;
    }
    case 6:  // random metadata component and version, random User-Agent
      headers.emplace_back("x-kubernetes-component",
                           RandomString(rng, kNameChars, 1, 60));
      headers.emplace_back(
          "x-kubernetes-version",
          absl::StrCat("v", small(rng), ".", small(rng), ".", unique));
      headers.emplace_back(
          "user-agent",
          absl::StrCat(RandomString(rng, kNameChars, 3, 30), "/", unique));
      break;
    case 7:  // random metadata component only (its version from nowhere)
      headers.emplace_back(
          "x-kubernetes-component",
          absl::StrCat(RandomString(rng, kNameChars, 1, 60), unique));
      headers.emplace_back("user-agent",
                           absl::StrCat("grpc-go/1.", small(rng), ".", unique));
      break;
  }
  return caller;
}

// ---------------------------------------------------------------------------

struct FloodResult {
  int completed = 0;
  int reset = 0;
  int out_of_allowance = 0;  // calls sent as an out-of-allowance client
  double seconds = 0;
};

// kCalls calls over kConnections connections, one thread each.
absl::StatusOr<FloodResult> Flood(int port) {
  const std::string message = v1::ResolveVersionsRequest().SerializeAsString();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + 90s;
  std::vector<absl::StatusOr<ConnectionStats>> results(
      kConnections, absl::UnknownError("not run"));
  std::atomic<int> out_of_allowance{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kConnections; ++c) {
    threads.emplace_back([&, c] {
      RawGrpcConnection connection;
      if (absl::Status s = connection.Connect(port); !s.ok()) {
        results[c] = s;
        return;
      }
      std::mt19937_64 rng(0xC0FFEE + static_cast<uint64_t>(c));
      const int per_connection = kCalls / kConnections;
      results[c] = connection.RunCalls(
          per_connection, kStreamsInFlight, message,
          [&](int i) {
            Caller caller = RandomCaller(rng, c * per_connection + i);
            if (caller.out_of_allowance) ++out_of_allowance;
            return std::move(caller.headers);
          },
          deadline);
    });
  }
  for (std::thread& t : threads) t.join();
  FloodResult flood;
  flood.out_of_allowance = out_of_allowance.load();
  flood.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  for (const auto& r : results) {
    if (!r.ok()) return r.status();
    flood.completed += r->completed;
    flood.reset += r->reset;
  }
  return flood;
}

double Sum(const std::vector<Sample>& samples) {
  double sum = 0;
  for (const Sample& s : samples) sum += s.value;
  return sum;
}

class CardinalityTest : public ::testing::TestWithParam<int> {
 protected:
  absl::StatusOr<std::vector<Sample>> ScrapeSamples(size_t* bytes) {
    absl::StatusOr<std::string> scrape = server_.Scrape();
    if (!scrape.ok()) return scrape.status();
    *bytes = scrape->size();
    return testing::ParseExposition(*scrape);
  }

  testing::CompatdProcess server_;
};

// The parameter is --max-client-series (0: the default, 256).
TEST_P(CardinalityTest, HundredThousandRandomClientsStayWithinTheBound) {
  const int bound = GetParam() == 0 ? 256 : GetParam();
  std::vector<std::string> args;
  if (GetParam() != 0) {
    args.push_back(absl::StrCat("--max-client-series=", GetParam()));
  }
  ASSERT_OK(server_.Start(args));

  // A real kubelet first, so the bound has a known client to keep.
  {
    auto stub = v1::CompatibilityPolicy::NewStub(
        server_.NewChannel("kubelet/v1.31.0 (linux/amd64) kubernetes/abc1234"));
    grpc::ClientContext context;
    v1::ResolveVersionsResponse response;
    ASSERT_TRUE(
        stub->ResolveVersions(&context, v1::ResolveVersionsRequest(), &response)
            .ok());
  }
  size_t scrape_before = 0;
  ASSERT_OK_AND_ASSIGN(const std::vector<Sample> before,
                       ScrapeSamples(&scrape_before));
  ASSERT_OK_AND_ASSIGN(const int64_t rss_before,
                       testing::VmRssBytes(server_.pid()));

  ASSERT_OK_AND_ASSIGN(const FloodResult flood, Flood(server_.grpc_port()));
  EXPECT_EQ(flood.completed, kCalls);
  EXPECT_EQ(flood.reset, 0);

  ASSERT_OK_AND_ASSIGN(const int64_t rss_after,
                       testing::VmRssBytes(server_.pid()));
  size_t scrape_after = 0;
  ASSERT_OK_AND_ASSIGN(const std::vector<Sample> after,
                       ScrapeSamples(&scrape_after));

  // Every flood call ended OK on the server's side.
  EXPECT_EQ(
      Sum(Select(after, "grpc_server_handled_total",
                 {{"grpc_method", "ResolveVersions"}, {"grpc_code", "OK"}})),
      kCalls + 1);
  // The series stay within the bound...
  const std::vector<Sample> series =
      Select(after, "compatd_client_requests_total");
  EXPECT_LE(series.size(), static_cast<size_t>(bound));
  EXPECT_GE(series.size(), static_cast<size_t>(bound) / 2)
      << "the bound was never reached: the flood did not flood";
  // ...the known kubelet keeps its own series...
  EXPECT_EQ(Select(after, "compatd_client_requests_total",
                   {{"component", "kubelet"},
                    {"version", "1.31"},
                    {"verdict", "too_old"}})
                .size(),
            1u);
  // ...the overflow is counted as "other"...
  EXPECT_GT(Sum(Select(after, "compatd_client_requests_total",
                       {{"component", "other"}, {"version", "other"}})),
            0);
  // ...no call is lost: each policy call is counted once per client...
  EXPECT_EQ(Sum(series), Sum(Select(after, "grpc_server_started_total",
                                    {{"grpc_service", kPolicyService}})));
  // ...and each keeps its verdict past the bound: every out-of-allowance
  // call (the flood's and the kubelet 1.31's) is counted too_old or too_new.
  EXPECT_EQ(Sum(Select(after, "compatd_client_requests_total",
                       {{"verdict", "too_old"}})) +
                Sum(Select(after, "compatd_client_requests_total",
                           {{"verdict", "too_new"}})),
            flood.out_of_allowance + 1);

  // ListClients stays bounded too.
  auto stub = v1::CompatibilityPolicy::NewStub(server_.NewChannel());
  grpc::ClientContext context;
  v1::ListClientsResponse clients;
  const grpc::Status status =
      stub->ListClients(&context, v1::ListClientsRequest(), &clients);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_LE(clients.clients_size(), bound);
  int known_verdicts = 0;
  bool has_other = false;
  for (const v1::ObservedClient& client : clients.clients()) {
    if (client.verdict() != v1::SKEW_VERDICT_UNKNOWN) ++known_verdicts;
    if (client.component() == "other") has_other = true;
  }
  EXPECT_TRUE(has_other);
  // Unknown-verdict junk takes at most half: the rest is judged clients.
  EXPECT_GE(known_verdicts, (bound - 1) / 2 - 1);

  // Memory: the flood leaves no per-client state behind.
  const double growth_mib =
      static_cast<double>(rss_after - rss_before) / (1024.0 * 1024.0);
  std::cerr << absl::StrFormat(
      "max-client-series=%d: %d calls in %.2f s (%.0f calls/s); "
      "VmRSS %.1f MiB -> %.1f MiB (%+.1f MiB); scrape %zu -> %zu bytes, "
      "%zu client series; ListClients %d rows\n",
      bound, kCalls, flood.seconds, kCalls / flood.seconds,
      rss_before / 1048576.0, rss_after / 1048576.0, growth_mib, scrape_before,
      scrape_after, series.size(), clients.clients_size());
  EXPECT_LT(scrape_after, 256u * 1024u);
  if (kSanitized) {
    std::cerr << "sanitizer build: RSS growth and time not bounded\n";
  } else {
    EXPECT_LT(growth_mib, 50);
    EXPECT_LT(flood.seconds, 60);
  }
}

INSTANTIATE_TEST_SUITE_P(Bounds, CardinalityTest, ::testing::Values(64, 0),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 0
                                      ? std::string("Default256")
                                      : absl::StrCat("Max", info.param);
                         });

}  // namespace
}  // namespace compatd
