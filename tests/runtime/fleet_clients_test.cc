// The fleet view: the PromQL it asks, the selector it accepts, FleetClients'
// usable/fallback states, and the client tracker's View() and gauges with
// and without a fleet answer.

#include "runtime/fleet_clients.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine/catalog.h"
#include "engine/user_agent.h"
#include "engine/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "metrics/text_format.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"
#include "tests/testing/status_matchers.h"

namespace compatd::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::Pair;

TEST(BuildFleetQueriesTest, SumsEveryReplicaByComponentAndVersion) {
  FleetQueries q = BuildFleetQueries(
      {.selector = "namespace=\"compatd\"", .client_ttl = absl::Minutes(10)});
  EXPECT_EQ(q.last_seen,
            "max by (component, version) "
            "(compatd_client_last_seen_timestamp_seconds{namespace=\"compatd\"}"
            ") > time() - 600");
  EXPECT_EQ(q.first_seen,
            "min by (component, version) "
            "(compatd_client_first_seen_timestamp_seconds{namespace="
            "\"compatd\"})");
  EXPECT_EQ(q.requests,
            "sum by (component, version) "
            "(compatd_client_requests_total{namespace=\"compatd\"})");
  EXPECT_EQ(q.replicas, "count(compatd_build_info{namespace=\"compatd\"})");
  q = BuildFleetQueries({.client_ttl = absl::Seconds(90), .recorded = true});
  EXPECT_EQ(
      q.last_seen,
      "max by (component, version) "
      "(job:compatd_client_last_seen_timestamp_seconds:max) > time() - 90");
  EXPECT_EQ(q.requests,
            "sum by (component, version) (job:compatd_client_requests:sum)");
  EXPECT_EQ(q.replicas, "count(compatd_build_info)");
}

TEST(ValidateSelectorTest, LabelMatchersOnly) {
  for (const char* good : {"", "  ", "job=\"compatd\"",
                           "namespace=\"compatd\", "
                           "job=~\"compatd.*\",pod!=\"x\",a!~\"\\\"q\\\"\""}) {
    EXPECT_TRUE(ValidateSelector(good).ok()) << good;
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{job=\"compatd\"}", "a label name"},
      {"job", "an operator"},
      {"job==\"x\"", "a double-quoted value"},
      {"job=compatd", "a double-quoted value"},
      {"job=\"compatd", "closing quote"},
      {"job=\"a\" pod=\"b\"", "a comma"},
      {"job=\"a\"}) or vector(1", "a comma"},
      {"1job=\"a\"", "a label name"},
      {"job=\"a\nb\"", "a line break"},
      {std::string(1025, 'a'), "at most 1024"},
  };
  for (const auto& [selector, says] : bad) {
    absl::Status s = ValidateSelector(selector);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << selector;
    EXPECT_THAT(s.message(), HasSubstr(says)) << selector;
  }
}

TEST(FleetClientsTest, UsableUntilAFailureOrTooOld) {
  std::atomic<int64_t> now{1000};
  FleetClients fleet({.source = "Prometheus at http://prom:9090",
                      .max_age = absl::Seconds(30),
                      .clock = [&] { return absl::FromUnixSeconds(now); }});
  FleetClients::State state = fleet.Current();
  EXPECT_EQ(state.answer, nullptr);
  EXPECT_THAT(state.why_not, HasSubstr("has not answered yet"));

  fleet.Publish(
      {.clients = {}, .taken = absl::FromUnixSeconds(1000), .replicas = 2});
  state = fleet.Current();
  ASSERT_NE(state.answer, nullptr);
  EXPECT_EQ(state.answer->replicas, 2);

  now = 1031;
  state = fleet.Current();
  EXPECT_EQ(state.answer, nullptr);
  EXPECT_THAT(state.why_not, HasSubstr("last answer is 31s old"));

  now = 1040;
  fleet.Publish({.taken = absl::FromUnixSeconds(1040), .replicas = 2});
  fleet.Fail(absl::UnavailableError("connection refused"));
  now = 1041;
  fleet.Fail(absl::UnavailableError("connection refused again"));
  state = fleet.Current();
  EXPECT_EQ(state.answer, nullptr);
  EXPECT_THAT(state.why_not,
              HasSubstr("Prometheus at http://prom:9090 failed since "
                        "1970-01-01T00:17:20Z: UNAVAILABLE: connection "
                        "refused again"));
  fleet.Publish({.taken = absl::FromUnixSeconds(1041), .replicas = 3});
  EXPECT_NE(fleet.Current().answer, nullptr);
}

