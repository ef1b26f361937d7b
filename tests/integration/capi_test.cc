// The real compatd binary as a Cluster API Runtime Extension: requests in the
// exact shapes Cluster API v1.14.0 sends (written from its Go types,
// api/runtime/hooks/v1alpha1, and its runtime client, internal/runtime/
// client/client.go: POST, JSON with apiVersion and kind set, settings merged
// in, "?timeout=10s") over HTTPS with a CA the test makes, as Cluster API
// calls extensions with the ExtensionConfig's caBundle. Every handler:
// discovery, GenerateUpgradePlan (checked with Cluster API's own plan
// validation, DefaultAndValidateUpgradePlans in exp/topology/desiredstate/
// upgrade_plan.go, transcribed below), the before-hooks that must block and
// those that must pass, the after-hook with pending storage migrations,
// malformed requests; then the metrics and the status page.

#include <unistd.h>

#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/integration/curl_json.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_certs.h"

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::compatd::testing::RunCompatd;
using ::compatd::testing::RunResult;
using ::compatd::testing::TestCerts;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGroupVersion[] = "hooks.runtime.cluster.x-k8s.io/v1alpha1";

using Reply = ::compatd::testing::CurlReply;

Reply Curl(std::vector<std::string> args) {
  return ::compatd::testing::Curl(std::move(args), /*max_seconds=*/20);
}

google::protobuf::Value Json(const std::string& text) {
  return ::compatd::testing::ParseJson(text);
}

const google::protobuf::Value& Field(const google::protobuf::Value& object,
                                     const std::string& name) {
  return ::compatd::testing::JsonField(object, name);
}

bool Has(const google::protobuf::Value& object, const std::string& name) {
  return object.struct_value().fields().count(name) > 0;
}

std::string Str(const google::protobuf::Value& object,
                const std::string& name) {
  return Field(object, name).string_value();
}

std::vector<std::string> Versions(const google::protobuf::Value& object,
                                  const std::string& name) {
  std::vector<std::string> out;
  for (const auto& step : Field(object, name).list_value().values()) {
    out.push_back(Str(step, "version"));
  }
  return out;
}

// The path Cluster API's catalog.GVHToPath builds for a handler:
// "/<group>/<version>/<lower(hook)>/<lower(name)>".
std::string GvhToPath(const std::string& hook, const std::string& name) {
  return absl::StrCat("/", kGroupVersion, "/", absl::AsciiStrToLower(hook),
                      name.empty() ? "" : "/", absl::AsciiStrToLower(name));
}

// A minimal semver, as github.com/blang/semver's ParseTolerant reads
// Cluster API's versions ("v1.35.4").
struct Semver {
  int major = 0, minor = 0, patch = 0;
  static std::optional<Semver> Parse(std::string text) {
    if (!text.empty() && text[0] == 'v') text.erase(0, 1);
    std::vector<std::string> parts = absl::StrSplit(text, '.');
    Semver v;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &v.major) ||
        !absl::SimpleAtoi(parts[1], &v.minor) ||
        !absl::SimpleAtoi(parts[2], &v.patch)) {
      return std::nullopt;
    }
    return v;
  }
  int Compare(const Semver& o) const {
    if (major != o.major) return major < o.major ? -1 : 1;
    if (minor != o.minor) return minor < o.minor ? -1 : 1;
    if (patch != o.patch) return patch < o.patch ? -1 : 1;
    return 0;
  }
};

// Cluster API v1.14.0's DefaultAndValidateUpgradePlans (exp/topology/
// desiredstate/upgrade_plan.go), without build tags: "" when the plans pass,
// else the error; `workers` is defaulted as Cluster API defaults it.
std::string CapiValidatePlans(const std::string& desired,
                              const std::string& control_plane,
                              const std::string& min_workers,
                              const std::vector<std::string>& cp_plan,
                              std::vector<std::string>* workers) {
  const Semver d = *Semver::Parse(desired);
  const Semver cp = *Semver::Parse(control_plane);
  std::map<int, std::string> minors = {{cp.minor, control_plane}};
  if (cp.Compare(d) != 0) {
    Semver current = cp;
    for (size_t i = 0; i < cp_plan.size(); ++i) {
      std::optional<Semver> t = Semver::Parse(cp_plan[i]);
      if (!t) return "cannot parse " + cp_plan[i];
      if (t->Compare(current) <= 0) return "not greater: " + cp_plan[i];
      if (current.minor != t->minor && current.minor + 1 != t->minor) {
        return "skips a minor: " + cp_plan[i];
      }
      minors[t->minor] = cp_plan[i];
      current = *t;
    }
    if (current.Compare(d) != 0) return "does not end with " + desired;
  } else if (!cp_plan.empty()) {
    return "control plane already at the desired version";
  }
  if (min_workers.empty()) {
    return workers->empty() ? "" : "workers plan without workers";
  }
  const Semver w = *Semver::Parse(min_workers);
  if (w.Compare(d) == 0) {
    return workers->empty() ? "" : "workers already at the desired version";
  }
  std::set<std::string> allowed(cp_plan.begin(), cp_plan.end());
  allowed.insert(control_plane);
  for (const std::string& v : *workers) {
    if (!allowed.count(v)) return "workers version not in the plan: " + v;
  }
  if (workers->empty()) {
    for (int i = 0; i < d.minor - w.minor; ++i) {
      if (i > 0 && i % 3 == 0) workers->push_back(minors[w.minor + i]);
    }
    if (workers->empty() || workers->back() != desired) {
      workers->push_back(desired);
    }
  }
  Semver current = w;
  for (const std::string& v : *workers) {
    const Semver t = *Semver::Parse(v);
    if (t.Compare(current) <= 0) return "workers not greater: " + v;
    if (t.minor - current.minor > 3) return "workers skew broken at " + v;
    current = t;
  }
  if (current.Compare(d) != 0) return "workers do not end with " + desired;
  return "";
}

