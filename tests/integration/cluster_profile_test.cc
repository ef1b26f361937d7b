// The cluster profile on the real binary (issue 32): compatd started with the
// embedded lines and a kube-apiserver static pod manifest only answers as
// that cluster (its binary with patch, its --emulated-version and
// --feature-gates), plans to the --upgrade-target (the target metrics, the
// status page), picks up an edit of the manifest without a restart, and keeps
// the old profile when an edit is bad.
//
// The manifest is written here in the shape kubeadm writes
// /etc/kubernetes/manifests/kube-apiserver.yaml (a v1 Pod, the container
// named kube-apiserver, one flag per `command` item). The gates' facts are
// Kubernetes': StructuredAuthorizationConfiguration is registered by
// kube-apiserver 1.35 (GA, locked on: kubernetes/apiserver v0.35.4
// pkg/features/kube_features.go) and no longer by 1.36 (v0.36.3), so a
// --feature-gates entry naming it blocks the upgrade to 1.36; WatchList is
// Beta, default on, from 1.34 (kubernetes/kubernetes pkg/features at v1.35.4),
// so the manifest's WatchList=false turns it off.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/time_scale.h"

namespace compatd {
namespace {

using testing::CompatdProcess;
using ::testing::HasSubstr;
using testing::HttpGet;
using testing::HttpReply;
using ::testing::Not;
using testing::WriteFile;
using namespace std::chrono_literals;

constexpr char kManifest[] = R"(apiVersion: v1
kind: Pod
metadata:
  labels:
    component: kube-apiserver
    tier: control-plane
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-apiserver
    - --advertise-address=192.168.0.10
    - --authorization-mode=Node,RBAC
    - --emulated-version=1.34
    - --feature-gates=StructuredAuthorizationConfiguration=true,WatchList=false
    - --secure-port=6443
    image: registry.k8s.io/kube-apiserver:IMAGE_TAG
    imagePullPolicy: IfNotPresent
    name: kube-apiserver
  hostNetwork: true
  priorityClassName: system-node-critical
)";

std::string Manifest(absl::string_view tag) {
  return absl::StrReplaceAll(kManifest, {{"IMAGE_TAG", tag}});
}

class ClusterProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/cluster_profile_",
                        ::testing::UnitTest::GetInstance()->random_seed(), "_",
                        getpid());
    ASSERT_EQ(std::system(absl::StrCat("mkdir -p ", dir_).c_str()), 0);
    path_ = dir_ + "/kube-apiserver.yaml";
    ASSERT_TRUE(WriteFile(path_, Manifest("v1.35.2")));
  }

  void Start(std::vector<std::string> args) {
    args.push_back("--cluster=" + path_);
    args.push_back("--http-listen=127.0.0.1:0");
    ASSERT_OK(server_.Start(args));
    stub_ = v1::CompatibilityPolicy::NewStub(server_.NewChannel());
  }

  v1::GetCatalogResponse Catalog() {
    grpc::ClientContext context;
    v1::GetCatalogResponse response;
    EXPECT_TRUE(
        stub_->GetCatalog(&context, v1::GetCatalogRequest(), &response).ok());
    return response;
  }

  // Waits until GetCatalog satisfies `done` (a reload is asynchronous).
  template <typename Done>
  v1::GetCatalogResponse WaitForCatalog(Done done) {
    const auto deadline =
        std::chrono::steady_clock::now() + 10s * testing::kTimeScale;
    v1::GetCatalogResponse response = Catalog();
    while (!done(response) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
      response = Catalog();
    }
    return response;
  }

  std::string dir_;
  std::string path_;
  CompatdProcess server_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
};

