// PlanUpgrade through the real compatd binary: over gRPC (with the clients
// the server recorded, and inside Evaluate) and `compatd plan` offline (text
// and -o json, --from-json, usage errors).

#include <pty.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunCompatd;
using testing::RunResult;
using namespace std::chrono_literals;

class PlanUpgradeServerTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }

  void Start(std::vector<std::string> extra) {
    const absl::Status started = server_.Start(extra);
    ASSERT_TRUE(started.ok()) << started;
    stub_ = v1::CompatibilityPolicy::NewStub(server_.NewChannel());
  }

  grpc::Status Plan(const v1::PlanUpgradeRequest& request,
                    v1::PlanUpgradeResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return stub_->PlanUpgrade(&context, request, response);
  }

  std::string Scrape() {
    absl::StatusOr<std::string> scrape = server_.Scrape();
    EXPECT_TRUE(scrape.ok()) << scrape.status();
    return scrape.ok() ? *scrape : "";
  }

  testing::CompatdProcess server_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
};

std::vector<std::string> Subjects(
    const google::protobuf::RepeatedPtrField<v1::UpgradeItem>& items) {
  std::vector<std::string> out;
  for (const v1::UpgradeItem& item : items) {
    out.push_back(item.subject() + "@" + std::to_string(item.step()));
  }
  return out;
}

TEST_F(PlanUpgradeServerTest, PlansFrom133To136WithTheRecordedClients) {
  // A kubelet 1.31 calls: the server records it.
  {
    grpc::ClientContext context;
    context.AddMetadata("x-kubernetes-component", "kubelet");
    context.AddMetadata("x-kubernetes-version", "v1.31.4");
    v1::ResolveVersionsResponse response;
    ASSERT_TRUE(stub_->ResolveVersions(&context, {}, &response).ok());
  }
  v1::PlanUpgradeRequest request;
  request.mutable_from()->set_emulation_version("1.33");
  request.mutable_to()->set_emulation_version("1.36");
  v1::PlanClient* client = request.add_clients();
  client->set_component("kubectl");
  client->set_version("1.33");
  v1::PlanUpgradeResponse response;
  const grpc::Status status = Plan(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.from().emulation_version(), "1.33");
  EXPECT_EQ(response.to().emulation_version(), "1.36");
  EXPECT_EQ(response.to().min_compatibility_version(), "1.35");
  EXPECT_EQ(response.versions().emulation_version(), "1.36");
  ASSERT_EQ(response.steps_size(), 6);
  EXPECT_EQ(response.steps(0).name(), "binaries");
  EXPECT_EQ(response.steps(5).name(), "min-compatibility 1.35");
  EXPECT_EQ(response.steps(5).rollback_to(), "1.35");
  EXPECT_EQ(response.rollback_size(), 6);
  EXPECT_GT(response.feature_gates_size(), 100);
  EXPECT_THAT(Subjects(response.storage()),
              Contains("deviceclasses.resource.k8s.io@5"));
  // kubelet 1.31 (recorded) leaves min-compatibility - 2 at 1.34 (step 5);
  // kubectl 1.33 (the request's) leaves [min-compatibility, emulation + 1]
  // at min-compatibility 1.34 too.
  EXPECT_THAT(Subjects(response.clients()),
              AllOf(Contains("kubelet 1.31 (recorded)@5"),
                    Contains("kubectl 1.33 (clients[0])@5")));
  EXPECT_EQ(response.blockers(), 2u);
  EXPECT_THAT(response.clients_checked(),
              HasSubstr("1 recorded by this replica (ListClients), 1 from the "
                        "request"));
  // Each step lists the items that happen at it.
  int in_steps = 0;
  for (const v1::UpgradeStep& step : response.steps()) {
    for (const v1::UpgradeItem& item : step.items()) {
      EXPECT_EQ(item.step(), step.number());
      ++in_steps;
    }
  }
  EXPECT_EQ(in_steps, response.flags_size() + response.feature_gates_size() +
                          response.apis_size() + response.storage_size() +
                          response.rollback_size() + response.clients_size() +
                          response.cel_size());
  EXPECT_EQ(response.catalog_generation(), 1u);
}

// Across binaries, each answered from its embedded line: kube-apiserver 1.32
// with --feature-gates=AppArmor=true does not start on 1.33, which no longer
// registers the gate (kubernetes v1.32.5 pkg/features: AppArmor GA 1.31,
// locked, "remove in 1.33"; component-base unsafeSetFromMap: "unrecognized
// feature gate: AppArmor").
TEST_F(PlanUpgradeServerTest, AppArmorOn132BlocksTheHopTo133) {
  v1::PlanUpgradeRequest request;
  request.mutable_from()->set_binary_version("1.32");
  request.mutable_from()->set_feature_gates("AppArmor=true");
  request.mutable_to()->set_binary_version("1.33");
  v1::PlanUpgradeResponse response;
  const grpc::Status status = Plan(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.path().name(), "one minor at a time");
  EXPECT_TRUE(response.path().supported());
  ASSERT_GE(response.steps_size(), 2);
  EXPECT_EQ(response.steps(0).name(), "binaries 1.33");
  EXPECT_EQ(response.steps(0).versions().emulation_version(), "1.32");
  EXPECT_THAT(response.steps(0).catalog(),
              HasSubstr("embedded:kubernetes-1.33"));
  ASSERT_GE(response.flags_size(), 1);
  EXPECT_EQ(response.flags(0).subject(),
            "--feature-gates AppArmor=true (from.feature_gates)");
  EXPECT_EQ(response.flags(0).rule(), "feature-gate-unknown");
  EXPECT_TRUE(response.flags(0).blocking());
  EXPECT_EQ(response.flags(0).step(), 1u);
  EXPECT_THAT(response.flags(0).reason(),
              HasSubstr("unrecognized feature gate: AppArmor"));
}

