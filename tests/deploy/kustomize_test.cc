// Renders k8s/ with `kubectl kustomize` (offline) and checks what a safe,
// hot-reloading deployment of compatd needs: probes, security context,
// resources, the cluster profile ConfigMap mounted as a directory without a
// name hash, the Services, PDB, HPA, NetworkPolicy and monitoring objects; then
// examples/k8s-admission/ (the base with k8s/admission/'s components) and the
// webhook, certificate, front door, Gatekeeper and Kyverno objects.

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "yaml-cpp/yaml.h"

namespace compatd {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

using ::compatd::testing::RunShell;

class KustomizeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int code = 0;
    RunShell("command -v kubectl >/dev/null 2>&1", &code);
    kubectl_missing_ = code != 0;
    if (kubectl_missing_) return;
    rendered_ = new std::string(RunShell(
        std::string("kubectl kustomize ") + COMPATD_SOURCE_DIR + "/k8s",
        &code));
    render_code_ = code;
  }
  static void TearDownTestSuite() {
    delete rendered_;
    rendered_ = nullptr;
  }

  void SetUp() override {
    if (kubectl_missing_) {
      GTEST_SKIP() << "kubectl is not installed: cannot render k8s/";
    }
    ASSERT_EQ(render_code_, 0) << "kubectl kustomize k8s/ failed";
    try {
      for (const YAML::Node& doc : YAML::LoadAll(*rendered_)) {
        objects_[doc["kind"].as<std::string>() + "/" +
                 doc["metadata"]["name"].as<std::string>()] = doc;
      }
    } catch (const YAML::Exception& e) {
      FAIL() << "rendered YAML does not parse: " << e.what();
    }
  }

  YAML::Node Object(const std::string& key) {
    auto it = objects_.find(key);
    EXPECT_NE(it, objects_.end()) << key << " is not rendered";
    return it == objects_.end() ? YAML::Node() : it->second;
  }
  YAML::Node PodSpec() {
    return Object("Deployment/compatd")["spec"]["template"]["spec"];
  }
  YAML::Node Container() { return PodSpec()["containers"][0]; }

  static std::set<std::string> Strings(const YAML::Node& list) {
    std::set<std::string> out;
    for (const YAML::Node& item : list) out.insert(item.as<std::string>());
    return out;
  }

  static bool kubectl_missing_;
  static int render_code_;
  static std::string* rendered_;
  std::map<std::string, YAML::Node> objects_;
};

bool KustomizeTest::kubectl_missing_ = false;
int KustomizeTest::render_code_ = 0;
std::string* KustomizeTest::rendered_ = nullptr;

TEST_F(KustomizeTest, RendersEveryObject) {
  for (const char* key :
       {"Deployment/compatd", "Service/compatd", "Service/compatd-headless",
        "ConfigMap/compatd-cluster", "ConfigMap/compatd-grafana-dashboard",
        "PodDisruptionBudget/compatd", "HorizontalPodAutoscaler/compatd",
        "NetworkPolicy/compatd", "ServiceMonitor/compatd",
        "PrometheusRule/compatd"}) {
    EXPECT_TRUE(objects_.count(key)) << key;
  }
  EXPECT_EQ(
      Object("HorizontalPodAutoscaler/compatd")["apiVersion"].as<std::string>(),
      "autoscaling/v2");
  EXPECT_EQ(Object("ServiceMonitor/compatd")["apiVersion"].as<std::string>(),
            "monitoring.coreos.com/v1");
  EXPECT_EQ(
      Object("PodDisruptionBudget/compatd")["apiVersion"].as<std::string>(),
      "policy/v1");
}

TEST_F(KustomizeTest, DeploymentRunsAtLeastTwoReplicas) {
  EXPECT_GE(Object("Deployment/compatd")["spec"]["replicas"].as<int>(), 2);
  EXPECT_GE(Object("HorizontalPodAutoscaler/compatd")["spec"]["minReplicas"]
                .as<int>(),
            2);
}

