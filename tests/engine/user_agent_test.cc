#include "engine/user_agent.h"

#include <optional>
#include <string>
#include <vector>

#include "engine/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::engine {
namespace {

struct UserAgentCase {
  const char* name;
  std::string user_agent;
  const char* component;
  const char* version;
  std::optional<uint64_t> major;
  std::optional<uint64_t> minor;
  const char* commit;
  const char* suffix;
};

// Real shapes: client-go rest/config.go DefaultKubernetesUserAgent
// ("%s/%s (%s/%s) kubernetes/%s", TestBuildUserAgent's fixture) and
// rest.AddUserAgent suffixes as kube-controller-manager and kube-scheduler
// use them (cmd/kube-controller-manager/app: "/leader-election",
// "/system:serviceaccount:kube-system:<controller>"); the constructed
// examples of /work/shared/catalog-data/examples.json; gRPC C++ 1.51's
// user-agent ("<primary> grpc-c++/1.51.1 grpc-c/29.0.0 (linux; chttp2)").
const std::vector<UserAgentCase>& Cases() {
  static const auto* cases = new std::vector<UserAgentCase>{
      {"kubectl", "kubectl/v1.36.3 (darwin/arm64) kubernetes/0123abc",
       "kubectl", "v1.36.3", 1, 36, "0123abc", ""},
      {"kubelet", "kubelet/v1.31.0 (linux/amd64) kubernetes/9edcffc", "kubelet",
       "v1.31.0", 1, 31, "9edcffc", ""},
      {"kube-controller-manager leader election",
       "kube-controller-manager/v1.36.3 (linux/amd64) "
       "kubernetes/0123abc/leader-election",
       "kube-controller-manager", "v1.36.3", 1, 36, "0123abc",
       "leader-election"},
      {"controller service account suffix",
       "kube-controller-manager/v1.30.2 (linux/amd64) kubernetes/3968350/"
       "system:serviceaccount:kube-system:generic-garbage-collector",
       "kube-controller-manager", "v1.30.2", 1, 30, "3968350",
       "system:serviceaccount:kube-system:generic-garbage-collector"},
      {"scheduler", "kube-scheduler/v1.36.3 (linux/amd64) kubernetes/0123abc",
       "kube-scheduler", "v1.36.3", 1, 36, "0123abc", ""},
      {"client-go test fixture",
       "lynx/nicest (beos/itanium) kubernetes/baaaaaaaaad", "lynx", "nicest",
       std::nullopt, std::nullopt, "baaaaaaaaad", ""},
      {"custom controller built without version ldflags",
       "my-operator/v0.0.0 (linux/amd64) kubernetes/$Format", "my-operator",
       "v0.0.0", std::nullopt, std::nullopt, "$Format", ""},
      {"empty version and commit become unknown",
       "kube-proxy/unknown (linux/amd64) kubernetes/unknown", "kube-proxy",
       "unknown", std::nullopt, std::nullopt, "unknown", ""},
      {"build metadata kept",
       "kubelet/v1.33.1+k3s1 (linux/arm64) kubernetes/abc", "kubelet",
       "v1.33.1+k3s1", 1, 33, "abc", ""},
      {"windows binary", "kubectl.exe/v1.35.0 (windows/amd64) kubernetes/66452",
       "kubectl", "v1.35.0", 1, 35, "66452", ""},
      {"grpc c++ appends its tokens",
       "kubelet/v1.31.0 (linux/amd64) kubernetes/abc grpc-c++/1.51.1 "
       "grpc-c/29.0.0 (linux; chttp2)",
       "kubelet", "v1.31.0", 1, 31, "abc", ""},
      {"grpc tokens before",
       "grpc-go/1.60.1 kubectl/v1.34.2 (linux/amd64) "
       "kubernetes/abc",
       "kubectl", "v1.34.2", 1, 34, "abc", ""},
      {"kubernetes form wins over an earlier product",
       "my-wrapper/2.0 kube-scheduler/v1.36.0 (linux/amd64) kubernetes/abc",
       "kube-scheduler", "v1.36.0", 1, 36, "abc", ""},
      {"no platform comment", "kubelet/v1.32.4 kubernetes/abc", "kubelet",
       "v1.32.4", 1, 32, "abc", ""},
      {"plain product without kubernetes token", "grpcurl/1.8.7 grpc-go/1.57.0",
       "grpcurl", "1.8.7", std::nullopt, std::nullopt, "", ""},
      {"kube-probe has no v", "kube-probe/1.31", "kube-probe", "1.31",
       std::nullopt, std::nullopt, "", ""},
      {"only grpc tokens", "grpc-c++/1.51.1 grpc-c/29.0.0 (linux; chttp2)",
       "unknown", "unknown", std::nullopt, std::nullopt, "", ""},
      {"empty", "", "unknown", "unknown", std::nullopt, std::nullopt, "", ""},
      {"garbage", "@@@ ### /// (((", "unknown", "unknown", std::nullopt,
       std::nullopt, "", ""},
      {"unbalanced comment swallows the rest", "(linux/amd64 kubelet/v1.31.0",
       "unknown", "unknown", std::nullopt, std::nullopt, "", ""},
      {"control characters", "kube\x01let/v1.31.0", "unknown", "unknown",
       std::nullopt, std::nullopt, "", ""},
      {"non-ascii version", "kubelet/v1.31\xc3\xa9 (linux/amd64) kubernetes/a",
       "unknown", "unknown", std::nullopt, std::nullopt, "", ""},
      {"pre-release already stripped by client-go but tolerated",
       "kubectl/v1.37.0-alpha.1 (linux/amd64) kubernetes/abc", "kubectl",
       "v1.37.0-alpha.1", 1, 37, "abc", ""},
      {"major minor only", "kubectl/v1.36 (linux/amd64) kubernetes/abc",
       "kubectl", "v1.36", 1, 36, "abc", ""},
      {"huge component is not used",
       std::string(300, 'k') + "/v1.31.0 (linux/amd64) kubernetes/abc",
       "unknown", "unknown", std::nullopt, std::nullopt, "", ""},
      {"token past the first 1024 bytes is not read",
       std::string(1100, ' ') + "kubelet/v1.31.0", "unknown", "unknown",
       std::nullopt, std::nullopt, "", ""},
  };
  return *cases;
}

TEST(ParseUserAgentTest, Table) {
  for (const UserAgentCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const ClientIdentity identity = ParseUserAgent(c.user_agent);
    EXPECT_EQ(identity.component, c.component);
    EXPECT_EQ(identity.version, c.version);
    EXPECT_EQ(identity.major, c.major);
    EXPECT_EQ(identity.minor, c.minor);
    EXPECT_EQ(identity.commit, c.commit);
    EXPECT_EQ(identity.suffix, c.suffix);
    EXPECT_EQ(identity.source, std::string(c.component) == "unknown"
                                   ? ClientIdentity::Source::kNone
                                   : ClientIdentity::Source::kUserAgent);
  }
}

TEST(ParseUserAgentTest, HugeInputIsBoundedAndSafe) {
  std::string huge = "kubelet/v1.31.0 (linux/amd64) kubernetes/abc ";
  huge.append(1 << 20, 'x');
  const ClientIdentity identity = ParseUserAgent(huge);
  EXPECT_EQ(identity.component, "kubelet");
  EXPECT_EQ(identity.minor, 31u);
}

TEST(ParseUserAgentTest, VersionOverflowHasNoMajorMinor) {
  const ClientIdentity identity =
      ParseUserAgent("kubelet/v1.99999999999999999999999 kubernetes/a");
  EXPECT_EQ(identity.component, "kubelet");
  EXPECT_FALSE(identity.has_major_minor());
}

// The allocation-free major/minor reading agrees with Version::ParseGeneric
// (apimachinery's generic rule) on every metadata version form.
TEST(IdentifyClientTest, MajorMinorAgreesWithVersionParseGeneric) {
  for (const char* version :
       {"1.31", "v1.31.2", "1.31.2-alpha.1+build", "v1.2a.3", "1.02.3", "01.2",
        "1", "v", "1.", "1.x", "v1.31.0.0", "99999999999999999999.1",
        "1.99999999999999999999", "v0.0.0", "0.1", "v2.0"}) {
    SCOPED_TRACE(version);
    const ClientIdentity identity = IdentifyClient("kubelet", version, "");
    absl::StatusOr<Version> parsed = Version::ParseGeneric(version);
    if (!parsed.ok() || (parsed->major() == 0 && parsed->minor() == 0)) {
      EXPECT_FALSE(identity.has_major_minor());
    } else {
      ASSERT_TRUE(identity.has_major_minor());
      EXPECT_EQ(*identity.major, parsed->major());
      EXPECT_EQ(*identity.minor, parsed->minor());
    }
  }
}

TEST(IdentifyClientTest, MetadataWins) {
  const ClientIdentity identity =
      IdentifyClient("kube-scheduler", "v1.35.2",
                     "kubectl/v1.36.0 (linux/amd64) kubernetes/a");
  EXPECT_EQ(identity.source, ClientIdentity::Source::kMetadata);
  EXPECT_EQ(identity.component, "kube-scheduler");
  EXPECT_EQ(identity.version, "v1.35.2");
  EXPECT_EQ(identity.major, 1u);
  EXPECT_EQ(identity.minor, 35u);
}

TEST(IdentifyClientTest, MetadataVersionMayOmitV) {
  const ClientIdentity identity = IdentifyClient(" kubelet ", " 1.33 ", "");
  EXPECT_EQ(identity.component, "kubelet");
  EXPECT_EQ(identity.version, "1.33");
  EXPECT_EQ(identity.minor, 33u);
}

TEST(IdentifyClientTest, MetadataComponentTakesVersionFromMatchingAgent) {
  const ClientIdentity identity = IdentifyClient(
      "kubelet", "", "kubelet/v1.34.1 (linux/amd64) kubernetes/abc");
  EXPECT_EQ(identity.component, "kubelet");
  EXPECT_EQ(identity.version, "v1.34.1");
  EXPECT_EQ(identity.minor, 34u);
  EXPECT_EQ(identity.commit, "abc");
}

TEST(IdentifyClientTest, MetadataComponentIgnoresAnotherAgentsVersion) {
  const ClientIdentity identity = IdentifyClient(
      "kubelet", "", "kubectl/v1.34.1 (linux/amd64) kubernetes/abc");
  EXPECT_EQ(identity.component, "kubelet");
  EXPECT_EQ(identity.version, "unknown");
  EXPECT_FALSE(identity.has_major_minor());
}

TEST(IdentifyClientTest, MetadataVersionTakesComponentFromAgent) {
  const ClientIdentity identity = IdentifyClient(
      "", "1.30", "kube-proxy/v1.29.0 (linux/amd64) kubernetes/abc");
  EXPECT_EQ(identity.component, "kube-proxy");
  EXPECT_EQ(identity.version, "1.30");
  EXPECT_EQ(identity.minor, 30u);
}

TEST(IdentifyClientTest, InvalidMetadataFallsBackToAgent) {
  const std::string long_version(300, '1');
  const ClientIdentity identity =
      IdentifyClient("bad component", long_version,
                     "kubectl/v1.36.0 (linux/amd64) kubernetes/a");
  EXPECT_EQ(identity.source, ClientIdentity::Source::kUserAgent);
  EXPECT_EQ(identity.component, "kubectl");
  EXPECT_EQ(identity.minor, 36u);
}

TEST(IdentifyClientTest, NothingGivesUnknown) {
  const ClientIdentity identity = IdentifyClient("", "", "");
  EXPECT_EQ(identity.source, ClientIdentity::Source::kNone);
  EXPECT_EQ(identity.component, "unknown");
  EXPECT_EQ(identity.version, "unknown");
  EXPECT_FALSE(identity.has_major_minor());
}

TEST(IdentifyClientTest, GarbageMetadataVersionHasNoMajorMinor) {
  const ClientIdentity identity = IdentifyClient("kubelet", "latest", "");
  EXPECT_EQ(identity.version, "latest");
  EXPECT_FALSE(identity.has_major_minor());
}

}  // namespace
}  // namespace compatd::engine
