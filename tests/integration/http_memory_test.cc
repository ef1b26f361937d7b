// The HTTP ports' memory budget (--max-http-memory-bytes, http::MemoryBudget)
// against the real binary: a body's bytes are taken as they arrive, never
// from the Content-Length a head declares, and answers have an account of
// their own, so that heads alone, or bodies that fill the budget, never
// refuse /healthz, /metrics, a small /v1 call or an AdmissionReview
// (issue 36: four sockets sending only the head of a 16 MiB POST made both
// ports answer 429 for 30 s each).

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/loopback.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/time_scale.h"

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::compatd::testing::HttpReply;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr auto kLightBound = testing::Scaled(std::chrono::milliseconds(250));

const char kReview[] =
    R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
    R"("request":{"uid":"u-1","operation":"CREATE",)"
    R"("kind":{"group":"batch","version":"v1beta1","kind":"CronJob"},)"
    R"("object":{"apiVersion":"batch/v1beta1","kind":"CronJob",)"
    R"("metadata":{"name":"c"}}}})";

// Connections that sent a head (and `body_bytes` of its body) and hold it.
class HeldPosts {
 public:
  ~HeldPosts() {
    for (int fd : fds_) close(fd);
  }
  // True when the head and the bytes were sent.
  bool Open(int port, const std::string& path, size_t content_length,
            size_t body_bytes = 0) {
    const int fd = testing::ConnectLoopback(port, timeval{10, 0});
    if (fd < 0) return false;
    fds_.push_back(fd);
    std::string request = absl::StrCat(
        "POST ", path,
        " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: ",
        content_length, "\r\n\r\n");
    request.append(body_bytes, ' ');
    size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n =
          send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

 private:
  std::vector<int> fds_;
};

// /healthz, a small /v1 call and an AdmissionReview on the front door and
// /metrics on the metrics port: each 200 within kLightBound.
void ExpectLightCallsAnswered(const CompatdProcess& server) {
  struct Call {
    int port;
    const char* method;
    const char* target;
    const char* body;
  };
  const Call calls[] = {
      {server.http_port(), "GET", "/healthz", ""},
      {server.http_port(), "POST", "/v1/GetFeature", R"({"name":"WatchList"})"},
      {server.http_port(), "POST", "/admission/v1/validate", kReview},
      {server.metrics_port(), "GET", "/metrics", ""},
  };
  for (const Call& call : calls) {
    const auto start = Clock::now();
    absl::StatusOr<HttpReply> reply =
        testing::HttpCall(call.port, call.method, call.target, call.body);
    const auto took = Clock::now() - start;
    ASSERT_OK(reply);
    EXPECT_EQ(reply->status, 200) << call.target << ": " << reply->body;
    EXPECT_LT(took, kLightBound) << call.target;
  }
}

double Metric(const CompatdProcess& server, const std::string& name) {
  absl::StatusOr<std::string> scrape = server.Scrape();
  if (!scrape.ok()) return -1;
  const size_t at = scrape->find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(scrape->substr(at + name.size() + 2));
}

TEST(HttpMemoryTest, HeadsAloneHoldNothing) {
  CompatdProcess server;
  ASSERT_OK(server.Start({"--http-listen=127.0.0.1:0"}));
  // Each head declares its path's whole bound: 40 of them declare 436 MiB,
  // almost seven times the default budget of 64 MiB.
  HeldPosts held;
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(
        held.Open(server.http_port(), "/admission/v1/validate", 16 << 20));
    ASSERT_TRUE(held.Open(server.http_port(), "/v1/ScanObjects", 3 << 20));
  }
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(held.Open(server.http_port(), "/audit/v1/events", 3 << 20));
  }
  // Each with a few bytes of its body too.
  ASSERT_TRUE(
      held.Open(server.http_port(), "/admission/v1/validate", 16 << 20, 1000));
  // Until the server has read the last one's bytes (the heads before it
  // have had the time to be read too).
  const auto deadline = Clock::now() + testing::Scaled(std::chrono::seconds(5));
  while (Metric(server, "compatd_http_memory_bytes") < 1000 &&
         Clock::now() < deadline) {
    usleep(10 * 1000);
  }
  ExpectLightCallsAnswered(server);
  EXPECT_EQ(Metric(server, "compatd_http_memory_refused_total"), 0);
  EXPECT_LT(Metric(server, "compatd_http_memory_bytes"), 1 << 20);
}

// Bodies that arrive and fill the bodies' account: the next body's bytes
// get 429; answers (of bodiless GETs and of small calls alike) are still
// written from their own account.
TEST(HttpMemoryTest, BodiesThatFillTheBudgetNeverRefuseAnswers) {
  CompatdProcess server;
  ASSERT_OK(server.Start(
      {"--http-listen=127.0.0.1:0", "--max-http-memory-bytes=4194304",
       "--max-http-body-bytes=1048576", "--max-admission-body-bytes=1048576"}));
  HeldPosts held;
  // 4 x (1 MiB - 1 byte): just under the 4 MiB of the bodies' account.
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(held.Open(server.http_port(), "/v1/ScanObjects", 1 << 20,
                          (1 << 20) - 1));
  }
  const auto deadline = Clock::now() + testing::Scaled(std::chrono::seconds(5));
  while (Metric(server, "compatd_http_memory_bytes") < 4 * ((1 << 20) - 1) &&
         Clock::now() < deadline) {
    usleep(10 * 1000);
  }
  EXPECT_EQ(Metric(server, "compatd_http_memory_bytes"), 4 * ((1 << 20) - 1));
  // The answers' account is untouched: GETs are answered.
  for (const char* target : {"/healthz", "/v1/GetFeature?name=WatchList"}) {
    absl::StatusOr<HttpReply> reply =
        testing::HttpGet(server.http_port(), target);
    ASSERT_OK(reply);
    EXPECT_EQ(reply->status, 200) << target << ": " << reply->body;
  }
  absl::StatusOr<std::string> scrape = server.Scrape();
  ASSERT_OK(scrape);
  // A body that passes the bodies' account is refused as it arrives.
  absl::StatusOr<HttpReply> refused =
      testing::HttpPost(server.http_port(), "/v1/GetFeature",
                        std::string(64 << 10, ' ') + R"({"name":"WatchList"})");
  if (refused.ok()) {
    EXPECT_EQ(refused->status, 429) << refused->body;
    EXPECT_THAT(refused->body, HasSubstr("--max-http-memory-bytes=4194304"));
  }  // else the connection was reset before the answer was read
  EXPECT_GE(Metric(server, "compatd_http_memory_refused_total"), 1);
}

}  // namespace
}  // namespace compatd
