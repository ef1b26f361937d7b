// The poller against a stand-in Prometheus: the four queries of a refresh
// become one published answer; each kind of failure is recorded, counted and
// makes the view fall back; a refresh never blocks a reader.

#include "fleet/prometheus_poller.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/text_format.h"
#include "tests/fleet/fake_prometheus.h"

namespace compatd::fleet {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// What a Prometheus scraping two replicas answers: kubelet 1.34 on both,
// kubectl 1.36 on one.
FakeReply TwoReplicas(const std::string& query) {
  if (absl::StartsWith(query, "count(compatd_build_info")) {
    return {.body = VectorAnswer({{"{}", "2"}})};
  }
  if (absl::StartsWith(query,
                       "max by (component, version) "
                       "(compatd_client_last_seen")) {
    return {
        .body = VectorAnswer(
            {{R"({"component":"kubelet","version":"1.34"})", "1764230300"},
             {R"({"component":"kubectl","version":"1.36"})", "1764230350.5"}})};
  }
  if (absl::StartsWith(query, "min by (component, version)")) {
    return {
        .body = VectorAnswer(
            {{R"({"component":"kubelet","version":"1.34"})", "1764230000"},
             {R"({"component":"kubectl","version":"1.36"})", "1764230350.5"},
             // Expired pairs' first-seen are ignored.
             {R"({"component":"old","version":"1.20"})", "1"}})};
  }
  if (absl::StartsWith(query, "sum by (component, version)")) {
    return {.body = VectorAnswer(
                {{R"({"component":"kubelet","version":"1.34"})", "17"},
                 {R"({"component":"kubectl","version":"1.36"})", "3"}})};
  }
  return {.status = 400,
          .body = R"({"status":"error","errorType":"bad_data","error":"?"})"};
}

class PollerTest : public ::testing::Test {
 protected:
  std::unique_ptr<PrometheusPoller> NewPoller(
      const std::string& url, absl::Duration timeout = absl::Seconds(2),
      runtime::FleetClients* fleet = nullptr,
      metrics::Registry* registry = nullptr) {
    PrometheusPollerOptions options;
    options.client.url = url;
    options.client.timeout = timeout;
    options.queries.selector = "job=\"compatd\"";
    options.refresh = absl::Milliseconds(100);
    auto poller = std::make_unique<PrometheusPoller>(
        options, fleet != nullptr ? fleet : &fleet_,
        registry != nullptr ? registry : &registry_);
    EXPECT_TRUE(poller->Init().ok());
    return poller;
  }
  static std::string Scrape(const metrics::Registry& registry) {
    return metrics::SerializeText(registry.Collect());
  }
  std::string Scrape() const { return Scrape(registry_); }