// The patch release compatd's embedded catalog of a line describes: its
// binaryVersion (generated from that Kubernetes release's sources; "1.36"
// without a patch is 1.36.0 by Kubernetes' version comparison).
std::string CatalogRelease(int minor) {
  std::ifstream in(absl::StrCat(COMPATD_SOURCE_DIR, "/catalog/kubernetes-1.",
                                minor, ".yaml"));
  std::string line;
  const std::regex binary("^binaryVersion: \"([0-9.]+)\"");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, binary)) {
      std::string v = m[1];
      if (std::count(v.begin(), v.end(), '.') == 1) v += ".0";
      return "v" + v;
    }
  }
  ADD_FAILURE() << "no binaryVersion in the 1." << minor << " catalog";
  return "";
}

// A Cluster as cleanupCluster sends it (cluster.x-k8s.io/v1beta2; status and
// managedFields dropped).
std::string Cluster(const std::string& variables = "",
                    const std::string& annotations = "") {
  return absl::StrCat(
      R"({"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster",)",
      R"("metadata":{"name":"prod-eu-1","namespace":"fleet",)",
      R"("uid":"0b5e6c1e-5d0a-4d8a-9b0e-3b4cbb0f3e1a","generation":4)",
      annotations.empty() ? "" : absl::StrCat(",\"annotations\":", annotations),
      R"(},"spec":{"controlPlaneRef":{"apiGroup":"controlplane.cluster.x-k8s.io",)",
      R"("kind":"KubeadmControlPlane","name":"prod-eu-1-cp"},)",
      R"("topology":{"classRef":{"name":"quick-start"},"version":"v1.36.0",)",
      R"("controlPlane":{"replicas":3},"workers":{"machineDeployments":[)",
      R"({"class":"default-worker","name":"md-0","replicas":3}]})",
      variables.empty() ? "" : absl::StrCat(",\"variables\":", variables),
      "}}}");
}

// `text` as a JSON string literal.
std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string Settings(
    const std::vector<std::pair<std::string, std::string>>& settings) {
  std::vector<std::string> pairs;
  for (const auto& [k, v] : settings) {
    pairs.push_back(absl::StrCat("\"", k, "\":", Quote(v)));
  }
  return absl::StrCat("{", absl::StrJoin(pairs, ","), "}");
}

// A v1beta2 KubeadmControlPlane with kube-apiserver's --feature-gates.
std::string Kcp(const std::string& version, const std::string& gates) {
  return absl::StrCat(
      "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\n"
      "kind: KubeadmControlPlane\n"
      "metadata:\n  name: prod-eu-1-cp\n  namespace: fleet\n"
      "spec:\n  version: ",
      version,
      "\n  replicas: 3\n  kubeadmConfigSpec:\n    clusterConfiguration:\n"
      "      apiServer:\n        extraArgs:\n        - name: feature-gates\n"
      "          value: \"",
      gates, "\"\n");
}

class CapiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    certs_ = new TestCerts();
    server_ = new CompatdProcess();
    if (!certs_->MakeCa("ca") || !certs_->MakeServer("ca", "server")) {
      start_ = absl::InternalError("cannot make certificates");
      return;
    }
    start_ = server_->Start({"--http-listen=127.0.0.1:0",
                             "--http-tls-cert=" + certs_->Path("server.crt"),
                             "--http-tls-key=" + certs_->Path("server.key")});
  }
  static void TearDownTestSuite() {
    delete server_;
    delete certs_;
  }
  void SetUp() override {
    if (!::compatd::testing::CurlPresent())
      GTEST_SKIP() << "curl is not installed";
    ASSERT_OK(start_);
    ASSERT_NE(server_->http_port(), 0) << server_->Stderr();
  }

  static std::string Url(const std::string& path) {
    return absl::StrCat("https://127.0.0.1:", server_->http_port(), path);
  }
  // As Cluster API's httpCall: POST, JSON, "?timeout=<handler's timeout>".
  static Reply Post(const std::string& path, const std::string& body) {
    return Curl({"--cacert", certs_->Path("ca.crt"), "-X", "POST", "-H",
                 "Content-Type: application/json", "--data-binary", body,
                 Url(path + "?timeout=10s")});
  }
  // One hook call: the request with apiVersion and kind as Cluster API sets
  // them (requestLocal.GetObjectKind().SetGroupVersionKind), the response
  // checked for the envelope every answer must have.
  static google::protobuf::Value Call(const std::string& hook,
                                      const std::string& handler,
                                      const std::string& fields,
                                      const std::string& kind = "") {
    const std::string body =
        absl::StrCat("{\"apiVersion\":\"", kGroupVersion, "\",\"kind\":\"",
                     kind.empty() ? hook + "Request" : kind, "\"",
                     fields.empty() ? "" : ",", fields, "}");
    const Reply reply = Post(GvhToPath(hook, handler), body);
    EXPECT_EQ(reply.status, 200) << reply.err << reply.body;
    google::protobuf::Value value = Json(reply.body);
    EXPECT_EQ(Str(value, "apiVersion"), kGroupVersion) << reply.body;
    EXPECT_EQ(Str(value, "kind"), hook + "Response") << reply.body;
    const std::string status = Str(value, "status");
    EXPECT_TRUE(status == "Success" || status == "Failure") << reply.body;
    return value;
  }

  static TestCerts* certs_;
  static CompatdProcess* server_;
  static absl::Status start_;
};

TestCerts* CapiTest::certs_ = nullptr;
CompatdProcess* CapiTest::server_ = nullptr;
absl::Status CapiTest::start_;

// The hooks of Cluster API v1.14.0's catalog (api/runtime/hooks/v1alpha1:
// RegisterHook calls), for its discovery validation.
const std::set<std::string>& CapiHooks() {
  static const auto* hooks =
      new std::set<std::string>{"Discovery",
                                "BeforeClusterCreate",
                                "AfterControlPlaneInitialized",
                                "BeforeClusterUpgrade",
                                "BeforeControlPlaneUpgrade",
                                "AfterControlPlaneUpgrade",
                                "BeforeWorkersUpgrade",
                                "AfterWorkersUpgrade",
                                "AfterClusterUpgrade",
                                "BeforeClusterDelete",
                                "GenerateUpgradePlan",
                                "GeneratePatches",
                                "ValidateTopology",
                                "DiscoverVariables",
                                "CanUpdateMachine",
                                "CanUpdateMachineSet",
                                "UpdateMachine"};
  return *hooks;
}

