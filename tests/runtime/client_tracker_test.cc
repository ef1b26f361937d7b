#include "runtime/client_tracker.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/catalog.h"
#include "engine/user_agent.h"
#include "engine/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "metrics/text_format.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"
#include "tests/testing/status_matchers.h"

namespace compatd::runtime {
namespace {

using ClientVerdict = std::optional<engine::SkewVerdict>;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

// A 1.36 catalog with the KEP-4330 skew table. Without a cluster section the
// effective versions are emulation 1.36, min-compatibility 1.35, so:
// kubelet/kube-proxy [1.33, 1.36], kube-controller-manager [1.35, 1.36],
// kubectl [1.35, 1.37].
std::shared_ptr<engine::Catalog> NewCatalog(std::string emulation = "") {
  auto catalog = std::make_shared<engine::Catalog>();
  catalog->binary_version = *engine::Version::Parse("1.36");
  catalog->cluster.emulation_version = std::move(emulation);
  return catalog;
}

std::shared_ptr<ServingSnapshot> Serve(
    std::shared_ptr<const engine::Catalog> catalog, uint64_t generation) {
  return SingleLineSnapshot(std::move(catalog), generation);
}

std::shared_ptr<ServingSnapshot> MakeCatalog(uint64_t generation,
                                             std::string emulation = "") {
  return Serve(NewCatalog(std::move(emulation)), generation);
}

engine::ClientIdentity Client(absl::string_view component,
                              absl::string_view version) {
  return engine::IdentifyClient(component, version, "");
}

class ClientTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime::ServiceMetrics::Options options;
    options.version = "test";
    options.revision = "test";
    ASSERT_OK_AND_ASSIGN(metrics_,
                         runtime::ServiceMetrics::Create(&registry_, options));
    catalog_ = MakeCatalog(1);
    store_.Publish(catalog_);
    tracker_ = NewTracker(256);
  }

  std::unique_ptr<ClientTracker> NewTracker(size_t max_entries) {
    ClientTracker::Options options;
    options.max_entries = max_entries;
    options.idle_ttl = absl::Minutes(10);
    options.clock = [this] { return absl::FromUnixSeconds(now_.load()); };
    return std::make_unique<ClientTracker>(&store_, metrics_.get(), options);
  }

  std::string Scrape() const {
    return metrics::SerializeText(registry_.Collect());
  }

  std::atomic<int64_t> now_{1000};
  metrics::Registry registry_;
  std::unique_ptr<runtime::ServiceMetrics> metrics_;
  runtime::SnapshotStore store_;
  std::shared_ptr<ServingSnapshot> catalog_;
  std::unique_ptr<ClientTracker> tracker_;
};

TEST_F(ClientTrackerTest, RecordsFirstSeenLastSeenAndRequests) {
  tracker_->Record(*catalog_, Client("kubelet", "v1.34.2"));
  now_ = 1100;
  tracker_->Record(*catalog_, Client("kubelet", "v1.34.2"));
  std::vector<ObservedClientInfo> clients = tracker_->List(*catalog_);
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].component, "kubelet");
  EXPECT_EQ(clients[0].version, "1.34");
  EXPECT_EQ(clients[0].first_seen, absl::FromUnixSeconds(1000));
  EXPECT_EQ(clients[0].last_seen, absl::FromUnixSeconds(1100));
  EXPECT_EQ(clients[0].requests, 2u);
}

TEST_F(ClientTrackerTest, PatchVersionsShareOneMajorMinorEntry) {
  tracker_->Record(*catalog_, Client("kubelet", "v1.34.0"));
  tracker_->Record(*catalog_, Client("kubelet", "v1.34.7"));
  tracker_->Record(*catalog_, Client("kubelet", "1.34"));
  std::vector<ObservedClientInfo> clients = tracker_->List(*catalog_);
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].requests, 3u);
}

