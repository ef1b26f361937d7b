// Upgrade planning through the real compatd binary: PlanVersionRemoval and
// LintCatalog over gRPC (also inside Evaluate, and on /metrics), and the
// offline `compatd lint` and `compatd eval` commands, on the shipped Cluster
// API example and the embedded Kubernetes 1.36 catalog.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::RunCompatd;
using testing::RunResult;
using namespace std::chrono_literals;

const std::string kClusterApi =
    std::string(COMPATD_SOURCE_DIR) + "/examples/cluster-api.yaml";
const std::string kViolations =
    std::string(COMPATD_TESTDATA_DIR) + "/lint/violations.yaml";
const std::string kBadCatalog =
    std::string(COMPATD_TESTDATA_DIR) + "/cli/bad.yaml";

class UpgradePlanningServerTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> extra_args) {
    const absl::Status started = server_.Start(extra_args);
    ASSERT_TRUE(started.ok()) << started;
    stub_ = v1::CompatibilityPolicy::NewStub(server_.NewChannel());
  }

  grpc::Status Plan(const v1::PlanVersionRemovalRequest& request,
                    v1::PlanVersionRemovalResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return stub_->PlanVersionRemoval(&context, request, response);
  }

  testing::CompatdProcess server_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
};

TEST_F(UpgradePlanningServerTest, PlansClusterApiV1beta1FromTheExampleCatalog) {
  StartServer({"--catalog=" + kClusterApi});
  v1::PlanVersionRemovalRequest request;
  request.set_crd("clusters.cluster.x-k8s.io");
  request.set_version("v1beta1");
  v1::PlanVersionRemovalResponse response;
  const grpc::Status status = Plan(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.crd(), "clusters.cluster.x-k8s.io");
  EXPECT_EQ(response.version(), "v1beta1");
  EXPECT_EQ(response.replacement(), "v1beta2");
  EXPECT_EQ(response.earliest_unserve_release(), "v1.14");
  EXPECT_EQ(response.earliest_removal_release(), "v1.18");
  std::vector<std::string> steps;
  for (const v1::RemovalStep& step : response.steps()) {
    steps.push_back(step.name() + "@" + step.release());
    EXPECT_FALSE(step.why().empty()) << step.name();
  }
  EXPECT_THAT(
      steps,
      ElementsAre("stop-serving@v1.14", "storage-version-migration@v1.11",
                  "managed-fields-cleanup@v1.14", "remove@v1.18"));
  EXPECT_THAT(response.violations(), IsEmpty());
  EXPECT_THAT(response.reason(), HasSubstr("the history follows the rules"));
  EXPECT_EQ(response.catalog_generation(), 1u);
}

TEST_F(UpgradePlanningServerTest, UnknownCrdIsNotFoundAndNamesTheKnownOnes) {
  StartServer({"--catalog=" + kClusterApi});
  v1::PlanVersionRemovalRequest request;
  request.set_crd("machines.cluster.x-k8s.io");
  request.set_version("v1beta1");
  v1::PlanVersionRemovalResponse response;
  const grpc::Status status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(),
              HasSubstr("crd \"machines.cluster.x-k8s.io\" is not in the "
                        "catalog's crds (known: clusters.cluster.x-k8s.io)"));
}

TEST_F(UpgradePlanningServerTest, UnknownVersionIsNotFound) {
  StartServer({"--catalog=" + kClusterApi});
  v1::PlanVersionRemovalRequest request;
  request.set_crd("clusters.cluster.x-k8s.io");
  request.set_version("v2");
  v1::PlanVersionRemovalResponse response;
  const grpc::Status status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("no version \"v2\""));
}

