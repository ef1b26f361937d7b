// k8s/capi/ (compatd as a Cluster API Runtime Extension) rendered with
// `kubectl kustomize` (offline), alone and composed in examples/k8s-capi/:
// the ExtensionConfig must pass Cluster API v1.14.0's own admission rules
// (core/webhooks/admission/extensionconfig.go: validate after Default, and
// the CRD schema's bounds in api/runtime/v1beta2/extensionconfig_types.go,
// transcribed below), and name a Service, port and certificate that reach
// compatd's HTTPS front door.

#include <stdio.h>
#include <sys/wait.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "yaml-cpp/yaml.h"

namespace compatd {
namespace {

using ::testing::Contains;

using ::compatd::testing::RunShell;

// k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label and
// IsDNS1035Label.
bool IsDns1123Label(const std::string& s) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return s.size() <= 63 && std::regex_match(s, re);
}
bool IsDns1035Label(const std::string& s) {
  static const std::regex re("^[a-z]([-a-z0-9]*[a-z0-9])?$");
  return s.size() <= 63 && std::regex_match(s, re);
}

// Cluster API v1.14.0's ExtensionConfig admission: Default() (an absent
// namespaceSelector becomes {}, a service without a port gets 443), then
// validate() and validateExtensionConfigSpec(), and the CRD schema's bounds.
// The errors, one per rule broken.
std::vector<std::string> CapiValidate(const YAML::Node& config) {
  std::vector<std::string> errors;
  auto fail = [&errors](const std::string& e) { errors.push_back(e); };
  if (config["apiVersion"].as<std::string>("") !=
      "runtime.cluster.x-k8s.io/v1beta2") {
    fail("apiVersion");
  }
  if (config["kind"].as<std::string>("") != "ExtensionConfig") fail("kind");
  const std::string name = config["metadata"]["name"].as<std::string>("");
  if (!IsDns1123Label(name)) fail("metadata.name: DNS-1123 label");
  const YAML::Node spec = config["spec"];
  const YAML::Node client = spec["clientConfig"];
  if (!client || !client.IsMap() || client.size() == 0) {
    fail("spec.clientConfig: MinProperties=1");
    return errors;
  }
  const std::string url = client["url"].as<std::string>("");
  const YAML::Node service = client["service"];
  const bool has_service = service && service.IsMap() && service.size() > 0;
  if (url.empty() && !has_service) fail("either url or service");
  if (!url.empty() && has_service) fail("only one of url or service");
  if (!url.empty() && !absl::StartsWith(url, "https://")) fail("url: https");
  if (has_service) {
    const std::string sname = service["name"].as<std::string>("");
    const std::string sns = service["namespace"].as<std::string>("");
    if (sname.empty() || !IsDns1035Label(sname)) {
      fail("service.name: DNS-1035 label");
    }
    if (sns.empty() || !IsDns1123Label(sns)) {
      fail("service.namespace: DNS-1123 label");
    }
    if (service["path"]) {
      const std::string path = service["path"].as<std::string>("");
      if (path.empty() || path[0] != '/' || path.size() > 512) {
        fail("service.path");
      }
    }
    const int port = service["port"] ? service["port"].as<int>(-1) : 443;
    if (port < 1 || port > 65535) fail("service.port");
  }
  if (client["caBundle"] && client["caBundle"].as<std::string>("").empty()) {
    fail("caBundle: MinLength=1");
  }
  // namespaceSelector: LabelSelectorAsSelector must accept it.
  if (const YAML::Node selector = spec["namespaceSelector"]; selector) {
    if (!selector.IsMap()) fail("namespaceSelector: a LabelSelector");
    for (const YAML::Node& e : selector["matchExpressions"]) {
      const std::string op = e["operator"].as<std::string>("");
      const bool needs_values = op == "In" || op == "NotIn";
      if (!needs_values && op != "Exists" && op != "DoesNotExist") {
        fail("matchExpressions operator");
      }
      if (needs_values != (e["values"] && e["values"].size() > 0)) {
        fail("matchExpressions values");
      }
    }
  }
  if (const YAML::Node settings = spec["settings"]; settings) {
    if (!settings.IsMap()) fail("settings: map[string]string");
    for (const auto& kv : settings) {
      if (!kv.second.IsScalar()) fail("settings values are strings");
    }
  }
  return errors;
}

std::map<std::string, YAML::Node> Render(const std::string& dir,
                                         std::string* problem) {
  std::map<std::string, YAML::Node> objects;
  int code = 0;
  const std::string out = RunShell(std::string("kubectl kustomize ") +
                                       COMPATD_SOURCE_DIR + "/" + dir + " 2>&1",
                                   &code);
  if (code != 0) {
    *problem = "kubectl kustomize " + dir + " failed: " + out;
    return objects;
  }
  for (const YAML::Node& doc : YAML::LoadAll(out)) {
    objects[doc["kind"].as<std::string>() + "/" +
            doc["metadata"]["name"].as<std::string>()] = doc;
  }
  return objects;
}

class CapiKustomizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int code = 0;
    RunShell("command -v kubectl >/dev/null 2>&1", &code);
    if (code != 0) GTEST_SKIP() << "kubectl is not installed";
  }
};