TEST_F(CapiTest, DiscoveryPassesClusterApisValidationAndEveryHandlerAnswers) {
  const google::protobuf::Value discovery = Call("Discovery", "", "");
  EXPECT_EQ(Str(discovery, "status"), "Success");
  // defaultAndValidateDiscoveryResponse (internal/runtime/client/client.go).
  const std::regex dns1123_label("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  std::set<std::string> names;
  std::set<std::string> hooks;
  for (const auto& handler :
       Field(discovery, "handlers").list_value().values()) {
    const std::string name = Str(handler, "name");
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    EXPECT_TRUE(std::regex_match(name, dns1123_label) && name.size() <= 63)
        << name;
    const double timeout = Field(handler, "timeoutSeconds").number_value();
    EXPECT_TRUE(timeout >= 0 && timeout <= 30) << name;
    const std::string policy = Str(handler, "failurePolicy");
    EXPECT_TRUE(policy == "Fail" || policy == "Ignore") << name;
    const auto& request_hook = Field(handler, "requestHook");
    EXPECT_EQ(Str(request_hook, "apiVersion"), kGroupVersion);
    const std::string hook = Str(request_hook, "hook");
    EXPECT_TRUE(CapiHooks().count(hook)) << hook;
    hooks.insert(hook);
    // The handler's path answers (a 404 would be a failed call).
    const Reply reply = Post(GvhToPath(hook, name), "{}");
    EXPECT_EQ(reply.status, 200) << GvhToPath(hook, name) << reply.body;
    EXPECT_EQ(Str(Json(reply.body), "status"), "Failure") << reply.body;
  }
  EXPECT_EQ(hooks, (std::set<std::string>{
                       "GenerateUpgradePlan", "BeforeClusterUpgrade",
                       "BeforeControlPlaneUpgrade", "AfterControlPlaneUpgrade",
                       "BeforeWorkersUpgrade", "AfterWorkersUpgrade",
                       "AfterClusterUpgrade"}));
}

TEST_F(CapiTest, PlanFrom134To136StopsAtTheCatalogsPatchOf135) {
  const google::protobuf::Value plan =
      Call("GenerateUpgradePlan", "upgrade-plan",
           absl::StrCat(R"("settings":{},"cluster":)", Cluster(),
                        R"(,"fromControlPlaneKubernetesVersion":"v1.34.7",)"
                        R"("fromWorkersKubernetesVersion":"v1.34.7",)"
                        R"("toKubernetesVersion":"v1.36.0")"));
  ASSERT_EQ(Str(plan, "status"), "Success") << Str(plan, "message");
  const std::vector<std::string> cp = Versions(plan, "controlPlaneUpgrades");
  EXPECT_EQ(cp, (std::vector<std::string>{CatalogRelease(35), "v1.36.0"}));
  // Workers 1.34 stay within the kubelet skew of 1.35 and 1.36: no step of
  // theirs, and Cluster API defaults the one at the end.
  std::vector<std::string> workers = Versions(plan, "workersUpgrades");
  EXPECT_TRUE(workers.empty());
  EXPECT_EQ(CapiValidatePlans("v1.36.0", "v1.34.7", "v1.34.7", cp, &workers),
            "");
  EXPECT_EQ(workers, (std::vector<std::string>{"v1.36.0"}));
  // GenerateUpgradePlanResponse has no retryAfterSeconds.
  EXPECT_FALSE(Has(plan, "retryAfterSeconds"));
}

// The 1.37 line (catalog/kubernetes-1.37.yaml, embedded once it is in the
// tree): the same code path as 1.36, one hop more.
TEST_F(CapiTest, PlanFrom134To137GoesThroughEveryLineAndSaysWhatIsProvisional) {
  if (access(COMPATD_SOURCE_DIR "/catalog/kubernetes-1.37.yaml", R_OK) != 0) {
    GTEST_SKIP() << "no 1.37 catalog in this tree";
  }
  const google::protobuf::Value plan =
      Call("GenerateUpgradePlan", "upgrade-plan",
           absl::StrCat(R"("cluster":)", Cluster(),
                        R"(,"fromControlPlaneKubernetesVersion":"v1.34.7",)"
                        R"("fromWorkersKubernetesVersion":"v1.34.7",)"
                        R"("toKubernetesVersion":"v1.37.0")"));
  ASSERT_EQ(Str(plan, "status"), "Success") << Str(plan, "message");
  const std::vector<std::string> cp = Versions(plan, "controlPlaneUpgrades");
  EXPECT_EQ(cp, (std::vector<std::string>{CatalogRelease(35),
                                          CatalogRelease(36), "v1.37.0"}));
  // Kubelet 1.34 is three minors behind 1.37: still within the skew.
  std::vector<std::string> workers = Versions(plan, "workersUpgrades");
  EXPECT_TRUE(workers.empty());
  EXPECT_EQ(CapiValidatePlans("v1.37.0", "v1.34.7", "v1.34.7", cp, &workers),
            "");
  // The 1.37 line's data is from pre-release sources: the answer says so.
  EXPECT_THAT(Str(plan, "message"), HasSubstr("1.37 data is PROVISIONAL"));
}

TEST_F(CapiTest, PlanForcesAWorkersStepWhereKubeletSkewRequiresIt) {
  // Workers at 1.32 cannot stay through a 1.36 control plane (kubelet at
  // most three minors older than kube-apiserver, Kubernetes' version skew
  // policy): a step at the control plane's 1.35, as Cluster API's own
  // default (every third minor) would place it.
  const google::protobuf::Value plan =
      Call("GenerateUpgradePlan", "upgrade-plan",
           absl::StrCat(R"("cluster":)", Cluster(),
                        R"(,"fromControlPlaneKubernetesVersion":"v1.33.3",)"
                        R"("fromWorkersKubernetesVersion":"v1.32.5",)"
                        R"("toKubernetesVersion":"v1.36.0")"));
  ASSERT_EQ(Str(plan, "status"), "Success") << Str(plan, "message");
  const std::vector<std::string> cp = Versions(plan, "controlPlaneUpgrades");
  EXPECT_EQ(cp, (std::vector<std::string>{CatalogRelease(34),
                                          CatalogRelease(35), "v1.36.0"}));
  std::vector<std::string> workers = Versions(plan, "workersUpgrades");
  std::vector<std::string> capi_default;
  EXPECT_EQ(
      CapiValidatePlans("v1.36.0", "v1.33.3", "v1.32.5", cp, &capi_default),
      "");
  EXPECT_EQ(workers, capi_default);
  EXPECT_EQ(workers, (std::vector<std::string>{CatalogRelease(35), "v1.36.0"}));
  EXPECT_EQ(CapiValidatePlans("v1.36.0", "v1.33.3", "v1.32.5", cp, &workers),
            "");
}

TEST_F(CapiTest, PlanThroughALineCompatdHasNoFactsOfFails) {
  for (const char* to : {"v1.40.0", "v1.29.0"}) {
    const google::protobuf::Value plan =
        Call("GenerateUpgradePlan", "upgrade-plan",
             absl::StrCat(R"("cluster":)", Cluster(),
                          R"(,"fromControlPlaneKubernetesVersion":"v1.28.3",)",
                          R"("toKubernetesVersion":")", to, "\""));
    EXPECT_EQ(Str(plan, "status"), "Failure");
    EXPECT_THAT(Str(plan, "message"), HasSubstr("no facts of Kubernetes 1.28"));
    EXPECT_FALSE(Has(plan, "controlPlaneUpgrades"));
  }
}