TEST_F(KustomizeTest, ProbesAreNativeGrpcOnThePolicyPort) {
  for (const char* probe :
       {"livenessProbe", "readinessProbe", "startupProbe"}) {
    const YAML::Node grpc = Container()[probe]["grpc"];
    ASSERT_TRUE(grpc.IsMap()) << probe;
    EXPECT_EQ(grpc["port"].as<int>(), 50051) << probe;
  }
}

TEST_F(KustomizeTest, ContainerIsLockedDown) {
  const YAML::Node pod = PodSpec()["securityContext"];
  EXPECT_TRUE(pod["runAsNonRoot"].as<bool>());
  EXPECT_GT(pod["runAsUser"].as<int>(), 0);
  EXPECT_EQ(pod["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
  const YAML::Node c = Container()["securityContext"];
  EXPECT_TRUE(c["runAsNonRoot"].as<bool>());
  EXPECT_GT(c["runAsUser"].as<int>(), 0);
  EXPECT_TRUE(c["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(c["allowPrivilegeEscalation"].as<bool>());
  EXPECT_EQ(Strings(c["capabilities"]["drop"]), std::set<std::string>{"ALL"});
  EXPECT_FALSE(c["capabilities"]["add"].IsDefined());
  EXPECT_EQ(c["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
}

TEST_F(KustomizeTest, UserMatchesTheImage) {
  // The Dockerfile's USER 65532:65532.
  EXPECT_EQ(Container()["securityContext"]["runAsUser"].as<int>(), 65532);
}

TEST_F(KustomizeTest, ResourcesHaveRequestsAndLimits) {
  const YAML::Node resources = Container()["resources"];
  for (const char* kind : {"requests", "limits"}) {
    EXPECT_TRUE(resources[kind]["cpu"].IsDefined()) << kind;
    EXPECT_TRUE(resources[kind]["memory"].IsDefined()) << kind;
  }
}

TEST_F(KustomizeTest, ListensOnAllInterfacesOfThePod) {
  const std::set<std::string> args = Strings(Container()["args"]);
  EXPECT_THAT(args, Contains("--listen=0.0.0.0:50051"));
  EXPECT_THAT(args, Contains("--metrics-listen=0.0.0.0:9464"));
}

TEST_F(KustomizeTest, ClusterProfileIsMountedAsADirectoryAndServed) {
  // kustomize keeps the name as written only with disableNameSuffixHash.
  const YAML::Node config_map = Object("ConfigMap/compatd-cluster");
  ASSERT_TRUE(config_map["data"]["profile.yaml"].IsDefined());
  std::string volume_name;
  for (const YAML::Node& volume : PodSpec()["volumes"]) {
    const YAML::Node config = volume["configMap"];
    if (config && config["name"].as<std::string>() == "compatd-cluster") {
      volume_name = volume["name"].as<std::string>();
      EXPECT_FALSE(volume["configMap"]["items"].IsDefined());
    }
  }
  ASSERT_FALSE(volume_name.empty()) << "no volume of the profile ConfigMap";
  std::string mount_path;
  for (const YAML::Node& mount : Container()["volumeMounts"]) {
    if (mount["name"].as<std::string>() != volume_name) continue;
    EXPECT_FALSE(mount["subPath"].IsDefined())
        << "a subPath mount never sees ConfigMap updates";
    mount_path = mount["mountPath"].as<std::string>();
  }
  ASSERT_FALSE(mount_path.empty());
  const std::set<std::string> args = Strings(Container()["args"]);
  EXPECT_THAT(args, Contains("--cluster=" + mount_path + "/profile.yaml"));
  // Every embedded line is served: no --catalog replaces them.
  for (const std::string& arg : args) {
    EXPECT_FALSE(absl::StartsWith(arg, "--catalog")) << arg;
  }
}

// The shipped profile is one compatd reads and a server starts with (its
// flags are ones kube-apiserver 1.35 accepts, its target a line served).
TEST_F(KustomizeTest, ShippedClusterProfileIsValid) {
  int code = 0;
  const std::string profile =
      std::string(COMPATD_SOURCE_DIR) + "/k8s/cluster/profile.yaml";
  std::string out = RunShell(
      std::string(COMPATD_BINARY) + " cluster show " + profile + " 2>&1",
      &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("1.35.2"));
  EXPECT_THAT(out, HasSubstr("1.36"));
  out = RunShell(std::string(COMPATD_BINARY) +
                     " plan --from-manifest=" + profile + " 2>&1",
                 &code);
  EXPECT_NE(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("1.36"));
}

TEST_F(KustomizeTest, TmpIsTheOnlyWritableVolume) {
  for (const YAML::Node& mount : Container()["volumeMounts"]) {
    const bool read_only =
        mount["readOnly"].IsDefined() && mount["readOnly"].as<bool>();
    if (!read_only) {
      EXPECT_EQ(mount["mountPath"].as<std::string>(), "/tmp");
    }
  }
}

TEST_F(KustomizeTest, ServicesAndHeadlessServiceSelectThePods) {
  const YAML::Node labels =
      Object("Deployment/compatd")["spec"]["template"]["metadata"]["labels"];
  for (const char* name : {"Service/compatd", "Service/compatd-headless"}) {
    const YAML::Node service = Object(name);
    for (const auto& kv : service["spec"]["selector"]) {
      EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(),
                kv.second.as<std::string>())
          << name;
    }
    bool grpc = false;
    for (const YAML::Node& port : service["spec"]["ports"]) {
      grpc |= port["port"].as<int>() == 50051;
    }
    EXPECT_TRUE(grpc) << name;
  }
  EXPECT_EQ(
      Object("Service/compatd-headless")["spec"]["clusterIP"].as<std::string>(),
      "None");
}

TEST_F(KustomizeTest, DisruptionBudgetAndAutoscalerTargetTheDeployment) {
  const YAML::Node labels =
      Object("Deployment/compatd")["spec"]["template"]["metadata"]["labels"];
  for (const auto& kv : Object(
           "PodDisruptionBudget/compatd")["spec"]["selector"]["matchLabels"]) {
    EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(),
              kv.second.as<std::string>());
  }
  const YAML::Node hpa = Object("HorizontalPodAutoscaler/compatd")["spec"];
  EXPECT_EQ(hpa["scaleTargetRef"]["kind"].as<std::string>(), "Deployment");
  EXPECT_EQ(hpa["scaleTargetRef"]["name"].as<std::string>(), "compatd");
  EXPECT_EQ(hpa["metrics"][0]["resource"]["name"].as<std::string>(), "cpu");
}

TEST_F(KustomizeTest, NetworkPolicyAdmitsOnlyTheTwoPorts) {
  const YAML::Node spec = Object("NetworkPolicy/compatd")["spec"];
  std::set<int> ports;
  for (const YAML::Node& rule : spec["ingress"]) {
    for (const YAML::Node& port : rule["ports"])
      ports.insert(port["port"].as<int>());
  }
  EXPECT_EQ(ports, (std::set<int>{50051, 9464}));
  EXPECT_THAT(Strings(spec["policyTypes"]), Contains("Egress"));
  // Egress: only the cluster DNS and Prometheus' HTTP API (--prometheus-url).
  std::set<std::string> egress;
  for (const YAML::Node& rule : spec["egress"]) {
    for (const YAML::Node& to : rule["to"]) {
      for (const YAML::Node& port : rule["ports"]) {
        egress.insert(absl::StrCat(to["namespaceSelector"]["matchLabels"]
                                     ["kubernetes.io/metadata.name"]
                                         .as<std::string>(),
                                   "/", port["protocol"].as<std::string>(), "/",
                                   port["port"].as<int>()));
      }
    }
  }
  EXPECT_EQ(egress,
            (std::set<std::string>{"kube-system/UDP/53", "kube-system/TCP/53",
                                   "monitoring/TCP/9090"}));
}

TEST_F(KustomizeTest, FleetViewAsksThePrometheusOfTheMonitoringNamespace) {
  const std::set<std::string> args = Strings(Container()["args"]);
  EXPECT_THAT(
      args,
      Contains(
          "--prometheus-url=http://prometheus-operated.monitoring.svc:9090"));
  EXPECT_THAT(args,
              Contains("--prometheus-selector=namespace=\"$(POD_NAMESPACE)"
                       "\",job=\"compatd\""));
  // $(POD_NAMESPACE) is the downward API's namespace.
  bool namespace_env = false;
  for (const YAML::Node& env : Container()["env"]) {
    namespace_env |=
        env["name"].as<std::string>() == "POD_NAMESPACE" &&
        env["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>() ==
            "metadata.namespace";
  }
  EXPECT_TRUE(namespace_env);
  // The selector's job is the name of the Service the ServiceMonitor
  // scrapes through (prometheus-operator's job label).
  EXPECT_EQ(Object("Service/compatd")["metadata"]["name"].as<std::string>(),
            "compatd");
}

TEST_F(KustomizeTest, ServiceMonitorScrapesTheMetricsPortOfTheService) {
  const YAML::Node spec = Object("ServiceMonitor/compatd")["spec"];
  EXPECT_EQ(spec["endpoints"][0]["port"].as<std::string>(), "metrics");
  EXPECT_EQ(spec["endpoints"][0]["path"].as<std::string>(), "/metrics");
  const YAML::Node service_labels =
      Object("Service/compatd")["metadata"]["labels"];
  const YAML::Node headless_labels =
      Object("Service/compatd-headless")["metadata"]["labels"];
  bool headless_matches = true;
  for (const auto& kv : spec["selector"]["matchLabels"]) {
    const std::string key = kv.first.as<std::string>();
    EXPECT_EQ(service_labels[key].as<std::string>(),
              kv.second.as<std::string>());
    headless_matches &=
        headless_labels[key].IsDefined() &&
        headless_labels[key].as<std::string>() == kv.second.as<std::string>();
  }
  EXPECT_FALSE(headless_matches) << "the headless Service would be scraped too";
}

TEST_F(KustomizeTest, PrometheusRuleIsTheMonitoringOne) {
  EXPECT_EQ(Object("PrometheusRule/compatd")["apiVersion"].as<std::string>(),
            "monitoring.coreos.com/v1");
  EXPECT_TRUE(Object("PrometheusRule/compatd")["spec"]["groups"].IsSequence());
  EXPECT_TRUE(
      Object("ConfigMap/compatd-grafana-dashboard")["data"]["compatd.json"]
          .IsDefined());
}

// examples/k8s-admission/: the base with the components of k8s/admission/
// (the webhook, the front door's certificate, Gatekeeper, Kyverno) in the
// namespace compatd-system.
class AdmissionKustomizeTest : public ::testing::Test {
 protected:
  static constexpr char kNamespace[] = "compatd-system";

  static void SetUpTestSuite() {
    int code = 0;
    RunShell("command -v kubectl >/dev/null 2>&1", &code);
    kubectl_missing_ = code != 0;
    if (kubectl_missing_) return;
    rendered_ = new std::string(RunShell(std::string("kubectl kustomize ") +
                                             COMPATD_SOURCE_DIR +
                                             "/examples/k8s-admission 2>&1",
                                         &code));
    render_code_ = code;
  }
  static void TearDownTestSuite() {
    delete rendered_;
    rendered_ = nullptr;
  }

  void SetUp() override {
    if (kubectl_missing_) {
      GTEST_SKIP() << "kubectl is not installed: cannot render "
                      "examples/k8s-admission/";
    }
    ASSERT_EQ(render_code_, 0) << *rendered_;
    try {
      for (const YAML::Node& doc : YAML::LoadAll(*rendered_)) {
        objects_[doc["kind"].as<std::string>() + "/" +
                 doc["metadata"]["name"].as<std::string>()] = doc;
      }
    } catch (const YAML::Exception& e) {
      FAIL() << "rendered YAML does not parse: " << e.what();
    }
  }

  YAML::Node Object(const std::string& key) {
    auto it = objects_.find(key);
    EXPECT_NE(it, objects_.end()) << key << " is not rendered";
    return it == objects_.end() ? YAML::Node() : it->second;
  }
  YAML::Node Container() {
    return Object(
        "Deployment/compatd")["spec"]["template"]["spec"]["containers"][0];
  }
  YAML::Node Webhook() {
    return Object("ValidatingWebhookConfiguration/compatd")["webhooks"][0];
  }

  static std::set<std::string> Strings(const YAML::Node& list) {
    std::set<std::string> out;
    for (const YAML::Node& item : list) out.insert(item.as<std::string>());
    return out;
  }

  static bool kubectl_missing_;
  static int render_code_;
  static std::string* rendered_;
  std::map<std::string, YAML::Node> objects_;
};

bool AdmissionKustomizeTest::kubectl_missing_ = false;
int AdmissionKustomizeTest::render_code_ = 0;
std::string* AdmissionKustomizeTest::rendered_ = nullptr;

TEST_F(AdmissionKustomizeTest, RendersTheBaseAndEveryComponent) {
  for (const char* key :
       {"Deployment/compatd", "Service/compatd", "NetworkPolicy/compatd",
        "ValidatingWebhookConfiguration/compatd", "Issuer/compatd-selfsigned",
        "Certificate/compatd-ca", "Issuer/compatd-ca",
        "Certificate/compatd-http-tls", "Provider/compatd",
        "ConstraintTemplate/k8scompatdservedapi",
        "K8sCompatdServedApi/compatd-served-apis",
        "ClusterPolicy/compatd-pod-level-resources"}) {
    EXPECT_TRUE(objects_.count(key)) << key;
  }
}

TEST_F(AdmissionKustomizeTest, WebhookIsSafeByDefault) {
  const YAML::Node webhook = Webhook();
  EXPECT_EQ(Strings(webhook["admissionReviewVersions"]),
            std::set<std::string>{"v1"});
  EXPECT_EQ(webhook["sideEffects"].as<std::string>(), "None");
  EXPECT_EQ(webhook["timeoutSeconds"].as<int>(), 2);
  EXPECT_EQ(webhook["failurePolicy"].as<std::string>(), "Ignore");
  bool spares_kube_system = false;
  for (const YAML::Node& e : webhook["namespaceSelector"]["matchExpressions"]) {
    spares_kube_system |=
        e["key"].as<std::string>() == "kubernetes.io/metadata.name" &&
        e["operator"].as<std::string>() == "NotIn" &&
        Strings(e["values"]).count("kube-system") == 1;
  }
  EXPECT_TRUE(spares_kube_system);
  EXPECT_EQ(Strings(webhook["rules"][0]["operations"]),
            (std::set<std::string>{"CREATE", "UPDATE"}));
}

TEST_F(AdmissionKustomizeTest, WebhookCallsTheFrontDoorWithAnInjectedCa) {
  const YAML::Node config = Object("ValidatingWebhookConfiguration/compatd");
  EXPECT_EQ(config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
                .as<std::string>(),
            std::string(kNamespace) + "/compatd-http-tls");
  const YAML::Node service = Webhook()["clientConfig"]["service"];
  EXPECT_EQ(service["name"].as<std::string>(), "compatd");
  EXPECT_EQ(service["namespace"].as<std::string>(), kNamespace);
  EXPECT_EQ(service["path"].as<std::string>(), "/admission/v1/validate/warn");
  EXPECT_EQ(service["port"].as<int>(), 8443);
}

// kube-apiserver's IsDNS1123Subdomain (apimachinery
// pkg/util/validation/validation.go): at most 253 characters matching
// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*.
bool IsDns1123Subdomain(const std::string& value) {
  if (value.empty() || value.size() > 253) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  size_t label_start = 0;
  for (size_t i = 0; i <= value.size(); ++i) {
    if (i == value.size() || value[i] == '.') {
      if (i == label_start || !alnum(value[label_start]) ||
          !alnum(value[i - 1])) {
        return false;
      }
      label_start = i + 1;
    } else if (!alnum(value[i]) && value[i] != '-') {
      return false;
    }
  }
  return true;
}

// apiserver pkg/util/webhook/validation.go, ValidateWebhookService's path
// rules: "" and "/" pass; "//" fails; otherwise a leading '/', then (one
// trailing '/' dropped) every '/'-separated segment non-empty and a DNS-1123
// subdomain. The errors as kube-apiserver words them.
std::vector<std::string> WebhookServicePathErrors(const std::string& path) {
  std::vector<std::string> errors;
  if (path.empty() || path == "/") return errors;
  if (path == "//") return {"segment[0] may not be empty"};
  if (path[0] != '/') errors.push_back("must start with a '/'");
  std::string rest = path.substr(1);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  size_t i = 0;
  size_t start = 0;
  while (true) {
    const size_t slash = rest.find('/', start);
    const std::string step = rest.substr(
        start, slash == std::string::npos ? std::string::npos : slash - start);
    if (step.empty()) {
      errors.push_back("segment[" + std::to_string(i) + "] may not be empty");
    } else if (!IsDns1123Subdomain(step)) {
      errors.push_back("segment[" + std::to_string(i) +
                       "]: a DNS-1123 subdomain must consist of lower case "
                       "alphanumeric characters, '-' or '.'");
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
    ++i;
  }
  return errors;
}

// ValidateWebhookURL: https, a host, no user information, no fragment, no
// query (the form Go's url.Parse splits).
std::vector<std::string> WebhookUrlErrors(const std::string& url) {
  std::vector<std::string> errors;
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || url.substr(0, scheme_end) != "https") {
    errors.push_back("'https' is the only allowed URL scheme");
  }
  const size_t host_start =
      scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const size_t host_end = url.find_first_of("/?#", host_start);
  const std::string authority = url.substr(
      host_start, host_end == std::string::npos ? std::string::npos
                                                : host_end - host_start);
  if (authority.find('@') != std::string::npos) {
    errors.push_back("user information is not permitted in the URL");
  }
  const std::string host = authority.substr(authority.find('@') + 1);
  if (host.empty()) errors.push_back("host must be specified");
  const size_t hash = url.find('#');
  if (hash != std::string::npos && hash + 1 < url.size()) {
    errors.push_back("fragments are not permitted in the URL");
  }
  const size_t question = url.find('?');
  if (question != std::string::npos &&
      question + 1 < (hash == std::string::npos ? url.size() : hash)) {
    errors.push_back("query parameters are not permitted in the URL");
  }
  return errors;
}

TEST(WebhookPathRulesTest, FollowKubeApiserver) {
  // The checks themselves: paths and URLs the rules above accept and
  // refuse.
  EXPECT_TRUE(WebhookServicePathErrors("/").empty());
  EXPECT_TRUE(WebhookServicePathErrors("").empty());
  EXPECT_TRUE(WebhookServicePathErrors("/foo").empty());
  EXPECT_TRUE(WebhookServicePathErrors("/foo/").empty());
  EXPECT_TRUE(
      WebhookServicePathErrors("/admission/v1/validate/enforce").empty());
  EXPECT_TRUE(
      WebhookServicePathErrors("/admission/v1/validate/warn/emulation-1.35")
          .empty());
  EXPECT_FALSE(WebhookServicePathErrors("//").empty());
  EXPECT_FALSE(WebhookServicePathErrors("foo").empty());
  EXPECT_FALSE(WebhookServicePathErrors("/foo//bar/").empty());
  EXPECT_FALSE(WebhookServicePathErrors("/foo\\bar/").empty());
  EXPECT_FALSE(
      WebhookServicePathErrors("/apis/foo.bar/v1alpha1/--bad").empty());
  EXPECT_FALSE(
      WebhookServicePathErrors("/admission/v1/validate?mode=enforce").empty());
  EXPECT_FALSE(
      WebhookServicePathErrors("/admission/v1/validate/emulationVersion=1.35")
          .empty());
  EXPECT_TRUE(WebhookUrlErrors("https://compatd.example:8443/admission/v1/"
                               "validate/enforce")
                  .empty());
  EXPECT_FALSE(WebhookUrlErrors(
                   "https://compatd.example/admission/v1/validate?mode=enforce")
                   .empty());
  EXPECT_FALSE(WebhookUrlErrors("http://compatd.example/").empty());
  EXPECT_FALSE(WebhookUrlErrors("https://user@compatd.example/").empty());
  EXPECT_FALSE(WebhookUrlErrors("https://compatd.example/#frag").empty());
  EXPECT_FALSE(WebhookUrlErrors("https:///path").empty());
}

TEST_F(AdmissionKustomizeTest, EveryWebhookPathPassesKubeApiserversRules) {
  int webhooks = 0;
  for (const auto& [key, object] : objects_) {
    const std::string kind = object["kind"].as<std::string>();
    if (kind != "ValidatingWebhookConfiguration" &&
        kind != "MutatingWebhookConfiguration") {
      continue;
    }
    for (const YAML::Node& webhook : object["webhooks"]) {
      ++webhooks;
      const YAML::Node client = webhook["clientConfig"];
      const std::string name = webhook["name"].as<std::string>();
      if (client["url"].IsDefined()) {
        const std::string url = client["url"].as<std::string>();
        EXPECT_THAT(WebhookUrlErrors(url), ::testing::IsEmpty())
            << key << " " << name << " url " << url;
        EXPECT_NE(url.find("/admission/v1/validate"), std::string::npos) << url;
      } else {
        ASSERT_TRUE(client["service"].IsDefined()) << key << " " << name;
        const std::string path = client["service"]["path"].as<std::string>();
        EXPECT_THAT(WebhookServicePathErrors(path), ::testing::IsEmpty())
            << key << " " << name << " service.path " << path;
        EXPECT_EQ(path.rfind("/admission/v1/validate", 0), 0u) << path;
      }
    }
  }
  EXPECT_GE(webhooks, 1);
}

TEST_F(AdmissionKustomizeTest, CertificateNamesTheServiceInItsNamespace) {
  const YAML::Node spec = Object("Certificate/compatd-http-tls")["spec"];
  EXPECT_EQ(Strings(spec["dnsNames"]),
            (std::set<std::string>{
                std::string("compatd.") + kNamespace + ".svc",
                std::string("compatd.") + kNamespace + ".svc.cluster.local"}));
  EXPECT_EQ(spec["secretName"].as<std::string>(), "compatd-http-tls");
  EXPECT_EQ(spec["issuerRef"]["name"].as<std::string>(), "compatd-ca");
  EXPECT_TRUE(Object("Certificate/compatd-ca")["spec"]["isCA"].as<bool>());
  EXPECT_EQ(
      Object("Issuer/compatd-ca")["spec"]["ca"]["secretName"].as<std::string>(),
      "compatd-ca");
}

TEST_F(AdmissionKustomizeTest, ContainerServesTheFrontDoorWithTheCertificate) {
  const std::set<std::string> args = Strings(Container()["args"]);
  EXPECT_THAT(args, Contains("--http-listen=0.0.0.0:8443"));
  EXPECT_THAT(args, Contains("--http-tls-cert=/etc/compatd/http-tls/tls.crt"));
  EXPECT_THAT(args, Contains("--http-tls-key=/etc/compatd/http-tls/tls.key"));
  // The base's flags are still there.
  EXPECT_THAT(args, Contains("--listen=0.0.0.0:50051"));
  bool port = false;
  for (const YAML::Node& p : Container()["ports"]) {
    port |= p["name"].as<std::string>() == "https" &&
            p["containerPort"].as<int>() == 8443;
  }
  EXPECT_TRUE(port);
  std::string volume;
  for (const YAML::Node& v :
       Object("Deployment/compatd")["spec"]["template"]["spec"]["volumes"]) {
    if (v["secret"] &&
        v["secret"]["secretName"].as<std::string>() == "compatd-http-tls") {
      volume = v["name"].as<std::string>();
    }
  }
  ASSERT_FALSE(volume.empty());
  bool mounted = false;
  for (const YAML::Node& m : Container()["volumeMounts"]) {
    if (m["name"].as<std::string>() != volume) continue;
    mounted = m["mountPath"].as<std::string>() == "/etc/compatd/http-tls" &&
              m["readOnly"].as<bool>();
    EXPECT_FALSE(m["subPath"].IsDefined()) << "renewals would never arrive";
  }
  EXPECT_TRUE(mounted);
}

TEST_F(AdmissionKustomizeTest, ServiceAndNetworkPolicyOpen8443) {
  bool https = false;
  for (const YAML::Node& p : Object("Service/compatd")["spec"]["ports"]) {
    https |= p["port"].as<int>() == 8443 &&
             p["targetPort"].as<std::string>() == "https";
  }
  EXPECT_TRUE(https);
  std::set<int> ports;
  for (const YAML::Node& rule :
       Object("NetworkPolicy/compatd")["spec"]["ingress"]) {
    for (const YAML::Node& port : rule["ports"])
      ports.insert(port["port"].as<int>());
  }
  EXPECT_EQ(ports, (std::set<int>{50051, 9464, 8443}));
}

TEST_F(AdmissionKustomizeTest, GatekeeperProviderAndPolicy) {
  const YAML::Node provider = Object("Provider/compatd");
  EXPECT_EQ(provider["apiVersion"].as<std::string>(),
            "externaldata.gatekeeper.sh/v1beta1");
  EXPECT_EQ(
      provider["spec"]["url"].as<std::string>(),
      std::string("https://compatd.") + kNamespace + ".svc:8443/gatekeeper/v1");
  EXPECT_FALSE(provider["spec"]["caBundle"].as<std::string>().empty());
  EXPECT_GT(provider["spec"]["timeout"].as<int>(), 0);
  const YAML::Node tmpl = Object("ConstraintTemplate/k8scompatdservedapi");
  EXPECT_EQ(tmpl["spec"]["crd"]["spec"]["names"]["kind"].as<std::string>(),
            "K8sCompatdServedApi");
  const std::string rego = tmpl["spec"]["targets"][0]["rego"].as<std::string>();
  EXPECT_THAT(rego, HasSubstr(R"(external_data({"provider": "compatd")"));
  EXPECT_THAT(rego, HasSubstr(R"("notServed")"));
  EXPECT_EQ(
      Object("K8sCompatdServedApi/compatd-served-apis")["spec"]
                                                       ["enforcementAction"]
                                                           .as<std::string>(),
      "deny");
}

TEST_F(AdmissionKustomizeTest, KyvernoPolicyCallsGetFeatureAndReadsEnabled) {
  const YAML::Node rule =
      Object("ClusterPolicy/compatd-pod-level-resources")["spec"]["rules"][0];
  const YAML::Node call = rule["context"][0]["apiCall"];
  EXPECT_EQ(call["method"].as<std::string>(), "GET");
  EXPECT_EQ(call["service"]["url"].as<std::string>(),
            std::string("https://compatd.") + kNamespace +
                ".svc:8443/v1/GetFeature?name=PodLevelResources");
  EXPECT_FALSE(call["service"]["caBundle"].as<std::string>().empty());
  EXPECT_EQ(call["jmesPath"].as<std::string>(), "enabled");
  // The gate it asks about is one compatd knows.
  int code = 0;
  const std::string out = RunShell(
      std::string(COMPATD_BINARY) +
          " eval --rpc=GetFeature --request='{\"name\":\"PodLevelResources\"}'"
          " 2>&1",
      &code);
  EXPECT_EQ(code, 0) << out;
}

}  // namespace
}  // namespace compatd
