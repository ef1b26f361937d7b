// Issue 17, item 5: 20 half-sent HTTP requests trickled one byte at a time
// made every Prometheus scrape time out for 40 s (civetweb's 2 workers). On
// the Beast server each slow client holds only its own connection: scrapes
// are answered at once, and the trickling connections are closed once their
// head is late.

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/loopback.h"

namespace compatd {
namespace {

using namespace std::chrono_literals;
using ::compatd::testing::CompatdProcess;
using ::compatd::testing::ConnectLoopback;
using ::compatd::testing::HttpGet;
using ::compatd::testing::HttpReply;

TEST(MetricsSlowClientsTest, ScrapesSucceedWhileClientsTrickleTheirHeaders) {
  CompatdProcess compatd;
  ASSERT_TRUE(compatd.Start().ok()) << compatd.Stderr();
  std::vector<int> slow;
  for (int i = 0; i < 40; ++i) {
    const int fd = ConnectLoopback(compatd.metrics_port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, "G", 1, MSG_NOSIGNAL), 1);
    slow.push_back(fd);
  }
  const absl::string_view rest = "ET /metrics HTTP/1.1\r\nHost: x\r\n";
  for (size_t i = 0; i < 12; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<HttpReply> reply =
        HttpGet(compatd.metrics_port(), "/metrics");
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reply->status, 200);
    EXPECT_TRUE(absl::StrContains(reply->body, "compatd_build_info"));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "scrape " << i;
    for (int fd : slow)
      send(fd, rest.data() + (i % rest.size()), 1, MSG_NOSIGNAL);
    std::this_thread::sleep_for(100ms);
  }
  for (int fd : slow) close(fd);
}

}  // namespace
}  // namespace compatd