TEST_F(UpgradePlanningServerTest, InlineHistoryErrorsNameTheField) {
  StartServer({});
  v1::PlanVersionRemovalRequest request;
  request.set_version("v1beta1");
  v1::CRDVersionHistory* history = request.mutable_history();
  history->set_name("widgets.example.io");
  for (const char* release : {"v1.10", "v1.9"}) {
    v1::CRDReleaseVersions* r = history->add_releases();
    r->set_release(release);
    v1::CRDVersionState* v = r->add_versions();
    v->set_name("v1beta1");
    v->set_served(true);
    v->set_storage(true);
  }
  v1::PlanVersionRemovalResponse response;
  const grpc::Status status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("history.releases[1].release: v1.9 is not a later "
                        "minor release than v1.10"));
}

TEST_F(UpgradePlanningServerTest, MissingVersionIsInvalidArgument) {
  StartServer({"--catalog=" + kClusterApi});
  v1::PlanVersionRemovalRequest request;
  request.set_crd("clusters.cluster.x-k8s.io");
  v1::PlanVersionRemovalResponse response;
  const grpc::Status status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("version: required"));
}

TEST_F(UpgradePlanningServerTest, EvaluateAnswersPlanItemsEachWithItsStatus) {
  StartServer({"--catalog=" + kClusterApi});
  v1::EvaluateRequest request;
  for (const char* version : {"v1alpha4", "v9"}) {
    v1::PlanVersionRemovalRequest* item =
        request.add_items()->mutable_plan_version_removal();
    item->set_crd("clusters.cluster.x-k8s.io");
    item->set_version(version);
  }
  v1::EvaluateResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  const grpc::Status status = stub_->Evaluate(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.results_size(), 2);
  ASSERT_TRUE(response.results(0).has_plan_version_removal());
  EXPECT_EQ(
      response.results(0).plan_version_removal().earliest_removal_release(),
      "v1.13");
  ASSERT_TRUE(response.results(1).has_error());
  EXPECT_EQ(response.results(1).error().code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(UpgradePlanningServerTest, LintCatalogOnTheEmbeddedCatalog) {
  StartServer({});
  v1::LintCatalogResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  const grpc::Status status =
      stub_->LintCatalog(&context, v1::LintCatalogRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // Every line is linted. The older lines' warnings are their releases' own
  // facts (kube_features.go at each tag): ExecProbeTimeout GA and unlocked in
  // 1.31-1.34, TopologyManagerPolicyOptions GA since 1.32 and unlocked in
  // 1.35. The 1.36 and 1.37 lines have only their documented exception
  // (AllowServiceExternalIPs, GA since 1.0 and unlocked, KEP-5707: in
  // kube_features.go of 1.36 and at ae5d4d35, the 1.37 code freeze).
  EXPECT_EQ(response.errors(), 0u);
  EXPECT_EQ(response.warnings(), 5u);
  EXPECT_EQ(response.exceptions(), 2u);
  ASSERT_EQ(response.findings_size(), 7);
  int exec_probe_timeout = 0;
  for (const v1::LintFinding& finding : response.findings()) {
    if (finding.subject() == "feature ExecProbeTimeout") ++exec_probe_timeout;
  }
  EXPECT_EQ(exec_probe_timeout, 4);
  const v1::LintFinding& f = response.findings(5);
  EXPECT_EQ(f.rule(), "ga-feature-not-locked");
  EXPECT_EQ(f.subject(), "feature AllowServiceExternalIPs");
  EXPECT_EQ(f.severity(), v1::LINT_SEVERITY_WARNING);
  EXPECT_THAT(f.exception(), HasSubstr("KEP-5707"));
  EXPECT_GT(f.line(), 0);
  EXPECT_THAT(response.reason(), HasSubstr("embedded:kubernetes-1.36"));
}

TEST_F(UpgradePlanningServerTest, LintCatalogReportsViolationsAndIsMetered) {
  StartServer({"--catalog=" + kViolations});
  v1::LintCatalogResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  const grpc::Status status =
      stub_->LintCatalog(&context, v1::LintCatalogRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.errors(), 2u);
  EXPECT_EQ(response.warnings(), 1u);
  ASSERT_EQ(response.findings_size(), 3);
  EXPECT_EQ(response.findings(0).rule(), "beta-removed-too-soon");
  EXPECT_EQ(response.findings(1).rule(), "ga-version-removed");
  EXPECT_EQ(response.findings(2).rule(), "ga-feature-not-locked");
  // The method has its own series, like every RPC of the service.
  absl::StatusOr<std::string> metrics = server_.Scrape();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(absl::StrContains(
      *metrics,
      "grpc_server_started_total{grpc_type=\"unary\",grpc_service=\"compatd."
      "v1.CompatibilityPolicy\",grpc_method=\"LintCatalog\"} 1"));
}

TEST(UpgradePlanningCliTest, LintOfTheEmbeddedCatalogPassesWithItsException) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"lint"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::ContainsRegex(
                         "embedded:kubernetes-1\\.36:[0-9]+: exception: "
                         "ga-feature-not-locked: feature "
                         "AllowServiceExternalIPs \\(1\\.0\\): "));
  EXPECT_THAT(r.out, HasSubstr("[documented exception: KEP-5707"));
  EXPECT_THAT(r.out, ::testing::Not(::testing::ContainsRegex(
                         "embedded:kubernetes-1\\.3[67]:[0-9]+: warning")));
  EXPECT_THAT(r.out, HasSubstr("embedded:kubernetes-1.37: 0 error(s), 5 "
                               "warning(s), 2 documented exception(s)"));
}

TEST(UpgradePlanningCliTest, LintWithErrorsExitsOne) {
  const RunResult r =
      RunCompatd(COMPATD_BINARY, {"lint", "--catalog=" + kViolations});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr(kViolations +
                               ":14: error: ga-version-removed: example.io/v1 "
                               "widgets (1.30): "));
  EXPECT_THAT(r.out, HasSubstr(kViolations +
                               ":9: warning: ga-feature-not-locked: feature "
                               "OldUnlockedGate (1.30): "));
  EXPECT_THAT(r.out, HasSubstr("2 error(s), 1 warning(s), 0 documented "
                               "exception(s)"));
}

