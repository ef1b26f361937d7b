// Static checks of k8s/audit/ against what kube-apiserver accepts and what
// compatd reads (k8s.io/apiserver pkg/apis/audit/v1 and its validation at
// v0.36.3): the policy is an audit.k8s.io/v1 Policy whose rules are valid
// levels and never log bodies (no Request or RequestResponse level), omits
// the RequestReceived stage (compatd counts a request once, at completion)
// and ends at Metadata for every other request; nonResourceURLs rules have
// '*' only as the final step; the webhook kubeconfig names
// https://.../audit/v1/events; the kubeadm fragment passes both files.

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace compatd {
namespace {

YAML::Node Load(const std::string& name) {
  return YAML::LoadFile(std::string(COMPATD_SOURCE_DIR) + "/k8s/audit/" + name);
}

TEST(AuditConfigTest, PolicyLogsMetadataOnlyOncePerRequest) {
  const YAML::Node policy = Load("policy.yaml");
  EXPECT_EQ(policy["apiVersion"].as<std::string>(), "audit.k8s.io/v1");
  EXPECT_EQ(policy["kind"].as<std::string>(), "Policy");
  std::set<std::string> omitted;
  for (const YAML::Node& stage : policy["omitStages"]) {
    omitted.insert(stage.as<std::string>());
  }
  EXPECT_TRUE(omitted.contains("RequestReceived"));
  const YAML::Node rules = policy["rules"];
  ASSERT_TRUE(rules.IsSequence());
  ASSERT_GE(rules.size(), 1u);
  for (const YAML::Node& rule : rules) {
    const std::string level = rule["level"].as<std::string>();
    EXPECT_TRUE(level == "None" || level == "Metadata") << level;
    for (const YAML::Node& url : rule["nonResourceURLs"]) {
      const std::string path = url.as<std::string>();
      EXPECT_TRUE(absl::StartsWith(path, "/")) << path;
      const size_t star = path.find('*');
      EXPECT_TRUE(star == std::string::npos || star == path.size() - 1) << path;
    }
    // A rule is for resources or for non-resource URLs, never both.
    EXPECT_FALSE(rule["resources"] && rule["nonResourceURLs"]);
  }
  // The catch-all: every other request at Metadata.
  const YAML::Node last = rules[rules.size() - 1];
  EXPECT_EQ(last["level"].as<std::string>(), "Metadata");
  EXPECT_FALSE(last["resources"] || last["nonResourceURLs"] || last["verbs"] ||
               last["users"] || last["userGroups"] || last["namespaces"]);
}

TEST(AuditConfigTest, WebhookKubeconfigPostsToTheAuditRoute) {
  const YAML::Node config = Load("webhook-kubeconfig.yaml");
  EXPECT_EQ(config["kind"].as<std::string>(), "Config");
  const std::string server =
      config["clusters"][0]["cluster"]["server"].as<std::string>();
  EXPECT_TRUE(absl::StartsWith(server, "https://")) << server;
  EXPECT_TRUE(absl::EndsWith(server, "/audit/v1/events")) << server;
  EXPECT_TRUE(config["users"][0]["user"]["client-certificate"]);
  EXPECT_EQ(config["current-context"].as<std::string>(),
            config["contexts"][0]["name"].as<std::string>());
}

TEST(AuditConfigTest, KubeadmFragmentPassesBothFiles) {
  const YAML::Node fragment = Load("kubeadm-patch.yaml");
  EXPECT_EQ(fragment["apiVersion"].as<std::string>(), "kubeadm.k8s.io/v1beta4");
  std::set<std::string> args;
  for (const YAML::Node& arg : fragment["apiServer"]["extraArgs"]) {
    args.insert(arg["name"].as<std::string>() + "=" +
                arg["value"].as<std::string>());
  }
  EXPECT_TRUE(
      args.contains("audit-policy-file=/etc/kubernetes/compatd/policy.yaml"));
  EXPECT_TRUE(
      args.contains("audit-webhook-config-file=/etc/kubernetes/compatd/"
                    "webhook-kubeconfig.yaml"));
  EXPECT_EQ(
      fragment["apiServer"]["extraVolumes"][0]["mountPath"].as<std::string>(),
      "/etc/kubernetes/compatd");
}

}  // namespace
}  // namespace compatd