// 1.33 to 1.36: one binary minor at a time (Kubernetes' version skew policy),
// so hops on the 1.34 and 1.35 binaries; the skip-level path through
// --emulated-version (1.36 emulates back to 1.33) is labelled unsupported.
TEST_F(PlanUpgradeServerTest, From133To136HopsOnThe134And135Binaries) {
  v1::PlanUpgradeRequest request;
  request.mutable_from()->set_binary_version("1.33");
  request.mutable_to()->set_binary_version("1.36");
  v1::PlanUpgradeResponse response;
  const grpc::Status status = Plan(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<std::string> hops;
  for (const v1::UpgradeStep& step : response.steps()) {
    if (absl::StartsWith(step.name(), "binaries ")) {
      hops.push_back(step.name() + " on " +
                     step.versions().binary_version().substr(0, 4));
    }
  }
  EXPECT_THAT(hops, ::testing::ElementsAre("binaries 1.34 on 1.34",
                                           "binaries 1.35 on 1.35",
                                           "binaries 1.36 on 1.36"));
  ASSERT_EQ(response.alternatives_size(), 1);
  EXPECT_EQ(response.alternatives(0).name(),
            "skip-level through --emulated-version");
  EXPECT_FALSE(response.alternatives(0).supported());
  ASSERT_GE(response.alternatives(0).steps_size(), 1);
  EXPECT_EQ(response.alternatives(0).steps(0).name(), "binaries 1.36");
  EXPECT_EQ(response.alternatives(0).steps(0).versions().emulation_version(),
            "1.33");
}

TEST_F(PlanUpgradeServerTest, BinariesWithoutALineOrBackwardsAreRefused) {
  v1::PlanUpgradeRequest request;
  request.mutable_from()->set_binary_version("1.33");
  request.mutable_to()->set_binary_version("1.38");
  v1::PlanUpgradeResponse response;
  grpc::Status status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              AllOf(HasSubstr("to.binary_version \"1.38\""),
                    HasSubstr("1.31, 1.32, 1.33, 1.34, 1.35, 1.36")));
  request.mutable_from()->set_binary_version("1.35");
  request.mutable_to()->set_binary_version("1.34");
  status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("to.binary_version \"1.34\" is older than from's "
                        "binary 1.35"));
}

TEST_F(PlanUpgradeServerTest, ErrorsNameTheEnd) {
  v1::PlanUpgradeRequest request;
  request.mutable_from()->set_binary_version("1.30");
  v1::PlanUpgradeResponse response;
  grpc::Status status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              AllOf(HasSubstr("from.binary_version \"1.30\": no catalog "
                              "describes kube-apiserver 1.30"),
                    HasSubstr("1.31, 1.32, 1.33, 1.34, 1.35, 1.36")));
  request.Clear();
  request.mutable_to()->set_feature_gates(std::string(5000, 'A'));
  status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("to.feature_gates"));
  request.Clear();
  request.add_clients()->set_component("kubelet");
  status = Plan(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("clients[0].version"));
}

TEST_F(PlanUpgradeServerTest, EvaluateAnswersAPlanItem) {
  v1::EvaluateRequest request;
  request.mutable_versions()->set_feature_gates("APIServerTracing=false");
  v1::PlanUpgradeRequest* plan = request.add_items()->mutable_plan_upgrade();
  plan->mutable_from()->set_emulation_version("1.33");
  request.add_items()
      ->mutable_plan_upgrade()
      ->mutable_from()
      ->set_emulation_version("1.29");
  grpc::ClientContext context;
  v1::EvaluateResponse response;
  ASSERT_TRUE(stub_->Evaluate(&context, request, &response).ok());
  ASSERT_EQ(response.results_size(), 2);
  ASSERT_TRUE(response.results(0).has_plan_upgrade())
      << response.results(0).error().message();
  // The batch's feature gates are both ends' flags: locked at the target.
  const v1::PlanUpgradeResponse& answer = response.results(0).plan_upgrade();
  ASSERT_EQ(answer.flags_size(), 1);
  EXPECT_EQ(answer.flags(0).rule(), "feature-gate-locked");
  EXPECT_TRUE(answer.flags(0).blocking());
  ASSERT_TRUE(response.results(1).has_error());
  EXPECT_EQ(response.results(1).error().code(), 3);
  EXPECT_THAT(response.results(1).error().message(),
              HasSubstr("from.emulation_version \"1.29\""));
}

// A catalog with cluster.upgradeTarget: its blockers on /metrics, a kubelet
// out of allowance at the target, and the target in GetCatalog.
class UpgradeTargetServerTest : public PlanUpgradeServerTest {
 protected:
  void SetUp() override {
    Start({"--catalog=" + std::string(COMPATD_TESTDATA_DIR) +
           "/catalogs/good/upgrade_target.yaml"});
  }
};

