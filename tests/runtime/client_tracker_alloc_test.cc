// The hot path of client tracking — a known client calling again — does not
// allocate: identifying the caller from its User-Agent, and Record(). Counts
// every operator new of this test binary (tests/testing/count_allocations.h).

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

#include "engine/catalog.h"
#include "engine/user_agent.h"
#include "engine/version.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"
#include "tests/testing/count_allocations.h"
#include "tests/testing/status_matchers.h"

namespace compatd::runtime {
namespace {

TEST(ClientTrackerAllocTest, KnownClientCallingAgainDoesNotAllocate) {
  metrics::Registry registry;
  runtime::ServiceMetrics::Options options;
  options.methods = {{"compatd.v1.CompatibilityPolicy", "CheckSkew",
                      runtime::RpcType::kUnary}};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<runtime::ServiceMetrics> metrics,
                       runtime::ServiceMetrics::Create(&registry, options));
  auto catalog_data = std::make_shared<engine::Catalog>();
  catalog_data->binary_version = *engine::Version::Parse("1.36");
  const ServingSnapshot catalog = *SingleLineSnapshot(catalog_data, 1);
  ClientTracker tracker(nullptr, metrics.get(), {});
  const std::string user_agent =
      "kube-controller-manager/v1.36.3 (linux/amd64) "
      "kubernetes/0123abc/leader-election grpc-c++/1.51.1 grpc-c/29.0.0 "
      "(linux; chttp2)";
  tracker.Record(catalog, engine::IdentifyClient("", "", user_agent));

  const long before = ::compatd::testing::Allocations();
  for (int i = 0; i < 1000; ++i) {
    const engine::ClientIdentity client =
        engine::IdentifyClient("", "", user_agent);
    tracker.Record(catalog, client);
    metrics->RecordRequest("CheckSkew", absl::StatusCode::kOk,
                           absl::Microseconds(40));
  }
  EXPECT_EQ(::compatd::testing::Allocations() - before, 0);
  EXPECT_EQ(tracker.List(catalog)[0].requests, 1001u);
}

TEST(ClientTrackerAllocTest, TheCounterActuallyCounts) {
  // Guards the test above: an allocation is seen.
  const long before = ::compatd::testing::Allocations();
  auto p = std::make_unique<std::string>(100, 'x');
  EXPECT_GE(::compatd::testing::Allocations() - before, 1);
}

}  // namespace
}  // namespace compatd::runtime
