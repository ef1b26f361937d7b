#include "http/exposer.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "tests/metrics/http_client.h"
#include "tests/testing/status_matchers.h"

namespace compatd::http {
namespace {

using ::compatd::testing::HttpRequest;
using ::compatd::testing::HttpResponse;
using ::compatd::testing::StatusIs;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Not;

class ExposerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(
        metrics::Family<metrics::Counter> * family,
        registry_.AddCounterFamily("test_requests_total", "Requests.", {"k"}));
    ASSERT_OK_AND_ASSIGN(counter_, family->Add({"v"}));
    ASSERT_OK_AND_ASSIGN(exposer_, Exposer::Start(&registry_, "127.0.0.1:0"));
  }

  metrics::Registry registry_;
  metrics::Counter* counter_ = nullptr;
  std::unique_ptr<Exposer> exposer_;
};

TEST_F(ExposerTest, ReportsTheBoundPort) { EXPECT_GT(exposer_->port(), 0); }

TEST_F(ExposerTest, ServesMetricsWithTheTextContentType) {
  counter_->Increment(5);
  ASSERT_OK_AND_ASSIGN(HttpResponse response,
                       HttpRequest(exposer_->port(), "GET", "/metrics"));
  EXPECT_EQ(response.status, 200);
  EXPECT_THAT(response.headers,
              HasSubstr("content-type: text/plain; version=0.0.4; "
                        "charset=utf-8"));
  EXPECT_THAT(response.headers, HasSubstr(absl::StrCat("content-length: ",
                                                       response.body.size())));
  EXPECT_EQ(response.body,
            "# HELP test_requests_total Requests.\n"
            "# TYPE test_requests_total counter\n"
            "test_requests_total{k=\"v\"} 5\n");
}

TEST_F(ExposerTest, EachScrapeSeesCurrentValues) {
  ASSERT_OK_AND_ASSIGN(HttpResponse before,
                       HttpRequest(exposer_->port(), "GET", "/metrics"));
  counter_->Increment();
  ASSERT_OK_AND_ASSIGN(HttpResponse after,
                       HttpRequest(exposer_->port(), "GET", "/metrics"));
  EXPECT_THAT(before.body, HasSubstr("test_requests_total{k=\"v\"} 0\n"));
  EXPECT_THAT(after.body, HasSubstr("test_requests_total{k=\"v\"} 1\n"));
}

TEST_F(ExposerTest, HeadHasHeadersOnly) {
  ASSERT_OK_AND_ASSIGN(HttpResponse response,
                       HttpRequest(exposer_->port(), "HEAD", "/metrics"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "");
}

TEST_F(ExposerTest, OtherPathsAre404) {
  for (const char* path : {"/", "/metric", "/metrics/x", "/metricsx", "/foo"}) {
    ASSERT_OK_AND_ASSIGN(HttpResponse response,
                         HttpRequest(exposer_->port(), "GET", path));
    EXPECT_EQ(response.status, 404) << path;
    EXPECT_THAT(response.body, Not(HasSubstr("test_requests_total"))) << path;
  }
}

TEST_F(ExposerTest, PostIs405) {
  ASSERT_OK_AND_ASSIGN(HttpResponse response,
                       HttpRequest(exposer_->port(), "POST", "/metrics"));
  EXPECT_EQ(response.status, 405);
  EXPECT_THAT(response.headers, HasSubstr("allow: get, head"));
}

TEST_F(ExposerTest, ConcurrentScrapesWhileIncrementing) {
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    while (!stop.load()) counter_->Increment();
  });
  std::vector<std::thread> scrapers;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    scrapers.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        absl::StatusOr<HttpResponse> response =
            HttpRequest(exposer_->port(), "GET", "/metrics");
        if (response.ok() && response->status == 200) ++ok;
      }
    });
  }
  for (std::thread& scraper : scrapers) scraper.join();
  stop = true;
  writer.join();
  EXPECT_EQ(ok.load(), 40);
}

TEST_F(ExposerTest, StopClosesThePort) {
  const int port = exposer_->port();
  exposer_->Stop();
  exposer_->Stop();  // idempotent
  EXPECT_THAT(HttpRequest(port, "GET", "/metrics"),
              StatusIs(absl::StatusCode::kUnavailable, _));
}

TEST(ExposerStartTest, PortInUseIsUnavailable) {
  metrics::Registry registry;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Exposer> first,
                       Exposer::Start(&registry, "127.0.0.1:0"));
  EXPECT_THAT(
      Exposer::Start(&registry, absl::StrCat("127.0.0.1:", first->port())),
      StatusIs(absl::StatusCode::kUnavailable,
               HasSubstr(absl::StrCat("127.0.0.1:", first->port()))));
}

TEST(ExposerStartTest, MalformedAddressesAreInvalid) {
  metrics::Registry registry;
  for (const char* address :
       {"", "9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:x", "127.0.0.1:70000",
        "::1:9464", "[::1:9464", "127.0.0.1:-1", "a,b:1"}) {
    EXPECT_THAT(Exposer::Start(&registry, address),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("")))
        << address;
  }
}

TEST(ExposerStartTest, NullRegistryIsInvalid) {
  EXPECT_THAT(Exposer::Start(nullptr, "127.0.0.1:0"),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
}

}  // namespace
}  // namespace compatd::http