// StructuredAuthorizationConfiguration: a k8s.io/apiserver gate, GA and
// locked to true since 1.32, last registered in 1.35 (kubernetes v1.35.x
// staging/src/k8s.io/apiserver/pkg/features/kube_features.go), gone from
// v1.36.0's: kube-apiserver 1.36 refuses --feature-gates naming it.
constexpr char kGateRemovedIn136[] = "StructuredAuthorizationConfiguration";

TEST_F(CapiTest, BeforeControlPlaneUpgradeBlocksOnAGateTheNextBinaryDrops) {
  const std::string fields = absl::StrCat(
      R"("settings":)",
      Settings({{"kubeadmControlPlane",
                 Kcp("v1.35.4", absl::StrCat(kGateRemovedIn136, "=true"))}}),
      R"(,"cluster":)", Cluster(),
      R"(,"fromKubernetesVersion":"v1.35.4","toKubernetesVersion":"v1.36.0",)"
      R"("controlPlaneUpgrades":[{"version":"v1.36.0"}],)"
      R"("workersUpgrades":[{"version":"v1.36.0"}])");
  const google::protobuf::Value blocked =
      Call("BeforeControlPlaneUpgrade", "before-control-plane-upgrade", fields);
  EXPECT_EQ(Str(blocked, "status"), "Failure");
  EXPECT_THAT(Str(blocked, "message"), HasSubstr(kGateRemovedIn136));
  EXPECT_THAT(Str(blocked, "message"), HasSubstr("KubeadmControlPlane"));
  EXPECT_EQ(Field(blocked, "retryAfterSeconds").number_value(), 0);
  EXPECT_THAT(server_->Stderr(),
              HasSubstr("Cluster API BeforeControlPlaneUpgrade "
                        "for cluster fleet/prod-eu-1: Failure"));
  // BeforeClusterUpgrade, at the start of 1.34 -> 1.36, sees it too.
  const google::protobuf::Value whole = Call(
      "BeforeClusterUpgrade", "before-cluster-upgrade",
      absl::StrCat(
          R"("settings":)",
          Settings(
              {{"kubeadmControlPlane",
                Kcp("v1.34.7", absl::StrCat(kGateRemovedIn136, "=true"))}}),
          R"(,"cluster":)", Cluster(),
          R"(,"fromKubernetesVersion":"v1.34.7","toKubernetesVersion":"v1.36.0")"));
  EXPECT_EQ(Str(whole, "status"), "Failure");
  EXPECT_THAT(Str(whole, "message"), HasSubstr(kGateRemovedIn136));
}

TEST_F(CapiTest, BeforeControlPlaneUpgradePassesWhenTheNextBinaryStillHasIt) {
  // 1.34 -> 1.35: the gate is still registered (locked to true) in 1.35.
  const google::protobuf::Value passed = Call(
      "BeforeControlPlaneUpgrade", "before-control-plane-upgrade",
      absl::StrCat(
          R"("settings":)",
          Settings(
              {{"kubeadmControlPlane",
                Kcp("v1.34.7", absl::StrCat(kGateRemovedIn136, "=true"))}}),
          R"(,"cluster":)", Cluster(),
          R"(,"fromKubernetesVersion":"v1.34.7","toKubernetesVersion":"v1.35.4")"));
  EXPECT_EQ(Str(passed, "status"), "Success") << Str(passed, "message");
  EXPECT_EQ(Field(passed, "retryAfterSeconds").number_value(), 0);
  EXPECT_TRUE(Has(passed, "retryAfterSeconds"));
}