TEST(UpgradePlanningCliTest, LintOfTheClusterApiExampleIsClean) {
  const RunResult r =
      RunCompatd(COMPATD_BINARY, {"lint", "--catalog=" + kClusterApi});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("0 error(s), 0 warning(s)"));
}

TEST(UpgradePlanningCliTest, LintOfACatalogThatDoesNotLoadExitsOne) {
  const RunResult r =
      RunCompatd(COMPATD_BINARY, {"lint", "--catalog=" + kBadCatalog});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(kBadCatalog + ":"));
  EXPECT_THAT(r.out, Not(HasSubstr("error(s)")));
}

TEST(UpgradePlanningCliTest, LintUsageErrorsExitTwo) {
  EXPECT_EQ(RunCompatd(COMPATD_BINARY, {"lint", "extra"}).exit_code, 2);
  const RunResult r = RunCompatd(COMPATD_BINARY, {"lint", "--rpc=GetFeature"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("compatd lint: --rpc is a flag of compatd eval, "
                               "not of compatd lint"));
}

TEST(UpgradePlanningCliTest, ClusterApiExampleIsAValidCatalog) {
  const RunResult r =
      RunCompatd(COMPATD_BINARY, {"--check-catalog=" + kClusterApi});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 CRDs"));
}

TEST(UpgradePlanningCliTest, EvalPlansFromTheExampleAndLints) {
  RunResult r = RunCompatd(
      COMPATD_BINARY,
      {"eval", "--catalog=" + kClusterApi, "--rpc=PlanVersionRemoval",
       "--request={\"crd\":\"clusters.cluster.x-k8s.io\",\"version\":"
       "\"v1alpha3\"}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"earliestRemovalRelease\": \"v1.13\""));
  r = RunCompatd(COMPATD_BINARY, {"eval", "--rpc=LintCatalog"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"exceptions\": 2"));
  EXPECT_THAT(r.out, HasSubstr("\"rule\": \"ga-feature-not-locked\""));
}

}  // namespace
}  // namespace compatd
