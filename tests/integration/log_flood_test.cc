// Log floods: lines a client can cause (gRPC's "Handshake failed" for every
// plaintext connection to a TLS port) are rate-limited per kind, with a count
// of those left out, so that nobody can fill the node's disk or hide other
// lines through compatd's log.

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/loopback.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_certs.h"

namespace compatd {
namespace {

using ::compatd::testing::Subprocess;
using ::compatd::testing::TestCerts;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

int CountLines(const std::string& text, absl::string_view needle) {
  int count = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    count += absl::StrContains(line, needle);
  }
  return count;
}

TEST(LogFloodTest, FailedHandshakesAreRateLimitedWithACount) {
  TestCerts certs;
  ASSERT_TRUE(certs.MakeCa("ca"));
  ASSERT_TRUE(certs.MakeServer("ca", "server"));
  Subprocess server;
  ASSERT_TRUE(server.Start(
      COMPATD_BINARY,
      {"--listen=127.0.0.1:0", "--metrics-listen=", "--shutdown-grace=1s",
       "--tls-cert=" + certs.Path("server.crt"),
       "--tls-key=" + certs.Path("server.key")}));
  ASSERT_TRUE(server.WaitForStderr("serving catalog", 20s)) << server.Stderr();
  std::smatch match;
  const std::string startup = server.Stderr();
  ASSERT_TRUE(std::regex_search(
      startup, match,
      std::regex("gRPC listening on 127\\.0\\.0\\.1:([0-9]+)")));
  const int port = std::stoi(match[1]);

  // 2,000 plaintext connections, each sending an HTTP/1.1 request to the TLS
  // port and closing: each one is a failed handshake.
  constexpr int kConnections = 2000;
  constexpr int kThreads = 4;
  std::atomic<int> sent{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kConnections / kThreads; ++i) {
        const int fd = testing::ConnectLoopback(port, timeval{2, 0});
        if (fd < 0) continue;
        const char request[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        if (send(fd, request, sizeof(request) - 1, MSG_NOSIGNAL) > 0) ++sent;
        char buffer[256];
        (void)!recv(fd, buffer, sizeof(buffer), 0);  // the server closes
        close(fd);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_GT(sent.load(), kConnections / 2);

  server.Signal(SIGTERM);
  ASSERT_EQ(server.Wait(10s), 0) << server.Stderr();
  const std::string err = server.Stderr();
  // Before: one line (or two) per connection, ~160 bytes each.
  EXPECT_LT(err.size(), 20000u) << err.substr(0, 4000);
  const int handshake_lines = CountLines(err, "andshake");
  EXPECT_GT(handshake_lines, 0) << err;
  EXPECT_LE(handshake_lines, 40) << err.substr(0, 4000);
  // What was left out is counted, in a line written at the latest on exit.
  EXPECT_THAT(err, HasSubstr("more lines of kind grpc:")) << err;
}

}  // namespace
}  // namespace compatd