TEST_F(CapiKustomizeTest, ExtensionConfigPassesClusterApisAdmission) {
  std::string problem;
  auto objects = Render("k8s/capi", &problem);
  ASSERT_TRUE(problem.empty()) << problem;
  ASSERT_TRUE(objects.count("ExtensionConfig/compatd"));
  const YAML::Node config = objects["ExtensionConfig/compatd"];
  EXPECT_THAT(CapiValidate(config), ::testing::IsEmpty());
  // The rules bite: a config Cluster API refuses is refused here too.
  YAML::Node broken = YAML::Clone(config);
  broken["spec"]["clientConfig"]["url"] = "http://compatd:8443";
  broken["spec"]["clientConfig"]["service"]["name"] = "1compatd";
  EXPECT_EQ(CapiValidate(broken).size(), 3u);
  // Its settings are ones compatd knows (gateway/capi_extension.h).
  const std::set<std::string> known = {
      "featureGates",         "runtimeConfig",
      "featureGatesVariable", "runtimeConfigVariable",
      "kubeadmControlPlane",  "checks.flags",
      "checks.clients",       "checks.apis",
      "checks.storage",       "blockWith",
      "retryAfterSeconds",    "storageMigrations"};
  for (const auto& kv : config["spec"]["settings"]) {
    std::string key = kv.first.as<std::string>();
    if (const size_t dot = key.find('.');
        dot != std::string::npos && !known.count(key)) {
      key = key.substr(dot + 1);
    }
    EXPECT_TRUE(known.count(key)) << kv.first.as<std::string>();
  }
  // The Service it names is the one rendered, on the port it names.
  const YAML::Node service = config["spec"]["clientConfig"]["service"];
  ASSERT_TRUE(objects.count("Service/" + service["name"].as<std::string>()));
  const YAML::Node ports =
      objects["Service/" + service["name"].as<std::string>()]["spec"]["ports"];
  EXPECT_EQ(ports[0]["port"].as<int>(), service["port"].as<int>(443));
}

TEST_F(CapiKustomizeTest, ComposedExampleWiresServiceCertificateAndCa) {
  std::string problem;
  auto objects = Render("examples/k8s-capi", &problem);
  ASSERT_TRUE(problem.empty()) << problem;
  const YAML::Node config = objects["ExtensionConfig/compatd"];
  ASSERT_TRUE(config);
  EXPECT_THAT(CapiValidate(config), ::testing::IsEmpty());
  const YAML::Node service = config["spec"]["clientConfig"]["service"];
  const std::string ns = service["namespace"].as<std::string>();
  const std::string host =
      absl::StrCat(service["name"].as<std::string>(), ".", ns, ".svc");
  // Cluster API checks the server certificate against <name>.<ns>.svc.
  const YAML::Node cert = objects["Certificate/compatd-http-tls"];
  ASSERT_TRUE(cert);
  EXPECT_EQ(cert["metadata"]["namespace"].as<std::string>(), ns);
  std::vector<std::string> names;
  for (const YAML::Node& n : cert["spec"]["dnsNames"]) {
    names.push_back(n.as<std::string>());
  }
  EXPECT_THAT(names, Contains(host));
  // The CA comes from that certificate's Secret
  // (runtime.cluster.x-k8s.io/inject-ca-from-secret: <namespace>/<name>).
  EXPECT_EQ(
      config["metadata"]["annotations"]
            ["runtime.cluster.x-k8s.io/inject-ca-from-secret"]
                .as<std::string>(),
      absl::StrCat(ns, "/", cert["spec"]["secretName"].as<std::string>()));
  // The Service reaches the container port the front door listens on.
  const YAML::Node svc =
      objects["Service/" + service["name"].as<std::string>()];
  EXPECT_EQ(svc["metadata"]["namespace"].as<std::string>(), ns);
  const std::string target =
      svc["spec"]["ports"][0]["targetPort"].as<std::string>();
  const YAML::Node container = objects["Deployment/compatd"]["spec"]["template"]
                                      ["spec"]["containers"][0];
  bool found = false;
  for (const YAML::Node& port : container["ports"]) {
    if (port["name"].as<std::string>("") == target) {
      found = true;
      EXPECT_EQ(port["containerPort"].as<int>(), 8443);
    }
  }
  EXPECT_TRUE(found) << "no container port " << target;
  std::vector<std::string> args;
  for (const YAML::Node& a : container["args"])
    args.push_back(a.as<std::string>());
  EXPECT_THAT(args, Contains("--http-listen=0.0.0.0:8443"));
  EXPECT_THAT(args, Contains("--http-tls-cert=/etc/compatd/http-tls/tls.crt"));
}

}  // namespace
}  // namespace compatd