// KEP-4330 skew table at emulation 1.36, min-compatibility 1.35.
TEST_F(ClientTrackerTest, VerdictsAndRanges) {
  struct Case {
    const char* component;
    const char* version;
    ClientVerdict verdict;
    const char* min;
    const char* max;
  };
  const Case cases[] = {
      {"kubelet", "v1.33.0", engine::SkewVerdict::kAllowed, "1.33", "1.36"},
      {"kubelet", "v1.32.9", engine::SkewVerdict::kTooOld, "1.33", "1.36"},
      {"kube-controller-manager", "v1.37.0", engine::SkewVerdict::kTooNew,
       "1.35", "1.36"},
      {"kubectl", "v1.37.1", engine::SkewVerdict::kAllowed, "1.35", "1.37"},
      {"my-operator", "v1.36.0", std::nullopt, "", ""},
      {"kube-proxy", "latest", std::nullopt, "", ""},
  };
  for (const Case& c : cases)
    tracker_->Record(*catalog_, Client(c.component, c.version));
  std::vector<ObservedClientInfo> clients = tracker_->List(*catalog_);
  ASSERT_EQ(clients.size(), std::size(cases));
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.component, " ", c.version));
    auto it = std::find_if(clients.begin(), clients.end(),
                           [&](const ObservedClientInfo& info) {
                             return info.component == c.component &&
                                    absl::StrContains(c.version, info.version);
                           });
    ASSERT_NE(it, clients.end());
    EXPECT_EQ(it->verdict, c.verdict);
    EXPECT_EQ(it->min_version, c.min);
    EXPECT_EQ(it->max_version, c.max);
  }
}

TEST_F(ClientTrackerTest, UnreadableVersionKeepsTheRawValue) {
  tracker_->Record(*catalog_, Client("kube-proxy", "latest"));
  tracker_->Record(*catalog_,
                   engine::ParseUserAgent("curl/8.1.2"));  // no 'v'
  std::vector<ObservedClientInfo> clients = tracker_->List(*catalog_);
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_EQ(clients[0].component, "curl");
  EXPECT_EQ(clients[0].version, "8.1.2");
  EXPECT_EQ(clients[1].version, "latest");
  EXPECT_THAT(Scrape(), HasSubstr("compatd_client_requests_total{component="
                                  "\"kube-proxy\",version=\"unknown\","
                                  "verdict=\"unknown\"} 1\n"));
}

TEST_F(ClientTrackerTest, ListSortsAndFiltersByComponent) {
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.0"));
  tracker_->Record(*catalog_, Client("kubectl", "v1.35.0"));
  tracker_->Record(*catalog_, Client("kubelet", "v1.34.0"));
  std::vector<std::pair<std::string, std::string>> all;
  for (const ObservedClientInfo& info : tracker_->List(*catalog_)) {
    all.emplace_back(info.component, info.version);
  }
  EXPECT_THAT(all, ElementsAre(Pair("kubectl", "1.35"), Pair("kubelet", "1.34"),
                               Pair("kubelet", "1.36")));
  EXPECT_EQ(tracker_->List(*catalog_, "kubelet").size(), 2u);
  EXPECT_TRUE(tracker_->List(*catalog_, "kube-proxy").empty());
}

TEST_F(ClientTrackerTest, IdleEntriesExpire) {
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.0"));
  now_ = 1000 + 9 * 60;
  tracker_->Record(*catalog_, Client("kubectl", "v1.36.0"));
  now_ = 1000 + 11 * 60;  // kubelet idle 11 min, kubectl 2 min
  std::vector<ObservedClientInfo> clients = tracker_->List(*catalog_);
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].component, "kubectl");
  EXPECT_EQ(tracker_->size(), 2u);
  EXPECT_EQ(tracker_->Sweep(), 1u);
  EXPECT_EQ(tracker_->size(), 1u);
}

TEST_F(ClientTrackerTest, ExpiredEntryStartsAfreshWhenSeenAgain) {
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.0"));
  now_ = 1000 + 3600;
  tracker_->Sweep();
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.0"));
  std::vector<ObservedClientInfo> clients = tracker_->List(*catalog_);
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].first_seen, absl::FromUnixSeconds(1000 + 3600));
  EXPECT_EQ(clients[0].requests, 1u);
}

TEST_F(ClientTrackerTest, EntriesAreBoundedWithOverflowAsOther) {
  tracker_ = NewTracker(8);
  for (int minor = 0; minor < 100; ++minor) {
    tracker_->Record(*catalog_, Client("kubelet", absl::StrCat("1.", minor)));
  }
  EXPECT_EQ(tracker_->size(), 7u);  // one slot is the overflow entry's
  std::vector<ObservedClientInfo> clients = tracker_->List(*catalog_);
  ASSERT_EQ(clients.size(), 8u);
  const ObservedClientInfo& other = clients.back();
  EXPECT_EQ(other.component, "other");
  EXPECT_EQ(other.version, "other");
  EXPECT_EQ(other.verdict, std::nullopt);
  EXPECT_EQ(other.requests, 93u);
  // Overflowed calls keep their verdict: kubelet 1.7..1.32 too old,
  // 1.33..1.36 allowed, 1.37..1.99 too new.
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"other\",version=\"other\",verdict="
                              "\"too_old\"} 26\n"));
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"other\",version=\"other\",verdict="
                              "\"allowed\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"other\",version=\"other\",verdict="
                              "\"too_new\"} 63\n"));
}