  metrics::Registry registry_;
  runtime::FleetClients fleet_{
      {.source = "Prometheus at test", .max_age = absl::Hours(1)}};
};

TEST_F(PollerTest, ARefreshPublishesTheFleet) {
  FakePrometheus prometheus(TwoReplicas);
  std::unique_ptr<PrometheusPoller> poller = NewPoller(prometheus.url());
  ASSERT_TRUE(poller->RefreshOnce().ok());
  runtime::FleetClients::State state = fleet_.Current();
  ASSERT_NE(state.answer, nullptr) << state.why_not;
  EXPECT_EQ(state.answer->replicas, 2);
  ASSERT_EQ(state.answer->clients.size(), 2u);
  const runtime::FleetClient& kubectl = state.answer->clients[0];
  EXPECT_EQ(kubectl.component, "kubectl");
  EXPECT_EQ(kubectl.version, "1.36");
  EXPECT_EQ(kubectl.requests, 3u);
  EXPECT_EQ(kubectl.last_seen,
            absl::FromUnixSeconds(1764230350) + absl::Milliseconds(500));
  const runtime::FleetClient& kubelet = state.answer->clients[1];
  EXPECT_EQ(kubelet.first_seen, absl::FromUnixSeconds(1764230000));
  EXPECT_EQ(kubelet.last_seen, absl::FromUnixSeconds(1764230300));
  EXPECT_EQ(kubelet.requests, 17u);
  // The selector is in every query.
  for (const std::string& request : prometheus.requests()) {
    EXPECT_THAT(request, HasSubstr("%7Bjob%3D%22compatd%22%7D"));
  }
  EXPECT_EQ(prometheus.requests().size(), 4u);
  const std::string scrape = Scrape();
  EXPECT_THAT(scrape,
              HasSubstr("compatd_prometheus_queries_total{result=\"ok\"} 1"));
  EXPECT_THAT(scrape, HasSubstr("compatd_client_view_fleet 1"));
}

TEST_F(PollerTest, EachFailureFallsBackAndIsCounted) {
  struct Case {
    std::string name;
    FakePrometheus::Handler handler;
    std::string result;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"garbage",
       [](const std::string&) { return FakeReply{.body = "{\"status\":1}"}; },
       "bad_answer", "no \"status\""},
      {"prometheus error",
       [](const std::string&) {
         return FakeReply{.status = 422,
                          .body =
                              R"({"status":"error","errorType":"execution",)"
                              R"("error":"query timed out"})"};
       },
       "prometheus_error", "execution: query timed out"},
      {"proxy page",
       [](const std::string&) {
         return FakeReply{.status = 502,
                          .content_type = "text/html",
                          .body = "<html>Bad Gateway</html>"};
       },
       "http_error", "answered HTTP 502"},
      {"no replicas",
       [](const std::string&) { return FakeReply{.body = VectorAnswer({})}; },
       "no_replicas", "does --prometheus-selector match"},
      {"duplicate pairs",
       [](const std::string& query) {
         if (absl::StartsWith(query, "count(")) {
           return FakeReply{.body = VectorAnswer({{"{}", "1"}})};
         }
         return FakeReply{.body = VectorAnswer(
                              {{R"({"component":"a","version":"1.1"})", "1"},
                               {R"({"component":"a","version":"1.1"})", "2"}})};
       },
       "bad_answer", "twice"},
      {"slow",
       [](const std::string&) {
         return FakeReply{.body = "{}", .delay = 2000ms};
       },
       "timeout", "did not answer within 300ms"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    metrics::Registry registry;
    runtime::FleetClients fleet(
        {.source = "Prometheus at test", .max_age = absl::Hours(1)});
    FakePrometheus good(TwoReplicas);
    ASSERT_TRUE(NewPoller(good.url(), absl::Seconds(2), &fleet, &registry)
                    ->RefreshOnce()
                    .ok());
    ASSERT_NE(fleet.Current().answer, nullptr);

    metrics::Registry bad_registry;
    FakePrometheus bad(c.handler);
    std::unique_ptr<PrometheusPoller> poller =
        NewPoller(bad.url(), absl::Milliseconds(300), &fleet, &bad_registry);
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = poller->RefreshOnce();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
    EXPECT_THAT(status.message(), HasSubstr(c.says));
    runtime::FleetClients::State state = fleet.Current();
    EXPECT_EQ(state.answer, nullptr);
    EXPECT_THAT(state.why_not, HasSubstr(c.says));
    const std::string scrape = Scrape(bad_registry);
    EXPECT_THAT(scrape, HasSubstr(absl::StrCat(
                            "compatd_prometheus_queries_total{result=\"",
                            c.result, "\"} 1")));
    EXPECT_THAT(scrape, HasSubstr("compatd_client_view_fleet 0"));
  }
}

TEST_F(PollerTest, ReadersNeverWaitForAQuery) {
  // Prometheus takes a second per query; readers keep getting the last
  // state while the background thread waits.
  std::atomic<bool> slow{false};
  FakePrometheus prometheus([&](const std::string& query) {
    FakeReply reply = TwoReplicas(query);
    if (slow.load()) reply.delay = 1000ms;
    return reply;
  });
  std::unique_ptr<PrometheusPoller> poller = NewPoller(prometheus.url());
  ASSERT_TRUE(poller->RefreshOnce().ok());
  slow.store(true);
  poller->Start();
  std::this_thread::sleep_for(300ms);  // a refresh is in flight now
  for (int i = 0; i < 100; ++i) {
    const auto start = std::chrono::steady_clock::now();
    runtime::FleetClients::State state = fleet_.Current();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 50ms);
    EXPECT_NE(state.answer, nullptr);
  }
  poller->Stop();  // waits for the query in flight, at most the timeout
}

}  // namespace
}  // namespace compatd::fleet