TEST_F(UpgradeTargetServerTest, MetricsExportWhatBlocksTheTarget) {
  {
    grpc::ClientContext context;
    context.AddMetadata("x-kubernetes-component", "kubelet");
    context.AddMetadata("x-kubernetes-version", "v1.31.4");
    v1::GetCatalogResponse response;
    ASSERT_TRUE(stub_->GetCatalog(&context, {}, &response).ok());
    EXPECT_EQ(response.upgrade_target().emulation_version(), "1.36");
    EXPECT_EQ(response.upgrade_target().min_compatibility_version(), "1.35");
  }
  const std::string scrape = Scrape();
  // TracingGate=false is refused once the gate locks (1.35); widgets v1beta1
  // stops being served at 1.35; kubelet 1.31 is below 1.33 at the target.
  EXPECT_THAT(scrape, HasSubstr("compatd_upgrade_blockers{kind=\"flags\"} 1"));
  EXPECT_THAT(scrape, HasSubstr("compatd_upgrade_blockers{kind=\"apis\"} 1"));
  EXPECT_THAT(scrape,
              HasSubstr("compatd_upgrade_blockers{kind=\"clients\"} 1"));
  EXPECT_THAT(scrape, HasSubstr("compatd_clients_out_of_allowance_at_target{"
                                "component=\"kubelet\"} 1"));
  // Allowed now (emulation 1.33: kubelet 1.31 to 1.33).
  EXPECT_THAT(scrape, HasSubstr("compatd_clients_out_of_allowance{component="
                                "\"kubelet\"} 0"));
  // The plan to the target, from the cluster section (an empty from).
  v1::PlanUpgradeRequest request;
  request.mutable_to()->set_emulation_version("1.36");
  request.mutable_to()->set_min_compatibility_version("1.35");
  v1::PlanUpgradeResponse plan;
  ASSERT_TRUE(Plan(request, &plan).ok());
  EXPECT_EQ(plan.blockers(), 3u);
}

TEST(PlanCommandTest, AllPrintsEveryItemSayingNoClientsAreRecorded) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"plan", R"(--from-json={"emulationVersion":"1.33"})",
                       "--clients=kubelet=1.31", "--all"});
  // kubelet 1.31 is a blocker (below).
  ASSERT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("Upgrade plan on kube-apiserver 1.36 "
                              "(embedded:kubernetes-1.36): emulation 1.33 -> "
                              "1.36, min-compatibility 1.33 -> 1.35"),
                    HasSubstr("Step 1: binaries (emulation 1.33, "
                              "min-compatibility 1.33; rollback to 1.33 after "
                              "it)"),
                    HasSubstr("Step 6: min-compatibility 1.35"),
                    HasSubstr("[storage] deviceclasses.resource.k8s.io "
                              "(storage-version-changes)"),
                    HasSubstr("[clients] BLOCKING kubelet 1.31 (clients[0]) "
                              "(client-too-old)"),
                    HasSubstr("this process records no clients (offline "
                              "evaluation)"),
                    HasSubstr("1 blocking item(s)")));
}

TEST(PlanCommandTest, JsonOutputIsThePlanUpgradeResponse) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY,
      {"plan",
       R"(--from-json={"emulationVersion":"1.33","featureGates":"APIServerTracing=false"})",
       "-o", "json"});
  // APIServerTracing is GA and locked to true from 1.34 (apiserver v0.34.0
  // pkg/features/kube_features.go: {Version: 1.34, Default: true,
  // PreRelease: GA, LockToDefault: true}); component-base refuses to set a
  // locked gate to another value, so the flag blocks: exit 3, -o json too.
  ASSERT_EQ(r.exit_code, 3) << r.err;
  v1::PlanUpgradeResponse response;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(r.out, &response).ok())
      << r.out;
  EXPECT_EQ(response.from().emulation_version(), "1.33");
  EXPECT_EQ(response.to().emulation_version(), "1.36");  // the binary's
  ASSERT_GE(response.flags_size(), 1);
  EXPECT_EQ(response.flags(0).subject(),
            "--feature-gates APIServerTracing=false (from.feature_gates)");
  EXPECT_TRUE(response.flags(0).blocking());
  // Same answer as eval.
  const RunResult eval = RunCompatd(
      COMPATD_BINARY,
      {"eval", "--rpc=PlanUpgrade",
       R"(--request={"from":{"emulationVersion":"1.33","featureGates":"APIServerTracing=false"}})"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;  // eval prints; it does not judge
  v1::PlanUpgradeResponse from_eval;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(eval.out, &from_eval).ok());
  EXPECT_EQ(from_eval.SerializeAsString(), response.SerializeAsString());
}