TEST_F(ClientTrackerTest, ConcurrentNewClientsNeverPassTheBound) {
  // Callers inserting into different shards hold different locks; the last
  // free slot must still go to one of them only (the integration cardinality
  // test once saw ListClients return bound + 1 rows under ASan load).
  for (int round = 0; round < 200; ++round) {
    tracker_ = NewTracker(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([this, t] {
        for (int i = 0; i < 16; ++i) {
          tracker_->Record(*catalog_, Client(t % 2 == 0 ? "kubelet" : "kubectl",
                                             absl::StrCat("1.", t * 16 + i)));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_EQ(tracker_->size(), 7u) << "round " << round;
    ASSERT_EQ(tracker_->List(*catalog_).size(), 8u) << "round " << round;
  }
}

TEST_F(ClientTrackerTest, UnknownClientsCannotCrowdOutKnownOnes) {
  tracker_ = NewTracker(9);  // 8 entries, at most 4 unknown
  for (int i = 0; i < 1000; ++i) {
    tracker_->Record(*catalog_, Client(absl::StrCat("junk", i), "v1.36.0"));
  }
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.0"));
  tracker_->Record(*catalog_, Client("kubectl", "v1.20.0"));
  EXPECT_EQ(tracker_->size(), 6u);
  EXPECT_EQ(tracker_->List(*catalog_, "kubelet").size(), 1u);
  EXPECT_EQ(tracker_->List(*catalog_, "kubectl").size(), 1u);
}

TEST_F(ClientTrackerTest, ExpiryMakesRoomWhenFull) {
  tracker_ = NewTracker(3);
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.0"));
  tracker_->Record(*catalog_, Client("kubelet", "v1.35.0"));
  tracker_->Record(*catalog_, Client("kubelet", "v1.34.0"));  // overflow
  EXPECT_TRUE(tracker_->List(*catalog_, "kubelet").size() == 2u);
  now_ = 1000 + 3600;
  tracker_->Record(*catalog_, Client("kubelet", "v1.34.0"));  // sweeps first
  std::vector<ObservedClientInfo> kubelets =
      tracker_->List(*catalog_, "kubelet");
  ASSERT_EQ(kubelets.size(), 1u);
  EXPECT_EQ(kubelets[0].version, "1.34");
}

TEST_F(ClientTrackerTest, MetricsCountPerComponentVersionVerdict) {
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.0"));
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.3"));
  tracker_->Record(*catalog_, Client("kube-controller-manager", "v1.30.0"));
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"kubelet\",version=\"1.36\",verdict="
                              "\"allowed\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"kube-controller-manager\",version=\"1.30\","
                              "verdict=\"too_old\"} 1\n"));
}

TEST_F(ClientTrackerTest, OutOfAllowanceGaugeAtScrapeTime) {
  tracker_->Record(*catalog_, Client("kube-controller-manager", "v1.30.0"));
  tracker_->Record(*catalog_, Client("kube-controller-manager", "v1.38.0"));
  tracker_->Record(*catalog_, Client("kubelet", "v1.36.0"));
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("compatd_clients_out_of_allowance{component="
                              "\"kube-controller-manager\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("compatd_clients_out_of_allowance{component="
                              "\"kubelet\"} 0\n"));
  // Every component of the skew table is present, at 0 when none is off.
  EXPECT_THAT(text, HasSubstr("compatd_clients_out_of_allowance{component="
                              "\"cloud-controller-manager\"} 0\n"));
  now_ = 1000 + 3600;  // idle: no longer counted
  EXPECT_THAT(Scrape(), HasSubstr("compatd_clients_out_of_allowance{component="
                                  "\"kube-controller-manager\"} 0\n"));
}

TEST_F(ClientTrackerTest, CatalogReloadReevaluatesVerdicts) {
  tracker_->Record(*catalog_, Client("kube-controller-manager", "v1.36.0"));
  EXPECT_EQ(tracker_->List(*catalog_)[0].verdict,
            engine::SkewVerdict::kAllowed);
  // The cluster now emulates 1.35: kube-controller-manager 1.36 is too new.
  std::shared_ptr<ServingSnapshot> emulating = MakeCatalog(2, "1.35");
  store_.Publish(emulating);
  EXPECT_EQ(tracker_->List(*emulating)[0].verdict,
            engine::SkewVerdict::kTooNew);
  EXPECT_EQ(tracker_->List(*emulating)[0].max_version, "1.35");
  EXPECT_THAT(Scrape(), HasSubstr("compatd_clients_out_of_allowance{component="
                                  "\"kube-controller-manager\"} 1\n"));
  tracker_->Record(*emulating, Client("kube-controller-manager", "v1.36.0"));
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"kube-controller-manager\",version=\"1.36\","
                              "verdict=\"allowed\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"kube-controller-manager\",version=\"1.36\","
                              "verdict=\"too_new\"} 1\n"));
  // A request still holding the old snapshot is judged by it.
  tracker_->Record(*catalog_, Client("kube-controller-manager", "v1.36.0"));
  EXPECT_THAT(Scrape(),
              HasSubstr("compatd_client_requests_total{component="
                        "\"kube-controller-manager\",version=\"1.36\","
                        "verdict=\"allowed\"} 2\n"));
}