TEST_F(ClusterProfileTest, AnswersAsTheManifestsClusterAndPlansToTheTarget) {
  Start({"--upgrade-target=1.36"});
  const v1::GetCatalogResponse catalog = Catalog();
  EXPECT_EQ(catalog.cluster_source(), path_);
  EXPECT_EQ(catalog.cluster_binary_version(), "1.35.2");
  EXPECT_EQ(catalog.source(), "embedded:kubernetes-1.35");
  EXPECT_EQ(catalog.versions().emulation_version(), "1.34");
  EXPECT_EQ(catalog.upgrade_target().binary_version(), "1.36");
  EXPECT_EQ(catalog.lines_size(), 7) << "every embedded line is served";

  // A request without versions is the cluster's.
  grpc::ClientContext context;
  v1::GetFeatureRequest request;
  request.set_name("WatchList");
  v1::GetFeatureResponse feature;
  ASSERT_TRUE(stub_->GetFeature(&context, request, &feature).ok());
  EXPECT_FALSE(feature.enabled());
  EXPECT_TRUE(feature.default_enabled());
  EXPECT_THAT(
      feature.reason(),
      HasSubstr(absl::StrCat(path_, ":16 (spec.containers[0].command[4])")));
  EXPECT_EQ(feature.catalog_source(), "embedded:kubernetes-1.35");

  // A kubelet 1.32 is within the allowance now (emulation 1.34, so
  // min-compatibility 1.33: kubelets down to 1.31) and not at the target
  // (min-compatibility 1.35: down to 1.33), Kubernetes' version skew policy.
  {
    grpc::ClientContext kubelet;
    kubelet.AddMetadata("x-kubernetes-component", "kubelet");
    kubelet.AddMetadata("x-kubernetes-version", "v1.32.4");
    v1::GetCatalogResponse ignored;
    ASSERT_TRUE(stub_->GetCatalog(&kubelet, {}, &ignored).ok());
  }
  // The flag 1.36 refuses is a blocker of the upgrade, in the metrics.
  absl::StatusOr<std::string> scrape = server_.Scrape();
  ASSERT_OK(scrape);
  EXPECT_THAT(*scrape,
              HasSubstr(R"(compatd_upgrade_blockers{kind="flags"} 1)"));
  EXPECT_THAT(*scrape, HasSubstr("compatd_clients_out_of_allowance_at_target{"
                                 "component=\"kubelet\"} 1"));
  EXPECT_THAT(*scrape, HasSubstr("compatd_clients_out_of_allowance{"
                                 "component=\"kubelet\"} 0"));

  // The status page plans to the target and says where the cluster came from.
  absl::StatusOr<HttpReply> plan = HttpGet(server_.http_port(), "/ui/plan");
  ASSERT_OK(plan);
  EXPECT_EQ(plan->status, 200) << plan->body;
  EXPECT_THAT(plan->body, HasSubstr("StructuredAuthorizationConfiguration"));
  EXPECT_THAT(plan->body, HasSubstr("id=\"plan-target\""));
  absl::StatusOr<HttpReply> overview = HttpGet(server_.http_port(), "/ui/");
  ASSERT_OK(overview);
  EXPECT_THAT(overview->body, HasSubstr(path_));
  EXPECT_THAT(overview->body,
              HasSubstr("<dd id=\"binary-version\">1.35.2</dd>"));
}

TEST_F(ClusterProfileTest, AnEditIsPickedUpAndABadEditKeepsTheProfile) {
  Start({});
  EXPECT_EQ(Catalog().cluster_binary_version(), "1.35.2");

  // No target: the page asks for one, and plans to the one chosen there.
  absl::StatusOr<HttpReply> asks = HttpGet(server_.http_port(), "/ui/plan");
  ASSERT_OK(asks);
  EXPECT_THAT(asks->body, HasSubstr("id=\"no-target\""));
  absl::StatusOr<HttpReply> chosen =
      HttpGet(server_.http_port(), "/ui/plan?to=1.36");
  ASSERT_OK(chosen);
  EXPECT_EQ(chosen->status, 200) << chosen->body;
  EXPECT_THAT(chosen->body, Not(HasSubstr("id=\"no-target\"")));
  EXPECT_THAT(chosen->body, HasSubstr("StructuredAuthorizationConfiguration"));

  // The control plane moves to 1.36.1 (without the gate 1.36 refuses).
  std::string next = absl::StrReplaceAll(
      Manifest("v1.36.1"),
      {{"StructuredAuthorizationConfiguration=true,", ""},
       {"--emulated-version=1.34", "--emulated-version=1.35"}});
  ASSERT_TRUE(WriteFile(path_, next));
  v1::GetCatalogResponse moved = WaitForCatalog(
      [](const auto& c) { return c.cluster_binary_version() == "1.36.1"; });
  EXPECT_EQ(moved.cluster_binary_version(), "1.36.1");
  EXPECT_EQ(moved.source(), "embedded:kubernetes-1.36");
  EXPECT_EQ(moved.versions().emulation_version(), "1.35");

  // An image tag that is not a version: refused, the profile stays.
  ASSERT_TRUE(WriteFile(path_, Manifest("latest")));
  v1::GetCatalogResponse refused =
      WaitForCatalog([](const auto& c) { return !c.last_error().empty(); });
  EXPECT_THAT(refused.last_error(), HasSubstr(path_));
  EXPECT_THAT(refused.last_error(), HasSubstr("latest"));
  EXPECT_EQ(refused.cluster_binary_version(), "1.36.1");

  // A binary no line describes: refused too, naming the lines.
  ASSERT_TRUE(WriteFile(path_, Manifest("v1.30.4")));
  v1::GetCatalogResponse old = WaitForCatalog(
      [](const auto& c) { return absl::StrContains(c.last_error(), "1.30"); });
  EXPECT_THAT(old.last_error(), HasSubstr("no catalog describes"));
  EXPECT_EQ(old.cluster_binary_version(), "1.36.1");
}

