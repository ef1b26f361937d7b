#include "runtime/service_metrics.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "metrics/text_format.h"
#include "prometheus/metric_family.h"
#include "tests/testing/status_matchers.h"

namespace compatd::runtime {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kService[] = "compatd.v1.CompatibilityPolicy";

ServiceMetrics::Options TestOptions() {
  ServiceMetrics::Options options;
  options.methods = {
      {kService, "CheckSkew", RpcType::kUnary},
      {kService, "WatchCatalog", RpcType::kServerStream},
      {"grpc.health.v1.Health", "Check", RpcType::kUnary},
      {"grpc.health.v1.Health", "Watch", RpcType::kServerStream}};
  options.version = "0.1.0";
  options.revision = "abc123";
  return options;
}

class ServiceMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(metrics_,
                         ServiceMetrics::Create(&registry_, TestOptions()));
  }
  std::string Scrape() const {
    return metrics::SerializeText(registry_.Collect());
  }

  metrics::Registry registry_;
  std::unique_ptr<ServiceMetrics> metrics_;
};

// grpc-go codes/code_string.go, as go-grpc-prometheus prints grpc_code.
TEST(GrpcCodeNameTest, MatchesGrpcGoSpelling) {
  const std::vector<std::pair<absl::StatusCode, const char*>> cases = {
      {absl::StatusCode::kOk, "OK"},
      {absl::StatusCode::kCancelled, "Canceled"},
      {absl::StatusCode::kUnknown, "Unknown"},
      {absl::StatusCode::kInvalidArgument, "InvalidArgument"},
      {absl::StatusCode::kDeadlineExceeded, "DeadlineExceeded"},
      {absl::StatusCode::kNotFound, "NotFound"},
      {absl::StatusCode::kAlreadyExists, "AlreadyExists"},
      {absl::StatusCode::kPermissionDenied, "PermissionDenied"},
      {absl::StatusCode::kResourceExhausted, "ResourceExhausted"},
      {absl::StatusCode::kFailedPrecondition, "FailedPrecondition"},
      {absl::StatusCode::kAborted, "Aborted"},
      {absl::StatusCode::kOutOfRange, "OutOfRange"},
      {absl::StatusCode::kUnimplemented, "Unimplemented"},
      {absl::StatusCode::kInternal, "Internal"},
      {absl::StatusCode::kUnavailable, "Unavailable"},
      {absl::StatusCode::kDataLoss, "DataLoss"},
      {absl::StatusCode::kUnauthenticated, "Unauthenticated"},
      {static_cast<absl::StatusCode>(99), "Unknown"},
  };
  for (const auto& [code, name] : cases) EXPECT_EQ(GrpcCodeName(code), name);
}