TEST_F(ClientTrackerTest, CatalogSkewPolicyDecides) {
  std::shared_ptr<engine::Catalog> custom_catalog = NewCatalog();
  engine::SkewRule rule;
  rule.components = {"my-operator"};
  rule.min = {engine::SkewBase::kMinCompatibility, 0};
  rule.max = {engine::SkewBase::kEmulation, 0};
  custom_catalog->skew_policy = {rule};
  std::shared_ptr<ServingSnapshot> custom = Serve(custom_catalog, 5);
  tracker_->Record(*custom, Client("my-operator", "v1.30.0"));
  tracker_->Record(*custom, Client("kubelet", "v1.36.0"));
  std::vector<ObservedClientInfo> clients = tracker_->List(*custom);
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_EQ(clients[0].component, "kubelet");
  EXPECT_EQ(clients[0].verdict, std::nullopt);
  EXPECT_EQ(clients[1].verdict, engine::SkewVerdict::kTooOld);
  EXPECT_THAT(tracker_->OutOfAllowance(*custom),
              ElementsAre(Pair("my-operator", 1)));
}

TEST_F(ClientTrackerTest, ConcurrentRecordsAreCountedExactly) {
  const std::vector<engine::ClientIdentity> clients = {
      Client("kubelet", "v1.36.0"), Client("kubelet", "v1.35.0"),
      Client("kubectl", "v1.37.0"),
      Client("kube-controller-manager", "v1.36.0")};
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        tracker_->Record(*catalog_, clients[(i + t) % clients.size()]);
      }
    });
  }
  // Scrapes and lists race with the writers.
  for (int i = 0; i < 20; ++i) {
    Scrape();
    tracker_->List(*catalog_);
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t total = 0;
  for (const ObservedClientInfo& info : tracker_->List(*catalog_)) {
    total += info.requests;
  }
  EXPECT_EQ(total, static_cast<uint64_t>(kThreads) * kPerThread);
  EXPECT_THAT(Scrape(), HasSubstr("compatd_client_requests_total{component="
                                  "\"kubelet\",version=\"1.36\",verdict="
                                  "\"allowed\"} 50000\n"));
}

TEST_F(ClientTrackerTest, DestroyedTrackerLeavesNoGaugeSource) {
  tracker_->Record(*catalog_, Client("kubelet", "v1.20.0"));
  EXPECT_THAT(Scrape(), HasSubstr("compatd_clients_out_of_allowance"));
  tracker_.reset();
  EXPECT_THAT(Scrape(), Not(HasSubstr("compatd_clients_out_of_allowance")));
}

TEST(ClientTrackerWithoutMetricsTest, WorksWithoutMetricsOrStore) {
  ClientTracker tracker(nullptr, nullptr, {});
  std::shared_ptr<ServingSnapshot> catalog = MakeCatalog(1);
  tracker.Record(*catalog, engine::ParseUserAgent(
                               "kubelet/v1.36.0 (linux/amd64) kubernetes/abc"));
  ASSERT_EQ(tracker.List(*catalog).size(), 1u);
  EXPECT_EQ(tracker.List(*catalog)[0].verdict, engine::SkewVerdict::kAllowed);
}