// The tracker with and without the fleet. A 1.36 catalog without a cluster
// section: emulation 1.36, min-compatibility 1.35, so kubelet may be
// [1.33, 1.36] and kubectl [1.35, 1.37] (the skew table of
// tests/runtime/client_tracker_test.cc).
class TrackerFleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServiceMetrics::Options options;
    options.version = "test";
    options.revision = "test";
    ASSERT_OK_AND_ASSIGN(metrics_, ServiceMetrics::Create(&registry_, options));
    auto catalog = std::make_shared<engine::Catalog>();
    catalog->binary_version = *engine::Version::Parse("1.36");
    snapshot_ = SingleLineSnapshot(std::move(catalog), 1);
    store_.Publish(snapshot_);
    fleet_ = std::make_unique<FleetClients>(
        FleetClients::Options{.source = "Prometheus at http://prom:9090",
                              .max_age = absl::Seconds(45),
                              .clock = [this] { return Now(); }});
    ClientTracker::Options tracker;
    tracker.idle_ttl = absl::Minutes(10);
    tracker.clock = [this] { return Now(); };
    tracker.fleet = fleet_.get();
    tracker_ =
        std::make_unique<ClientTracker>(&store_, metrics_.get(), tracker);
  }
  void TearDown() override { tracker_.reset(); }

  absl::Time Now() const { return absl::FromUnixSeconds(now_.load()); }
  void Record(absl::string_view component, absl::string_view version) {
    tracker_->Record(*snapshot_,
                     engine::IdentifyClient(component, version, ""));
  }
  std::string Scrape() const {
    return metrics::SerializeText(registry_.Collect());
  }

  std::atomic<int64_t> now_{10000};
  metrics::Registry registry_;
  std::unique_ptr<ServiceMetrics> metrics_;
  SnapshotStore store_;
  std::shared_ptr<ServingSnapshot> snapshot_;
  std::unique_ptr<FleetClients> fleet_;
  std::unique_ptr<ClientTracker> tracker_;
};

TEST_F(TrackerFleetTest, WithoutAnAnswerTheViewIsThisReplicasAndSaysWhy) {
  Record("kubectl", "v1.36.0");
  ClientView view = tracker_->View(*snapshot_);
  EXPECT_EQ(view.scope, ClientScope::kReplica);
  EXPECT_EQ(view.source, "this replica");
  EXPECT_EQ(view.as_of, Now());
  ASSERT_EQ(view.clients.size(), 1u);
  EXPECT_THAT(view.note, HasSubstr("not the fleet's: Prometheus at "
                                   "http://prom:9090 has not answered yet"));
}

TEST_F(TrackerFleetTest, NoFleetConfiguredSaysOneReplicaOfSeveral) {
  ClientTracker alone(nullptr, nullptr, ClientTracker::Options());
  ClientView view = alone.View(*snapshot_);
  EXPECT_EQ(view.scope, ClientScope::kReplica);
  EXPECT_THAT(view.note, HasSubstr("This replica's clients only"));
  EXPECT_THAT(view.note, HasSubstr("without --prometheus-url"));
}

