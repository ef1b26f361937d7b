// The last Cluster API hook verdict per cluster (runtime/capi_verdicts.h) and
// compatd_capi_hook_calls_total (runtime/service_metrics.h).

#include "runtime/capi_verdicts.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "metrics/text_format.h"
#include "runtime/service_metrics.h"
#include "tests/testing/status_matchers.h"

namespace compatd::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CapiVerdict At(const std::string& cluster, const std::string& hook,
               int seconds) {
  CapiVerdict v;
  v.cluster = cluster;
  v.hook = hook;
  v.status = "Success";
  v.at = absl::UnixEpoch() + absl::Seconds(seconds);
  return v;
}

TEST(CapiVerdictsTest, KeepsTheLastVerdictPerClusterLatestFirst) {
  CapiVerdicts verdicts;
  verdicts.Record(At("fleet/a", "BeforeClusterUpgrade", 1));
  verdicts.Record(At("fleet/b", "GenerateUpgradePlan", 2));
  verdicts.Record(At("fleet/a", "AfterClusterUpgrade", 3));
  const std::vector<CapiVerdict> list = verdicts.List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].cluster, "fleet/a");
  EXPECT_EQ(list[0].hook, "AfterClusterUpgrade");
  EXPECT_EQ(list[1].cluster, "fleet/b");
}

TEST(CapiVerdictsTest, DropsTheOldestClusterPastTheBound) {
  CapiVerdicts verdicts(2);
  verdicts.Record(At("fleet/a", "GenerateUpgradePlan", 1));
  verdicts.Record(At("fleet/b", "GenerateUpgradePlan", 2));
  verdicts.Record(At("fleet/c", "GenerateUpgradePlan", 3));
  const std::vector<CapiVerdict> list = verdicts.List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].cluster, "fleet/c");
  EXPECT_EQ(list[1].cluster, "fleet/b");
}

TEST(CapiHookMetricsTest, EveryPairIsPreCreatedAndCounted) {
  metrics::Registry registry;
  ServiceMetrics::Options options;
  options.methods = {
      {"compatd.v1.CompatibilityPolicy", "CheckSkew", RpcType::kUnary}};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServiceMetrics> metrics,
                       ServiceMetrics::Create(&registry, options));
  metrics->RecordCapiHook("BeforeControlPlaneUpgrade", "blocked");
  metrics->RecordCapiHook("BeforeControlPlaneUpgrade", "blocked");
  metrics->RecordCapiHook("NoSuchHook", "success");
  metrics->RecordCapiHook("Discovery", "maybe");
  const std::string text = metrics::SerializeText(registry.Collect());
  EXPECT_THAT(text,
              HasSubstr("compatd_capi_hook_calls_total{hook=\""
                        "BeforeControlPlaneUpgrade\",verdict=\"blocked\"} "
                        "2\n"));
  EXPECT_THAT(text,
              HasSubstr("compatd_capi_hook_calls_total{hook=\""
                        "AfterClusterUpgrade\",verdict=\"invalid\"} 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("NoSuchHook")));
  EXPECT_THAT(text, Not(HasSubstr("maybe")));
}

}  // namespace
}  // namespace compatd::runtime
