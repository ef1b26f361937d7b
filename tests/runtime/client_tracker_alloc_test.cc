// The hot path of client tracking — a known client calling again — does not
// allocate: identifying the caller from its User-Agent, and Record(). Counts
// every operator new of this test binary while a flag is on.

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
#include "tests/testing/status_matchers.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<int> allocations{0};
}  // namespace

// Replacement operators pair malloc with free by design; GCC cannot tell.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

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

  allocations = 0;
  counting = true;
  for (int i = 0; i < 1000; ++i) {
    const engine::ClientIdentity client =
        engine::IdentifyClient("", "", user_agent);
    tracker.Record(catalog, client);
    metrics->RecordRequest("CheckSkew", absl::StatusCode::kOk,
                           absl::Microseconds(40));
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_EQ(tracker.List(catalog)[0].requests, 1001u);
}

TEST(ClientTrackerAllocTest, TheCounterActuallyCounts) {
  // Guards the test above: an allocation is seen.
  allocations = 0;
  counting = true;
  auto p = std::make_unique<std::string>(100, 'x');
  counting = false;
  EXPECT_GE(allocations.load(), 1);
}

}  // namespace
}  // namespace compatd::runtime