TEST_F(CapiTest, TopologyVariableFlagsBlockWithRetryWhenSettingsSaySo) {
  // The gates in a topology variable the settings name, and "blockWith:
  // retry": Success with retryAfterSeconds, Cluster API's documented way for
  // a hook to block.
  const google::protobuf::Value retry = Call(
      "BeforeControlPlaneUpgrade", "before-control-plane-upgrade",
      absl::StrCat(
          R"("settings":)",
          Settings({{"featureGatesVariable", "apiServerFeatureGates"},
                    {"blockWith", "retry"},
                    {"retryAfterSeconds", "45"}}),
          R"(,"cluster":)",
          Cluster(absl::StrCat(R"([{"name":"apiServerFeatureGates","value":{")",
                               kGateRemovedIn136, R"(":true}}])")),
          R"(,"fromKubernetesVersion":"v1.35.4","toKubernetesVersion":"v1.36.0")"));
  EXPECT_EQ(Str(retry, "status"), "Success");
  EXPECT_EQ(Field(retry, "retryAfterSeconds").number_value(), 45);
  EXPECT_THAT(Str(retry, "message"), HasSubstr(kGateRemovedIn136));
  EXPECT_THAT(Str(retry, "message"),
              HasSubstr("topology variable apiServerFeatureGates"));
  // "checks.flags: warn" for this handler only: a warning, no block.
  const google::protobuf::Value warned = Call(
      "BeforeControlPlaneUpgrade", "before-control-plane-upgrade",
      absl::StrCat(
          R"("settings":)",
          Settings({{"featureGates", absl::StrCat(kGateRemovedIn136, "=true")},
                    {"before-control-plane-upgrade.checks.flags", "warn"}}),
          R"(,"cluster":)", Cluster(),
          R"(,"fromKubernetesVersion":"v1.35.4","toKubernetesVersion":"v1.36.0")"));
  EXPECT_EQ(Str(warned, "status"), "Success");
  EXPECT_EQ(Field(warned, "retryAfterSeconds").number_value(), 0);
  EXPECT_THAT(Str(warned, "message"), HasSubstr("warnings"));
}

TEST_F(CapiTest, BeforeWorkersUpgradeChecksKubeletSkewUntilTheNextStep) {
  // Workers to 1.33 while the control plane still has to reach 1.37's
  // predecessor 1.36: kubelet 1.33 is within 3 minors of 1.36.
  const google::protobuf::Value ok =
      Call("BeforeWorkersUpgrade", "before-workers-upgrade",
           absl::StrCat(R"("cluster":)", Cluster(),
                        R"(,"fromKubernetesVersion":"v1.32.5",)"
                        R"("toKubernetesVersion":"v1.33.3",)"
                        R"("controlPlaneUpgrades":[{"version":"v1.34.7"},)"
                        R"({"version":"v1.35.4"},{"version":"v1.36.0"}],)"
                        R"("workersUpgrades":[{"version":"v1.33.3"},)"
                        R"({"version":"v1.36.0"}])"));
  EXPECT_EQ(Str(ok, "status"), "Success") << Str(ok, "message");
  // Workers to 1.32 with no workers step before a 1.36 control plane: out
  // of the kubelet skew.
  const google::protobuf::Value blocked =
      Call("BeforeWorkersUpgrade", "before-workers-upgrade",
           absl::StrCat(R"("cluster":)", Cluster(),
                        R"(,"fromKubernetesVersion":"v1.31.8",)"
                        R"("toKubernetesVersion":"v1.32.5",)"
                        R"("controlPlaneUpgrades":[{"version":"v1.33.3"},)"
                        R"({"version":"v1.34.7"},{"version":"v1.35.4"},)"
                        R"({"version":"v1.36.0"}],)"
                        R"("workersUpgrades":[{"version":"v1.32.5"},)"
                        R"({"version":"v1.36.0"}])"));
  EXPECT_EQ(Str(blocked, "status"), "Failure");
  EXPECT_THAT(Str(blocked, "message"), HasSubstr("kubelet v1.32.5"));
  EXPECT_THAT(Str(blocked, "message"), HasSubstr("v1.36.0"));
}