TEST_F(TrackerFleetTest, FleetAnswerMergedWithThisReplicasEntries) {
  Record("kubectl", "v1.36.0");  // here only: not scraped yet
  now_ = 10010;
  Record("kubelet", "v1.34.1");  // here and in the fleet
  fleet_->Publish(
      FleetAnswer{.clients =
                      {
                          // Another replica's old kubelet.
                          {"kubelet", "1.31", absl::FromUnixSeconds(9000),
                           absl::FromUnixSeconds(9990), 7},
                          {"kubelet", "1.34", absl::FromUnixSeconds(9500),
                           absl::FromUnixSeconds(10005), 40},
                          // Seen 11 minutes ago: past the TTL by now.
                          {"kube-proxy", "1.35", absl::FromUnixSeconds(9000),
                           absl::FromUnixSeconds(10010 - 660), 3},
                          {"curl", "unknown", absl::FromUnixSeconds(9900),
                           absl::FromUnixSeconds(9950), 2},
                      },
                  .taken = absl::FromUnixSeconds(10008),
                  .replicas = 3});
  ClientView view = tracker_->View(*snapshot_);
  EXPECT_EQ(view.scope, ClientScope::kFleet);
  EXPECT_EQ(view.replicas, 3);
  EXPECT_EQ(view.as_of, absl::FromUnixSeconds(10008));
  EXPECT_EQ(view.source, "Prometheus at http://prom:9090");
  EXPECT_THAT(view.note, HasSubstr("summed the series of 3 compatd replica"));
  ASSERT_EQ(view.clients.size(), 4u);
  EXPECT_EQ(view.clients[0].component, "curl");
  EXPECT_FALSE(view.clients[0].verdict.has_value());
  EXPECT_EQ(view.clients[1].component, "kubectl");
  EXPECT_EQ(view.clients[1].version, "1.36");
  EXPECT_EQ(view.clients[1].requests, 1u);
  EXPECT_EQ(view.clients[1].verdict, engine::SkewVerdict::kAllowed);
  EXPECT_EQ(view.clients[2].version, "1.31");
  EXPECT_EQ(view.clients[2].verdict, engine::SkewVerdict::kTooOld);
  EXPECT_EQ(view.clients[2].min_version, "1.33");
  EXPECT_EQ(view.clients[3].version, "1.34");
  EXPECT_EQ(view.clients[3].first_seen, absl::FromUnixSeconds(9500));
  EXPECT_EQ(view.clients[3].last_seen, absl::FromUnixSeconds(10010));
  EXPECT_EQ(view.clients[3].requests, 40u);
  // A component filter applies to both.
  EXPECT_EQ(tracker_->View(*snapshot_, "kubelet").clients.size(), 2u);
  // The gauges count the fleet's clients: the old kubelet is another
  // replica's.
  EXPECT_THAT(tracker_->OutOfAllowance(*snapshot_),
              IsSupersetOf({Pair("kubelet", 1), Pair("kubectl", 0)}));
  EXPECT_THAT(Scrape(), HasSubstr("compatd_clients_out_of_allowance{component="
                                  "\"kubelet\"} 1"));
  // The seen gauges stay this replica's own.
  const std::string scrape = Scrape();
  EXPECT_THAT(scrape,
              HasSubstr("compatd_client_last_seen_timestamp_seconds{component="
                        "\"kubelet\",version=\"1.34\"} 10010"));
  EXPECT_THAT(scrape, Not(HasSubstr("version=\"1.31\"")));

  // Prometheus fails: back to this replica at once.
  fleet_->Fail(absl::DeadlineExceededError("no answer within 5s"));
  view = tracker_->View(*snapshot_);
  EXPECT_EQ(view.scope, ClientScope::kReplica);
  EXPECT_EQ(view.clients.size(), 2u);
  EXPECT_THAT(view.note, HasSubstr("no answer within 5s"));
  EXPECT_THAT(tracker_->OutOfAllowance(*snapshot_),
              IsSupersetOf({Pair("kubelet", 0)}));
}

TEST_F(TrackerFleetTest, SeenGaugesShareTheUnknownVersionLabel) {
  Record("kubelet", "garbage-one");
  now_ = 10020;
  Record("kubelet", "garbage-two");
  const std::string scrape = Scrape();
  EXPECT_THAT(scrape,
              HasSubstr("compatd_client_first_seen_timestamp_seconds{component="
                        "\"kubelet\",version=\"unknown\"} 10000"));
  EXPECT_THAT(scrape,
              HasSubstr("compatd_client_last_seen_timestamp_seconds{component="
                        "\"kubelet\",version=\"unknown\"} 10020"));
  // Past the TTL the pair is gone from the gauges.
  now_ = 10020 + 601;
  EXPECT_THAT(Scrape(), Not(HasSubstr("compatd_client_last_seen_timestamp_"
                                      "seconds{")));
}

}  // namespace
}  // namespace compatd::runtime