TEST_F(ServiceMetricsTest, PreCreatesEveryCodeForEveryMethod) {
  const std::string text = Scrape();
  EXPECT_THAT(
      text, HasSubstr("grpc_server_handled_total{grpc_type=\"unary\","
                      "grpc_service=\"compatd.v1.CompatibilityPolicy\","
                      "grpc_method=\"CheckSkew\",grpc_code=\"DataLoss\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("grpc_server_started_total{grpc_type=\"server_"
                              "stream\",grpc_service=\"grpc.health.v1.Health\","
                              "grpc_method=\"Watch\"} 0\n"));
  const std::vector<prometheus::MetricFamily> families = registry_.Collect();
  for (const prometheus::MetricFamily& family : families) {
    if (family.name == "grpc_server_handled_total") {
      // (4 methods + unknown) x 17 codes.
      EXPECT_EQ(family.metric.size(), 5u * 17u);
    }
  }
}

TEST_F(ServiceMetricsTest, RecordRequestCountsStartedHandledAndLatency) {
  metrics_->RecordRequest("CheckSkew", absl::StatusCode::kInvalidArgument,
                          absl::Microseconds(70));
  const std::string text = Scrape();
  const std::string labels =
      "grpc_type=\"unary\",grpc_service=\"compatd.v1.CompatibilityPolicy\","
      "grpc_method=\"CheckSkew\"";
  EXPECT_THAT(text, HasSubstr("grpc_server_started_total{" + labels + "} 1\n"));
  EXPECT_THAT(text, HasSubstr("grpc_server_handled_total{" + labels +
                              ",grpc_code=\"InvalidArgument\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("grpc_server_handled_total{" + labels +
                              ",grpc_code=\"OK\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("grpc_server_handling_seconds_bucket{" + labels +
                              ",le=\"5e-05\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("grpc_server_handling_seconds_bucket{" + labels +
                              ",le=\"0.0001\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("grpc_server_handling_seconds_count{" + labels +
                              "} 1\n"));
}

TEST_F(ServiceMetricsTest, MethodByServiceAndName) {
  metrics_->RecordRequest("grpc.health.v1.Health", "Check",
                          absl::StatusCode::kOk, absl::Microseconds(1));
  EXPECT_THAT(Scrape(),
              HasSubstr("grpc_server_handled_total{grpc_type=\"unary\","
                        "grpc_service=\"grpc.health.v1.Health\",grpc_method="
                        "\"Check\",grpc_code=\"OK\"} 1\n"));
  EXPECT_EQ(metrics_->Method("Check"),
            metrics_->Method("grpc.health.v1.Health", "Check"));
}

TEST_F(ServiceMetricsTest, UnregisteredMethodCountsAsUnknown) {
  metrics_->RecordRequest("NoSuchMethod", absl::StatusCode::kUnimplemented,
                          absl::Microseconds(1));
  EXPECT_THAT(Scrape(), HasSubstr("grpc_server_handled_total{grpc_type="
                                  "\"unary\",grpc_service=\"unknown\","
                                  "grpc_method=\"unknown\",grpc_code="
                                  "\"Unimplemented\"} 1\n"));
  EXPECT_THAT(Scrape(), Not(HasSubstr("NoSuchMethod")));
}

TEST_F(ServiceMetricsTest, ReloadResultsAndSuccessTimestamp) {
  metrics_->RecordReload(ReloadResult::kLoaded, absl::FromUnixSeconds(100));
  metrics_->RecordReload(ReloadResult::kUnchanged, absl::FromUnixSeconds(200));
  metrics_->RecordReload(ReloadResult::kRejected, absl::FromUnixSeconds(300));
  metrics_->RecordCatalogPublished(7, absl::FromUnixSeconds(150));
  const std::string text = Scrape();
  EXPECT_THAT(
      text, HasSubstr("compatd_catalog_reloads_total{result=\"loaded\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("compatd_catalog_reloads_total{result="
                              "\"unchanged\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("compatd_catalog_reloads_total{result="
                              "\"rejected\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("compatd_catalog_generation 7\n"));
  EXPECT_THAT(text, HasSubstr("compatd_catalog_last_reload_success_timestamp_"
                              "seconds 150\n"));
}

TEST_F(ServiceMetricsTest, RejectedReloadKeepsTheSuccessTimestamp) {
  metrics_->RecordReload(ReloadResult::kLoaded, absl::FromUnixSeconds(100));
  metrics_->RecordReload(ReloadResult::kRejected, absl::FromUnixSeconds(500));
  EXPECT_THAT(Scrape(), HasSubstr("compatd_catalog_last_reload_success_"
                                  "timestamp_seconds 100\n"));
}

TEST_F(ServiceMetricsTest, BuildInfoIsOne) {
  EXPECT_THAT(Scrape(), HasSubstr("compatd_build_info{version=\"0.1.0\","
                                  "revision=\"abc123\"} 1\n"));
}

TEST_F(ServiceMetricsTest, ClientRequestsByComponentVersionVerdict) {
  metrics_->RecordClient("kubelet", "1.31", engine::SkewVerdict::kAllowed);
  metrics_->RecordClient("kubelet", "1.31", engine::SkewVerdict::kAllowed);
  metrics_->RecordClient("kubectl", "1.20", engine::SkewVerdict::kTooOld);
  EXPECT_EQ(metrics_->ClientRequests("kubelet", "1.31",
                                     engine::SkewVerdict::kAllowed),
            metrics_->ClientRequests("kubelet", "1.31",
                                     engine::SkewVerdict::kAllowed));
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"kubelet\",version=\"1.31\",verdict="
                              "\"allowed\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("compatd_client_requests_total{component="
                              "\"kubectl\",version=\"1.20\",verdict="
                              "\"too_old\"} 1\n"));
}

TEST_F(ServiceMetricsTest, InvalidClientLabelsGoToTheFallbackSeries) {
  metrics_->RecordClient("\xff\xfe", "1.31", engine::SkewVerdict::kAllowed);
  EXPECT_THAT(Scrape(), HasSubstr("compatd_client_requests_total{component="
                                  "\"other\",version=\"other\",verdict="
                                  "\"unknown\"} 1\n"));
}

TEST(ServiceMetricsBoundTest, ClientSeriesAreBounded) {
  metrics::Registry registry;
  ServiceMetrics::Options options = TestOptions();
  options.max_client_label_sets = 16;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServiceMetrics> metrics,
                       ServiceMetrics::Create(&registry, options));
  for (int i = 0; i < 10000; ++i) {
    metrics->RecordClient("c" + std::to_string(i), "1." + std::to_string(i),
                          i % 4 == 3
                              ? std::nullopt
                              : std::optional<engine::SkewVerdict>(
                                    static_cast<engine::SkewVerdict>(i % 4)));
  }
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name == "compatd_client_requests_total") {
      EXPECT_EQ(family.metric.size(), 16u);
    }
  }
}

TEST_F(ServiceMetricsTest, OutOfAllowanceGaugeComesFromTheSource) {
  EXPECT_THAT(Scrape(), Not(HasSubstr("compatd_clients_out_of_allowance")));
  metrics_->SetClientsOutOfAllowanceSource([] {
    return std::vector<std::pair<std::string, int64_t>>{{"kubelet", 2},
                                                        {"kubectl", 0}};
  });
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("compatd_clients_out_of_allowance{component="
                              "\"kubectl\"} 0\n"
                              "compatd_clients_out_of_allowance{component="
                              "\"kubelet\"} 2\n"));
  metrics_->SetClientsOutOfAllowanceSource(nullptr);
  EXPECT_THAT(Scrape(), Not(HasSubstr("compatd_clients_out_of_allowance")));
}

TEST_F(ServiceMetricsTest, ScrapeAfterDestructionIsSafe) {
  metrics_->SetClientsOutOfAllowanceSource([] {
    return std::vector<std::pair<std::string, int64_t>>{{"kubelet", 1}};
  });
  metrics_.reset();
  EXPECT_THAT(Scrape(), Not(HasSubstr("compatd_clients_out_of_allowance")));
}

TEST_F(ServiceMetricsTest, CreatingTwiceOnOneRegistryFails) {
  EXPECT_THAT(ServiceMetrics::Create(&registry_, TestOptions()),
              StatusIs(absl::StatusCode::kAlreadyExists, _));
}

}  // namespace
}  // namespace compatd::runtime