// kube-apiserver 1.35 stores VolumeAttributesClass in storage.k8s.io/v1beta1
// (kubernetes v1.35 pkg/kubeapiserver/default_storage_factory_builder.go
// overrides it), 1.36 in v1 (no override): the hop to 1.36 needs its
// StorageVersionMigration.
TEST_F(CapiTest, AfterControlPlaneUpgradeWaitsForPendingStorageMigrations) {
  const std::string versions =
      R"(,"kubernetesVersion":"v1.36.0",)"
      R"("controlPlaneUpgrades":[],"workersUpgrades":[{"version":"v1.36.0"}])";
  const google::protobuf::Value pending =
      Call("AfterControlPlaneUpgrade", "after-control-plane-upgrade",
           absl::StrCat(R"("settings":{"retryAfterSeconds":"90"},"cluster":)",
                        Cluster(), versions));
  EXPECT_EQ(Str(pending, "status"), "Success");
  EXPECT_EQ(Field(pending, "retryAfterSeconds").number_value(), 90);
  const std::string message = Str(pending, "message");
  EXPECT_THAT(message, HasSubstr("StorageVersionMigration"));
  EXPECT_THAT(
      message,
      HasSubstr("volumeattributesclasses.storage.k8s.io v1beta1 -> v1"));
  EXPECT_THAT(message, HasSubstr("kubectl annotate cluster -n fleet prod-eu-1 "
                                 "compatd/storage-migrations-done=v1.36.0"));
  // Recorded done (any patch of the minor): no more waiting.
  const google::protobuf::Value done =
      Call("AfterControlPlaneUpgrade", "after-control-plane-upgrade",
           absl::StrCat(
               R"("cluster":)",
               Cluster("", R"({"compatd/storage-migrations-done":"v1.36.2"})"),
               versions));
  EXPECT_EQ(Str(done, "status"), "Success");
  EXPECT_EQ(Field(done, "retryAfterSeconds").number_value(), 0);
  EXPECT_THAT(Str(done, "message"), HasSubstr("recorded done"));
  // An annotation of another minor does not count.
  const google::protobuf::Value older =
      Call("AfterControlPlaneUpgrade", "after-control-plane-upgrade",
           absl::StrCat(
               R"("cluster":)",
               Cluster("", R"({"compatd/storage-migrations-done":"v1.35.4"})"),
               versions));
  EXPECT_EQ(Field(older, "retryAfterSeconds").number_value(), 60);
  // "storageMigrations: report": listed, not waited for.
  const google::protobuf::Value report =
      Call("AfterControlPlaneUpgrade", "after-control-plane-upgrade",
           absl::StrCat(R"("settings":{"storageMigrations":"report"},)"
                        R"("cluster":)",
                        Cluster(), versions));
  EXPECT_EQ(Str(report, "status"), "Success");
  EXPECT_EQ(Field(report, "retryAfterSeconds").number_value(), 0);
  EXPECT_THAT(Str(report, "message"), HasSubstr("volumeattributesclasses"));
}

TEST_F(CapiTest, AfterHooksSummarise) {
  const google::protobuf::Value workers =
      Call("AfterWorkersUpgrade", "after-workers-upgrade",
           absl::StrCat(R"("cluster":)", Cluster(),
                        R"(,"kubernetesVersion":"v1.35.4",)"
                        R"("controlPlaneUpgrades":[{"version":"v1.36.0"}],)"
                        R"("workersUpgrades":[{"version":"v1.36.0"}])"));
  EXPECT_EQ(Str(workers, "status"), "Success");
  EXPECT_EQ(Field(workers, "retryAfterSeconds").number_value(), 0);
  EXPECT_THAT(Str(workers, "message"), HasSubstr("v1.36.0"));
  // AfterClusterUpgradeResponse embeds CommonRetryResponse: the field is
  // there (required, no omitempty).
  const google::protobuf::Value cluster =
      Call("AfterClusterUpgrade", "after-cluster-upgrade",
           absl::StrCat(R"("cluster":)", Cluster(),
                        R"(,"kubernetesVersion":"v1.36.0")"));
  EXPECT_EQ(Str(cluster, "status"), "Success");
  EXPECT_TRUE(Has(cluster, "retryAfterSeconds"));
}