// Usage errors exit 1, as scan's do: plan's 2 means "actions".
TEST(PlanCommandTest, BadUsageAndBadPlans) {
  RunResult r =
      RunCompatd(COMPATD_BINARY, {"plan", "--from=1.33", "--from-json={}"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("give --from or --from-json, not both"));
  r = RunCompatd(COMPATD_BINARY, {"plan", "--to-json={\"emulation\":1}"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--to-json is not a valid "
                               "compatd.v1.VersionContext"));
  r = RunCompatd(COMPATD_BINARY, {"plan", "-o", "yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              HasSubstr("expected text (the default), json or migrations"));
  r = RunCompatd(COMPATD_BINARY, {"plan", "--all", "-o", "json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--all is for the text output"));
  r = RunCompatd(COMPATD_BINARY, {"plan", "--clients=kubelet"});
  EXPECT_EQ(r.exit_code, 1);
  r = RunCompatd(COMPATD_BINARY, {"plan", "1.36"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unexpected argument \"1.36\""));
  r = RunCompatd(COMPATD_BINARY, {"--from=1.33"});
  EXPECT_EQ(r.exit_code, 2);  // the server's usage error
  EXPECT_THAT(r.err, HasSubstr("--from is a flag of compatd plan, not of the "
                               "server"));
  r = RunCompatd(COMPATD_BINARY,
                 {"plan", R"(--from-json={"emulationVersion":"1.36"})",
                  R"(--to-json={"emulationVersion":"1.35"})"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("ERROR: INVALID_ARGUMENT: to.emulation_version "
                               "1.35 is older than from's 1.36"));
  EXPECT_THAT(r.out, Not(HasSubstr("Step")));
  // Bare versions are binaries: backwards, unknown, malformed.
  r = RunCompatd(COMPATD_BINARY, {"plan", "--from=1.36", "--to=1.35"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("ERROR: INVALID_ARGUMENT: to.binary_version "
                               "\"1.35\" is older than from's binary 1.36"));
  r = RunCompatd(COMPATD_BINARY, {"plan", "--from=1.30", "--to=1.33"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("from.binary_version \"1.30\": no catalog "
                                     "describes kube-apiserver 1.30"),
                           HasSubstr("1.31, 1.32, 1.33, 1.34, 1.35, 1.36")));
  r = RunCompatd(COMPATD_BINARY, {"plan", "--from=one.33", "--to=1.36"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("from.binary_version \"one.33\" is not a "
                               "kube-apiserver version"));
}

// `compatd plan --from=1.33 --to=1.36` on the embedded catalogs, as a pipe
// gets it (no colour, 100 columns). Where each fact comes from (Kubernetes,
// not compatd):
// - Steps: one binary minor at a time (version skew policy: kube-apiserver
//   upgrades one minor), each hop binaries -> emulation -> min-compatibility
//   (KEP-4330); 1.34 has no --min-compatibility-version, so it is emulation
//   - 1 there (component-base version.go of v0.34.7); 1.35 and 1.36 take it.
// - Gates, step by step: each binary's versioned specs, the spec in force
//   being the last one at or before the emulation version. 1.34 and 1.35:
//   pkg/features/kube_features.go of k8s.io/kubernetes v1.34.7 / v1.35.4 and
//   the staging gates (apiserver, component-base, controller-manager,
//   apiextensions-apiserver, client-go) at v0.34.7 / v0.35.4, as collected in
//   the release-lines notes (gates-by-line.json); 1.36: kube_features.go of
//   the 1.36 tree and the staging gates at v0.36.3. Checked name by name:
//   step 1 StatefulSetSemanticRevisionComparison (added in 1.34.7 as
//   {1.0, Beta, true}); step 2 the 25 gates whose 1.34 spec is off at 1.33
//   and on at 1.34, ProbeHostPodSecurityStandards only {1.34, GA, true,
//   LockToDefault}; step 3 ChangeContainerStatusOnKubeletRestart, new in the
//   1.35 binary and on at 1.34; step 4 the 19 gates on at 1.35 and not at
//   1.34, and ChangeContainerStatusOnKubeletRestart {1.35, Deprecated,
//   false}; step 6 AllowServiceExternalIPs, new in 1.36 ({1.0, GA, true});
//   step 7 the 38 gates on at 1.36 and not at 1.35, NodeLogQuery {1.36, GA,
//   true, LockToDefault} (Alpha 1.27 and Beta 1.30 off upstream).
// - Storage: apiserver pkg/server/storage/resource_encoding_config.go (the
//   highest-priority version introduced at or before the min-compatibility
//   version, else the preferred one) and the overrides of
//   pkg/kubeapiserver/default_storage_factory_builder.go. Step 2
//   (min-compatibility 1.33): networking.k8s.io/v1 IPAddress and ServiceCIDR
//   are 1.33's (GA), 1.34 dropped their v1beta1 overrides;
//   resource.k8s.io/v1beta2 is introduced=1.33 and v1 1.34. Step 3 (the 1.35
//   binary): its overrides store MutatingAdmissionPolicy(Binding) and
//   PodCertificateRequest in v1beta1 (1.34: v1alpha1); storagemigration
//   v1beta1 is 1.35's, nothing qualifies at 1.33, so the preferred v1beta1.
//   Step 5 (min-compatibility 1.34): resource.k8s.io/v1 is introduced=1.34.
//   Step 6 (the 1.36 binary): its overrides store workloads in v1alpha2
//   (1.35: v1alpha1) and no longer hold volumeattributesclasses v1beta1, so
//   storage.k8s.io/v1 (1.34) applies at min-compatibility 1.34.
// - The skip-level path: KEP-4330 "Motivation"; the 1.36 binary accepts
//   --emulated-version down to 1.33 (apiserver pkg/util/compatibility
//   version.go: binary - 3, not below 1.31); unsupported by the skew policy.
constexpr char kPlan133To136[] =
    R"(Upgrade kube-apiserver 1.33 -> 1.36: one minor at a time (supported by Kubernetes), 8 steps

STEP  WHAT                    BINARY  EMULATION  MIN-COMPAT  ROLLBACK TO  NEEDS
now                           1.33    1.33       1.32
1     binaries 1.34           1.34    1.33       1.32        1.32         1 action
2     emulation 1.34          1.34    1.34       1.33        1.33         31 actions
3     binaries 1.35           1.35    1.34       1.33        1.33         5 actions
4     emulation 1.35          1.35    1.35       1.33        1.33         20 actions
5     min-compatibility 1.34  1.35    1.35       1.34        1.34         4 actions
6     binaries 1.36           1.36    1.35       1.34        1.34         3 actions
7     emulation 1.36          1.36    1.36       1.34        1.34         38 actions
8     min-compatibility 1.35  1.36    1.36       1.35        1.35         -

Blockers: none
Actions (102):
  Gates that turn on (or off) at the step; keep the old value until ready with --feature-gates:
  step 1  StatefulSetSemanticRevisionComparison
  step 2  ProbeHostPodSecurityStandards (locked), DRAAdminAccess, DRAPrioritizedList,
          DRASchedulerFilterTimeout, DetectCacheInconsistency, DisableAllocatorDualWrite,
          DynamicResourceAllocation, ExternalServiceAccountTokenSigner, KubeletPSI,
          KubeletPodResourcesDynamicResources, KubeletPodResourcesGet,
          KubeletPodResourcesListUseActivePods, ... and 13 more (--all)
  step 3  ChangeContainerStatusOnKubeletRestart
  step 4  ChangeContainerStatusOnKubeletRestart (off), AuthorizePodWebsocketUpgradeCreatePermission,
          CSIServiceAccountTokenSecrets, ClearingNominatedNodeNameAfterBinding,
          ContainerRestartRules, DeploymentReplicaSetTerminatingReplicas, EnvFiles,
          HPAConfigurableTolerance, HostnameOverride, ImageVolume, InOrderInformersBatchProcess,
          InformerResourceVersion, KubeletCrashLoopBackOffMax, ... and 7 more (--all)
  step 6  AllowServiceExternalIPs
  step 7  NodeLogQuery (locked), AtomicFIFO, CRDObservedGenerationTracking, ClientsAllowCARotation,
          ClientsAllowTLSCacheGC, ComponentFlagz, ComponentStatusz, ConstrainedImpersonation,
          CustomCPUCFSQuotaPeriod, DRAConsumableCapacity, DRADeviceBindingConditions,
          DRADeviceTaints, DRAExtendedResource, DRAPartitionableDevices,
          DRAResourceClaimGranularStatusAuthorization, ... and 23 more (--all)
  Storage to migrate once the step runs on every API server (a StorageVersionMigration each):
  step 2  networking.k8s.io/v1: ipaddresses, servicecidrs; resource.k8s.io/v1beta2: deviceclasses,
          resourceclaims, resourceclaimtemplates, resourceslices
  step 3  admissionregistration.k8s.io/v1beta1: mutatingadmissionpolicies,
          mutatingadmissionpolicybindings; certificates.k8s.io/v1beta1: podcertificaterequests;
          storagemigration.k8s.io/v1beta1: storageversionmigrations
  step 5  resource.k8s.io/v1: deviceclasses, resourceclaims, resourceclaimtemplates, resourceslices
  step 6  scheduling.k8s.io/v1alpha2: workloads; storage.k8s.io/v1: volumeattributesclasses

Nothing to do (--all: every item with its reason and action; -o json: the whole plan):
  feature gates: 135 items (same value; or a gate dropped, or new and off)
  APIs: 3 items (group-versions that start being served)
  rollback: 8 items (the ROLLBACK TO column above)
  cel: 2 items (CEL libraries new expressions may use from a step)
Also: skip-level through --emulated-version (not supported by Kubernetes): 6 steps, 0 blockers
Clients checked: 0 from the request; this process records no clients (offline evaluation): ask a
  running compatd to include the clients it has seen
)";

TEST(PlanCommandTest, SummaryOf133To136FitsAScreenAndExitsTwo) {
  const RunResult r =
      RunCompatd(COMPATD_BINARY, {"plan", "--from=1.33", "--to=1.36"});
  EXPECT_EQ(r.exit_code, 2) << r.err;  // actions, no blocker
  EXPECT_EQ(r.out, kPlan133To136);
  const std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  EXPECT_LE(lines.size(), 61u);  // 60 lines and the empty string after the last
  for (const std::string& line : lines) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_THAT(r.out, Not(HasSubstr("\033")));  // a pipe: no colour
}

// Runs compatd with stdout and stderr on a pseudo-terminal 120 columns wide
// (TERM=xterm, NO_COLOR unset, then `env` set); what it printed, with the
// terminal's \r\n made \n.
std::string RunOnATerminal(const std::vector<std::string>& args,
                           const std::vector<std::string>& env,
                           int* exit_code) {
  struct winsize size = {};
  size.ws_col = 120;
  size.ws_row = 40;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  if (pid == 0) {
    setenv("TERM", "xterm", 1);
    unsetenv("NO_COLOR");
    for (const std::string& kv : env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> argv = {const_cast<char*>(COMPATD_BINARY)};
    for (const std::string& a : args) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    execv(COMPATD_BINARY, argv.data());
    _exit(127);
  }
  std::string text;
  char buffer[4096];
  while (pid > 0) {
    const ssize_t n = read(master, buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child's side is closed
    }
  }
  if (master >= 0) close(master);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  *exit_code = pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return absl::StrReplaceAll(text, {{"\r\n", "\n"}});
}

// A terminal gets colour (ANSI SGR) and lines that fit 100 columns once the
// escape codes are left out; NO_COLOR or TERM=dumb: plain text.
TEST(PlanCommandTest, ATerminalGetsColourInsideOneHundredColumns) {
  const std::vector<std::string> args = {"plan", "--from=1.33", "--to=1.36"};
  int code = -1;
  const std::string coloured = RunOnATerminal(args, {}, &code);
  EXPECT_EQ(code, 2);
  EXPECT_THAT(coloured,
              AllOf(HasSubstr("\033[1mSTEP  WHAT"),
                    HasSubstr("\033[1mBlockers:\033[0m \033[32mnone\033[0m"),
                    HasSubstr("\033[33mActions (102):\033[0m")));
  const std::string plain =
      std::regex_replace(coloured, std::regex("\033\\[[0-9;]*m"), "");
  EXPECT_EQ(plain, kPlan133To136);  // the same text, coloured
  for (const std::vector<std::string>& env :
       std::vector<std::vector<std::string>>{{"NO_COLOR=1"}, {"TERM=dumb"}}) {
    const std::string text = RunOnATerminal(args, env, &code);
    EXPECT_EQ(code, 2);
    EXPECT_EQ(text, kPlan133To136) << env[0];
  }
}

// A plan with nothing to do: the binary it runs, at its defaults.
TEST(PlanCommandTest, NothingToDoExitsZero) {
  for (const char* output : {"text", "json"}) {
    const RunResult r = RunCompatd(
        COMPATD_BINARY, {"plan", "--from=1.36", "--to=1.36", "-o", output});
    EXPECT_EQ(r.exit_code, 0) << output << r.err;
  }
  const RunResult r =
      RunCompatd(COMPATD_BINARY, {"plan", "--from=1.36", "--to=1.36"});
  EXPECT_THAT(r.out, AllOf(HasSubstr("Blockers: none\nActions: none\n"),
                           HasSubstr("  rollback: 1 item")));
}

// AppArmor is registered by the 1.32 binary ({1.31, GA, true, LockToDefault}
// in k8s.io/kubernetes v1.32.5 pkg/features/kube_features.go) and no longer
// by 1.33's (removed; gates-removed-before-1.36.json: lastLine 1.32), so
// kube-apiserver 1.33 refuses --feature-gates=AppArmor=true ("unrecognized
// feature gate", component-base featuregate): a blocker, exit 3.
TEST(PlanCommandTest, ABlockerExitsThreeAndComesFirst) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY,
      {"plan",
       R"(--from-json={"binaryVersion":"1.32","featureGates":"AppArmor=true"})",
       "--to=1.33"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(
      r.out,
      HasSubstr("\nBlockers (1):\n"
                "  step 1  --feature-gates AppArmor=true (from.feature_gates): "
                "remove AppArmor from --feature-gates\n"
                "          before this step: kube-apiserver 1.33 does not "
                "register it\nActions ("));
  EXPECT_THAT(r.out, HasSubstr("1     binaries 1.33   1.33    1.32       1.31"
                               "        1.31         1 blocker, 6 actions"));
}

// The issue's two "done when" plans through the CLI: binary 1.32 with
// AppArmor=true to 1.33 blocks on AppArmor; 1.33 to 1.36 hops on the 1.34
// and 1.35 binaries.
TEST(PlanCommandTest, PlansAcrossBinaries) {
  RunResult r = RunCompatd(
      COMPATD_BINARY,
      {"plan",
       R"(--from-json={"binaryVersion":"1.32","featureGates":"AppArmor=true"})",
       "--to=1.33", "--all"});
  ASSERT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("Upgrade plan from kube-apiserver 1.32 to 1.33"),
                    HasSubstr("Path: one minor at a time (supported by "
                              "Kubernetes)"),
                    HasSubstr("Step 1: binaries 1.33 (kube-apiserver 1.33"),
                    HasSubstr("[flags] BLOCKING --feature-gates AppArmor=true "
                              "(from.feature_gates) (feature-gate-unknown)"),
                    HasSubstr("unrecognized feature gate: AppArmor")));

  r = RunCompatd(COMPATD_BINARY,
                 {"plan", "--from=1.33", "--to=1.36", "-o", "json"});
  ASSERT_EQ(r.exit_code, 2) << r.err;  // actions (the golden test below)
  v1::PlanUpgradeResponse response;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(r.out, &response).ok());
  std::vector<std::string> binaries;
  for (const v1::UpgradeStep& step : response.steps()) {
    if (absl::StartsWith(step.name(), "binaries")) {
      binaries.push_back(step.name());
    }
  }
  EXPECT_THAT(binaries, ::testing::ElementsAre("binaries 1.34", "binaries 1.35",
                                               "binaries 1.36"));
  EXPECT_EQ(response.from().binary_version(), "1.33");
  EXPECT_EQ(response.to().binary_version(), "1.36");
  ASSERT_EQ(response.alternatives_size(), 1);
  EXPECT_FALSE(response.alternatives(0).supported());
}

// Plans into 1.37 (issue 31, section 4), on the embedded PROVISIONAL 1.37
// line. The gates are the ones 1.36 registers and 1.37 does not
// (kubernetes/kubernetes pkg/features/kube_features.go at ae5d4d35, the 1.37
// code freeze, and the staging feature files of 2026-07-21..24): a 1.37
// kube-apiserver started with one in --feature-gates exits with
// component-base's "unrecognized feature gate: X". scheduling.k8s.io/v1alpha2
// is 1.36's Workload and PodGroup version, replaced by v1alpha3 in 1.37
// (kubernetes/api master 10b39a39): apiserver's runtime-config check refuses
// "group version ... that has not been registered".
TEST(PlanCommandTest, PlanFrom136To137BlocksOnWhatThe137BinaryRefuses) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY,
      {"plan",
       R"(--from-json={"binaryVersion":"1.36","featureGates":"ConsistentListFromCache=true,SchedulerQueueingHints=true,SidecarContainers=true","runtimeConfig":"scheduling.k8s.io/v1alpha2=true"})",
       "--to=1.37", "-o", "json"});
  ASSERT_EQ(r.exit_code, 3) << r.err;
  v1::PlanUpgradeResponse plan;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &plan).ok())
      << r.out;
  EXPECT_EQ(plan.to().binary_version(), "1.37");
  EXPECT_EQ(plan.catalog_exactness(), "PROVISIONAL");
  ASSERT_GE(plan.steps_size(), 1);
  EXPECT_EQ(plan.steps(0).name(), "binaries 1.37");
  for (const char* gate : {"ConsistentListFromCache", "SchedulerQueueingHints",
                           "SidecarContainers"}) {
    SCOPED_TRACE(gate);
    const std::string subject =
        absl::StrCat("--feature-gates ", gate, "=true (from.feature_gates)");
    const v1::UpgradeItem* found = nullptr;
    for (const v1::UpgradeItem& item : plan.flags()) {
      if (item.subject() == subject) found = &item;
    }
    ASSERT_NE(found, nullptr);
    EXPECT_TRUE(found->blocking());
    EXPECT_EQ(found->step(), 1u);
    EXPECT_EQ(found->rule(), "feature-gate-unknown");
    EXPECT_THAT(found->reason(),
                HasSubstr(absl::StrCat("unrecognized feature gate: ", gate)));
  }
  const v1::UpgradeItem* runtime_config = nullptr;
  for (const v1::UpgradeItem& item : plan.flags()) {
    if (absl::StrContains(item.subject(), "scheduling.k8s.io/v1alpha2=true")) {
      runtime_config = &item;
    }
  }
  ASSERT_NE(runtime_config, nullptr);
  EXPECT_TRUE(runtime_config->blocking());
  EXPECT_EQ(runtime_config->step(), 1u);
  EXPECT_THAT(runtime_config->reason(),
              HasSubstr("group version scheduling.k8s.io/v1alpha2 that has "
                        "not been registered"));
  EXPECT_GE(plan.blockers(), 4u);

  // The text says the data is provisional.
  const RunResult text =
      RunCompatd(COMPATD_BINARY, {"plan", "--from=1.36", "--to=1.37", "--all"});
  ASSERT_EQ(text.exit_code, 2) << text.err;
  EXPECT_THAT(text.out,
              AllOf(HasSubstr("Upgrade plan from kube-apiserver 1.36 to 1.37"),
                    HasSubstr("Data: PROVISIONAL for kube-apiserver 1.37")));
}