TEST_F(ClientTrackerTest, HostileIdentitiesAreSanitized) {
  engine::ClientIdentity hostile;
  hostile.component = "bad\ncomponent";
  hostile.version = std::string(1000, 'v');
  tracker_->Record(*catalog_, hostile);
  std::vector<ObservedClientInfo> clients = tracker_->List(*catalog_);
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].component, "unknown");
  EXPECT_EQ(clients[0].version, "unknown");
}

// The deriver's view of a cluster.upgradeTarget, as the API layer fills it.
class TargetAnswers final : public DerivedAnswers {
 public:
  explicit TargetAnswers(engine::EffectiveVersions target)
      : target_(std::move(target)) {}
  const engine::EffectiveVersions* UpgradeTargetVersions() const override {
    return &target_;
  }
  std::vector<std::pair<std::string, int64_t>> UpgradeBlockers()
      const override {
    return {{"apis", 0}, {"flags", 1}};
  }

 private:
  engine::EffectiveVersions target_;
};

namespace upgrade_target {

// Emulating 1.33 (min-compatibility 1.33) now, 1.36/1.35 at the target:
// kubelet [1.31, 1.33] now, [1.33, 1.36] at the target.
std::shared_ptr<ServingSnapshot> Emulating133WithTarget(uint64_t generation) {
  std::shared_ptr<ServingSnapshot> snapshot =
      Serve(NewCatalog("1.33"), generation);
  snapshot->lines[0].derived =
      std::make_shared<TargetAnswers>(engine::EffectiveVersions{
          *engine::Version::Parse("1.36"), engine::Version::MajorMinor(1, 36),
          engine::Version::MajorMinor(1, 35)});
  return snapshot;
}

}  // namespace upgrade_target

TEST_F(ClientTrackerTest, OutOfAllowanceAtTheUpgradeTarget) {
  std::shared_ptr<ServingSnapshot> snapshot =
      upgrade_target::Emulating133WithTarget(2);
  store_.Publish(snapshot);
  tracker_->Record(*snapshot, Client("kubelet", "v1.31.0"));  // old there
  tracker_->Record(*snapshot, Client("kubelet", "v1.33.1"));  // fine
  tracker_->Record(*snapshot, Client("kubectl", "v1.34.0"));  // old there
  tracker_->Record(*snapshot, Client("no-such-component", "v1.20.0"));
  EXPECT_THAT(tracker_->OutOfAllowanceAtTarget(*snapshot),
              ::testing::IsSupersetOf({Pair("kubelet", 1), Pair("kubectl", 1),
                                       Pair("kube-proxy", 0)}));
  for (const auto& [component, count] :
       tracker_->OutOfAllowanceAtTarget(*snapshot)) {
    EXPECT_NE(component, "no-such-component");
  }
  // Now, at 1.33, none is out of allowance.
  for (const auto& [component, count] : tracker_->OutOfAllowance(*snapshot)) {
    EXPECT_EQ(count, 0) << component;
  }
  const std::string scrape = Scrape();
  EXPECT_THAT(scrape, HasSubstr("compatd_clients_out_of_allowance_at_target{"
                                "component=\"kubelet\"} 1"));
  EXPECT_THAT(scrape,
              HasSubstr("compatd_upgrade_blockers{kind=\"clients\"} 2"));
  EXPECT_THAT(scrape, HasSubstr("compatd_upgrade_blockers{kind=\"flags\"} 1"));
  EXPECT_THAT(scrape, HasSubstr("compatd_upgrade_blockers{kind=\"apis\"} 0"));
}

TEST_F(ClientTrackerTest, NoUpgradeTargetNoSamples) {
  tracker_->Record(*catalog_, Client("kubelet", "v1.20.0"));
  EXPECT_THAT(tracker_->OutOfAllowanceAtTarget(*catalog_),
              ::testing::IsEmpty());
  const std::string scrape = Scrape();
  EXPECT_THAT(scrape, Not(HasSubstr("compatd_upgrade_blockers{")));
  EXPECT_THAT(scrape,
              Not(HasSubstr("compatd_clients_out_of_allowance_at_target{")));
}

}  // namespace
}  // namespace compatd::runtime