TEST_F(CapiTest, MalformedRequestsAreFailuresNeverSuccess) {
  const std::string cluster = absl::StrCat(R"("cluster":)", Cluster());
  struct Case {
    std::string hook, handler, body, message;
  };
  const std::string plan_path =
      GvhToPath("GenerateUpgradePlan", "upgrade-plan");
  const std::vector<Case> cases = {
      {"GenerateUpgradePlan", "upgrade-plan", "{", "not JSON"},
      {"GenerateUpgradePlan", "upgrade-plan", "[]", "expected"},
      {"GenerateUpgradePlan", "upgrade-plan",
       absl::StrCat(
           R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha2",)"
           R"("kind":"GenerateUpgradePlanRequest",)",
           cluster, "}"),
       "expected apiVersion"},
      {"BeforeControlPlaneUpgrade", "before-control-plane-upgrade",
       absl::StrCat(
           R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1",)"
           R"("kind":"BeforeClusterUpgradeRequest",)",
           cluster,
           R"(,"fromKubernetesVersion":"v1.35.4","toKubernetesVersion":"v1.36.0"})"),
       "kind BeforeControlPlaneUpgradeRequest"},
      {"GenerateUpgradePlan", "upgrade-plan",
       absl::StrCat(
           R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1",)"
           R"("kind":"GenerateUpgradePlanRequest",)",
           cluster, R"(,"fromControlPlaneKubernetesVersion":"v1.34.7"})"),
       "toKubernetesVersion: required"},
      {"GenerateUpgradePlan", "upgrade-plan",
       R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1",)"
       R"("kind":"GenerateUpgradePlanRequest",)"
       R"("fromControlPlaneKubernetesVersion":"v1.34.7","toKubernetesVersion":"v1.35.4"})",
       "cluster: required"},
      {"GenerateUpgradePlan", "upgrade-plan",
       absl::StrCat(
           R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1",)"
           R"("kind":"GenerateUpgradePlanRequest",)",
           cluster,
           R"(,"fromControlPlaneKubernetesVersion":"1.34",)"
           R"("toKubernetesVersion":"v1.35.4"})"),
       "not a semantic version"},
      {"GenerateUpgradePlan", "upgrade-plan",
       absl::StrCat(
           R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1",)"
           R"("kind":"GenerateUpgradePlanRequest",)",
           cluster,
           R"(,"fromControlPlaneKubernetesVersion":"v1.36.0",)"
           R"("toKubernetesVersion":"v1.35.4"})"),
       "older than"},
      {"BeforeClusterUpgrade", "before-cluster-upgrade",
       absl::StrCat(
           R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1",)"
           R"("kind":"BeforeClusterUpgradeRequest","settings":{"checks.flag":"warn"},)",
           cluster,
           R"(,"fromKubernetesVersion":"v1.35.4","toKubernetesVersion":"v1.36.0"})"),
       "checks.flag"},
      {"BeforeClusterUpgrade", "before-cluster-upgrade",
       absl::StrCat(
           R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1",)"
           R"("kind":"BeforeClusterUpgradeRequest","settings":{"blockWith":"never"},)",
           cluster,
           R"(,"fromKubernetesVersion":"v1.35.4","toKubernetesVersion":"v1.36.0"})"),
       "blockWith"},
      {"AfterControlPlaneUpgrade", "after-control-plane-upgrade",
       absl::StrCat(
           R"({"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1",)"
           R"("kind":"AfterControlPlaneUpgradeRequest",)",
           cluster, R"(,"kubernetesVersion":35})"),
       "expected a string"},
  };
  for (const Case& c : cases) {
    const Reply reply = Post(GvhToPath(c.hook, c.handler), c.body);
    ASSERT_EQ(reply.status, 200) << c.body << reply.body;
    const google::protobuf::Value value = Json(reply.body);
    EXPECT_EQ(Str(value, "status"), "Failure") << c.body;
    EXPECT_EQ(Str(value, "kind"), c.hook + "Response");
    EXPECT_THAT(Str(value, "message"), HasSubstr(c.message)) << c.body;
    EXPECT_FALSE(Has(value, "controlPlaneUpgrades"));
  }
  EXPECT_THAT(server_->Stderr(),
              HasSubstr("Cluster API GenerateUpgradePlan for cluster "));
  // An unknown handler is a 404, a GET a 405: failed calls for Cluster API
  // (any status but 200).
  EXPECT_EQ(Post(GvhToPath("BeforeClusterDelete", "compatd"), "{}").status,
            404);
  EXPECT_EQ(
      Post(GvhToPath("GenerateUpgradePlan", "Upgrade-Plan-2"), "{}").status,
      404);
  EXPECT_EQ(Curl({"--cacert", certs_->Path("ca.crt"), Url(plan_path)}).status,
            405);
}

TEST_F(CapiTest, CallsAndVerdictsAreCountedAndTheStatusPageShowsTheCluster) {
  Call("AfterClusterUpgrade", "after-cluster-upgrade",
       absl::StrCat(R"("cluster":)", Cluster(),
                    R"(,"kubernetesVersion":"v1.36.0")"));
  const absl::StatusOr<testing::HttpReply> metrics =
      testing::HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_OK(metrics);
  EXPECT_THAT(
      metrics->body,
      HasSubstr("compatd_capi_hook_calls_total{hook=\"AfterClusterUpgrade\","
                "verdict=\"success\"}"));
  const Reply page = Curl({"--cacert", certs_->Path("ca.crt"), Url("/ui/")});
  EXPECT_EQ(page.status, 200);
  EXPECT_THAT(page.body, HasSubstr("fleet/prod-eu-1"));
  EXPECT_THAT(page.body, HasSubstr("AfterClusterUpgrade"));
}

}  // namespace
}  // namespace compatd