// The APIs 1.37 stops serving (k8s.io/api master 10b39a39
// zz_generated.prerelease-lifecycle.go: certificates/v1alpha1
// ClusterTrustBundle, networking/v1beta1 IPAddress and ServiceCIDR,
// storage/v1beta1 VolumeAttributesClass removed in 1.37): served by a 1.36
// cluster that enables them; a 1.37 binary still serves them while emulating
// 1.36 (removed after the emulation version: apiserver
// pkg/server/deleted_kinds.go) and stops at emulation 1.37, a blocker there.
TEST(PlanCommandTest, PlanFrom136To137StopsServingTheAPIs137Removes) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY,
      {"plan",
       R"(--from-json={"binaryVersion":"1.36","runtimeConfig":"certificates.k8s.io/v1alpha1=true,networking.k8s.io/v1beta1=true,storage.k8s.io/v1beta1=true"})",
       "--to=1.37", "-o", "json"});
  ASSERT_EQ(r.exit_code, 3) << r.err;
  v1::PlanUpgradeResponse plan;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &plan).ok())
      << r.out;
  int emulation_137 = 0;
  for (const v1::UpgradeStep& step : plan.steps()) {
    if (step.name() == "emulation 1.37") emulation_137 = step.number();
  }
  ASSERT_GT(emulation_137, 0);
  std::map<std::string, std::string> stops;  // group-version -> reason
  for (const v1::UpgradeItem& item : plan.apis()) {
    if (item.rule() != "api-stops-serving") continue;
    EXPECT_TRUE(item.blocking()) << item.subject();
    EXPECT_EQ(item.step(), static_cast<uint32_t>(emulation_137))
        << item.subject();
    stops[item.subject()] = item.reason();
  }
  EXPECT_THAT(stops["certificates.k8s.io/v1alpha1"],
              HasSubstr("clustertrustbundles removed in 1.37"));
  EXPECT_THAT(stops["networking.k8s.io/v1beta1"],
              AllOf(HasSubstr("ipaddresses removed in 1.37"),
                    HasSubstr("servicecidrs removed in 1.37")));
  EXPECT_THAT(stops["storage.k8s.io/v1beta1"],
              HasSubstr("volumeattributesclasses removed in 1.37"));
}

