// runtime::ApiUsageTracker: rows per client and API at risk, their counts
// and times, the TTL, the bound (one "other" row past it), the metric's
// labels, and the re-judging of rows by the catalog they are listed with.

#include "runtime/api_usage.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "catalog/catalog_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "metrics/text_format.h"
#include "runtime/catalog_pipeline.h"

namespace compatd::runtime {
namespace {

runtime::ServiceMetrics::Options MetricOptions() {
  runtime::ServiceMetrics::Options options;
  options.version = "test";
  options.revision = "test";
  return options;
}

using ::testing::HasSubstr;

std::string Catalog() {
  std::ifstream in(
      absl::StrCat(COMPATD_TESTDATA_DIR, "/catalogs/good/audit_cluster.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ApiUsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Publish(Catalog());
    auto created = ServiceMetrics::Create(&registry_, MetricOptions());
    ASSERT_TRUE(created.ok()) << created.status();
    metrics_ = *std::move(created);
    ApiUsageTracker::Options options;
    options.max_rows = 3;
    options.idle_ttl = absl::Minutes(10);
    options.clock = [this] { return now_; };
    usage_ = std::make_unique<ApiUsageTracker>(metrics_.get(), options);
  }

  void Publish(const std::string& yaml) {
    auto catalog = catalog::ParseCatalog(yaml, "audit_cluster.yaml");
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    pipeline_.Publish(*std::move(catalog),
                      /*initial=*/pipeline_.Current() == nullptr);
  }

  // One call to group/version/resource by `component`, judged by the index.
  void Call(absl::string_view component, absl::string_view group,
            absl::string_view version, absl::string_view resource,
            bool denied = false) {
    const auto index = usage_->Index(*pipeline_.Current());
    const engine::ApiUseJudgement* judgement =
        index->Find(group, version, resource);
    ASSERT_NE(judgement, nullptr) << group << "/" << version << "/" << resource;
    const std::string user_agent = absl::StrCat(component, "/v1.28.2");
    ApiCall call;
    call.component = component;
    call.client_version = "1.28";
    call.user = "system:serviceaccount:kube-system:x";
    call.user_agent = user_agent;
    call.group = group;
    call.version = version;
    call.resource = resource;
    call.denied = denied;
    usage_->Record(call, *judgement);
  }

  std::string Metrics() { return metrics::SerializeText(registry_.Collect()); }

  absl::Time now_ = absl::FromUnixSeconds(1800000000);
  CatalogPipeline pipeline_{CatalogPipeline::Options()};
  metrics::Registry registry_;
  std::unique_ptr<ServiceMetrics> metrics_;
  std::unique_ptr<ApiUsageTracker> usage_;
};

TEST_F(ApiUsageTest, CountsPerClientAndApi) {
  Call("cluster-autoscaler", "policy", "v1beta1", "poddisruptionbudgets");
  now_ += absl::Seconds(30);
  Call("cluster-autoscaler", "policy", "v1beta1", "poddisruptionbudgets",
       /*denied=*/true);
  Call("kube-proxy", "networking.k8s.io", "v1beta1", "ipaddresses");
  const auto rows = usage_->List(*pipeline_.Current());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].component, "cluster-autoscaler");
  EXPECT_EQ(rows[0].requests, 2u);
  EXPECT_EQ(rows[0].denied, 1u);
  EXPECT_EQ(rows[0].first_seen, absl::FromUnixSeconds(1800000000));
  EXPECT_EQ(rows[0].last_seen, absl::FromUnixSeconds(1800000030));
  EXPECT_EQ(rows[0].judgement.verdict, engine::ApiUseVerdict::kNotServed);
  EXPECT_EQ(rows[1].judgement.verdict, engine::ApiUseVerdict::kDeprecated);
  EXPECT_EQ(usage_->List(*pipeline_.Current(), "kube-proxy").size(), 1u);
  EXPECT_THAT(
      Metrics(),
      HasSubstr("compatd_api_requests_at_risk_total{component=\"kube-"
                "proxy\",group_version=\"networking.k8s.io/v1beta1\","
                "resource=\"ipaddresses\",verdict=\"deprecated\"} 1\n"));
}

TEST_F(ApiUsageTest, IdleRowsExpire) {
  Call("cluster-autoscaler", "policy", "v1beta1", "poddisruptionbudgets");
  now_ += absl::Minutes(11);
  EXPECT_TRUE(usage_->List(*pipeline_.Current()).empty());
  EXPECT_EQ(usage_->Sweep(), 1u);
  EXPECT_EQ(usage_->size(), 0u);
}

TEST_F(ApiUsageTest, PastTheBoundCallsGoToOneOtherRow) {
  for (int i = 0; i < 10; ++i) {
    Call(absl::StrCat("operator-", i), "policy", "v1beta1",
         "poddisruptionbudgets");
  }
  EXPECT_EQ(usage_->size(), 3u);
  const auto rows = usage_->List(*pipeline_.Current());
  ASSERT_EQ(rows.size(), 4u);
  uint64_t other = 0;
  for (const auto& row : rows) {
    if (row.component == "other") other = row.requests;
  }
  EXPECT_EQ(other, 7u);
}

TEST_F(ApiUsageTest, RowsAreJudgedByTheCatalogListedWith) {
  Call("kube-proxy", "networking.k8s.io", "v1beta1", "ipaddresses");
  // A catalog in which networking.k8s.io/v1beta1 IPAddress is no longer
  // deprecated: the row is not at risk there, and is not listed.
  Publish(absl::StrReplaceAll(
      Catalog(), {{R"(introduced: "1.31", deprecated: "1.34", removed: "1.37")",
                   R"(introduced: "1.31")"}}));
  EXPECT_TRUE(usage_->List(*pipeline_.Current()).empty());
}

}  // namespace
}  // namespace compatd::runtime