TEST(ClusterProfileFlagsTest, TheVersionFlagsAloneDescribeTheCluster) {
  CompatdProcess server;
  ASSERT_OK(
      server.Start({"--cluster-version=1.34.3", "--upgrade-target=1.35"}));
  auto stub = v1::CompatibilityPolicy::NewStub(server.NewChannel());
  grpc::ClientContext context;
  v1::GetCatalogResponse catalog;
  ASSERT_TRUE(
      stub->GetCatalog(&context, v1::GetCatalogRequest(), &catalog).ok());
  EXPECT_EQ(catalog.source(), "embedded:kubernetes-1.34");
  EXPECT_EQ(catalog.cluster_binary_version(), "1.34.3");
  EXPECT_EQ(catalog.upgrade_target().binary_version(), "1.35");
}

// The admission webhook enforces at the profile's target: Kubernetes 1.32
// stops serving flowcontrol.apiserver.k8s.io/v1beta3 (the deprecated API
// migration guide, "v1.32"), which 1.31 serves, so enforce mode denies a
// FlowSchema of it on a 1.31 cluster going to 1.32, and warn mode admits it.
TEST(ClusterProfileFlagsTest, TheWebhookEnforcesAtTheProfilesTarget) {
  CompatdProcess server;
  ASSERT_OK(server.Start({"--cluster-version=1.31.8", "--upgrade-target=1.32",
                          "--http-listen=127.0.0.1:0"}));
  const std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
      R"("request":{"uid":"u-1","operation":"CREATE",)"
      R"("kind":{"group":"flowcontrol.apiserver.k8s.io","version":"v1beta3",)"
      R"("kind":"FlowSchema"},)"
      R"("resource":{"group":"flowcontrol.apiserver.k8s.io",)"
      R"("version":"v1beta3","resource":"flowschemas"},)"
      R"("object":{"apiVersion":"flowcontrol.apiserver.k8s.io/v1beta3",)"
      R"("kind":"FlowSchema","metadata":{"name":"f"}}}})";
  absl::StatusOr<HttpReply> enforced = testing::HttpPost(
      server.http_port(), "/admission/v1/validate/enforce", review);
  ASSERT_OK(enforced);
  ASSERT_EQ(enforced->status, 200) << enforced->body;
  EXPECT_THAT(enforced->body, HasSubstr("\"allowed\":false"));
  EXPECT_THAT(enforced->body, HasSubstr("1.32"));
  absl::StatusOr<HttpReply> warned =
      testing::HttpPost(server.http_port(), "/admission/v1/validate", review);
  ASSERT_OK(warned);
  EXPECT_THAT(warned->body, HasSubstr("\"allowed\":true"));
  EXPECT_THAT(warned->body, HasSubstr("flowcontrol.apiserver.k8s.io/v1"));
}

TEST(ClusterProfileFlagsTest, BadProfilesStopTheStartWithTheFileAndField) {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/bad_profile_", getpid(), ".yaml");
  ASSERT_TRUE(WriteFile(path, "binaryVersion: \"1.35\"\nfeaturGates: x\n"));
  testing::RunResult r = testing::RunCompatd(
      COMPATD_BINARY, {"--cluster=" + path, "--listen=127.0.0.1:0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(path, ":2")));
  EXPECT_THAT(r.err, HasSubstr("featurGates"));
  r = testing::RunCompatd(COMPATD_BINARY,
                          {"--binary-version=1.35", "--cluster-version=1.35.2",
                           "--listen=127.0.0.1:0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("give one"));
  r = testing::RunCompatd(COMPATD_BINARY,
                          {"--upgrade-target=1.36", "--listen=127.0.0.1:0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--upgrade-target needs the cluster"));
}

}  // namespace
}  // namespace compatd