// From any 1.3x: one minor at a time, each hop on its own binary's catalog.
TEST(PlanCommandTest, PlanFrom133To137HopsThroughEveryBinary) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"plan", "--from=1.33", "--to=1.37", "-o", "json"});
  ASSERT_EQ(r.exit_code, 2) << r.err;
  v1::PlanUpgradeResponse plan;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &plan).ok())
      << r.out;
  std::vector<std::string> binaries;
  for (const v1::UpgradeStep& step : plan.steps()) {
    if (absl::StartsWith(step.name(), "binaries")) {
      binaries.push_back(step.name());
      EXPECT_THAT(step.catalog(),
                  HasSubstr(absl::StrCat("embedded:kubernetes-",
                                         step.versions().binary_version())));
    }
  }
  EXPECT_THAT(binaries,
              ::testing::ElementsAre("binaries 1.34", "binaries 1.35",
                                     "binaries 1.36", "binaries 1.37"));
  EXPECT_EQ(plan.catalog_exactness(), "PROVISIONAL");
  // The rollback floor at the target: min-compatibility 1.36.
  EXPECT_EQ(plan.to().min_compatibility_version(), "1.36");
  EXPECT_EQ(plan.steps(plan.steps_size() - 1).rollback_to(), "1.36");
}

// StorageVersionMigrations in the version each step's binary serves at the
// step's emulation version: storagemigration.k8s.io/v1beta1 (introduced 1.35,
// Beta, off by default: kube-apiserver serves beta APIs only when enabled,
// and StorageVersionMigrator is Beta, off, in 1.35 and 1.36) on a 1.36
// binary, and on a 1.37 binary still emulating 1.36, where v1 (introduced
// 1.37) cannot be enabled yet; storagemigration.k8s.io/v1 (GA, on by default
// with StorageVersionMigrator GA at 1.37: kube_features.go at ae5d4d35) from
// emulation 1.37. The manifests: kubernetes/api storagemigration/v1beta1 and
// v1 types.go (spec.resource is a GroupResource).
TEST(PlanCommandTest, MigrationsOfPlansInto137) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"plan", "--from=1.35", "--to=1.37", "-o", "json"});
  ASSERT_EQ(r.exit_code, 2) << r.err;
  v1::PlanUpgradeResponse plan;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &plan).ok())
      << r.out;
  ASSERT_GT(plan.storage_migrations_size(), 0);
  int on_137_binary = 0;
  for (const v1::StorageMigration& m : plan.storage_migrations()) {
    SCOPED_TRACE(m.name());
    ASSERT_GE(m.step(), 1u);
    ASSERT_LE(m.step(), static_cast<uint32_t>(plan.steps_size()));
    const v1::EffectiveVersion& at = plan.steps(m.step() - 1).versions();
    if (at.emulation_version() == "1.37") {
      EXPECT_EQ(m.api_version(), "storagemigration.k8s.io/v1");
      EXPECT_EQ(m.needs(), "");
    } else {
      EXPECT_EQ(m.api_version(), "storagemigration.k8s.io/v1beta1");
      EXPECT_EQ(m.needs(),
                "--runtime-config=storagemigration.k8s.io/v1beta1=true and "
                "--feature-gates=StorageVersionMigrator=true");
    }
    if (at.binary_version() == "1.37") ++on_137_binary;
    EXPECT_THAT(
        m.manifest(),
        AllOf(HasSubstr(absl::StrCat("apiVersion: ", m.api_version(),
                                     "\nkind: StorageVersionMigration")),
              HasSubstr(absl::StrCat("    resource: ", m.resource())),
              Not(HasSubstr("    version: "))));
  }
  EXPECT_GT(on_137_binary, 0);
  // -o migrations: the same objects as YAML documents.
  const RunResult yaml = RunCompatd(
      COMPATD_BINARY, {"plan", "--from=1.35", "--to=1.37", "-o", "migrations"});
  ASSERT_EQ(yaml.exit_code, 2) << yaml.err;
  for (const v1::StorageMigration& m : plan.storage_migrations()) {
    EXPECT_THAT(yaml.out, HasSubstr(m.manifest()));
  }
}

}  // namespace
}  // namespace compatd
