// cluster::ToClusterSettings: a profile as the defaults of every request,
// each value keeping its origin, and the flags kube-apiserver refuses at
// start-up refused here (component-base featuregate's Set: "NAME=BOOL",
// strconv.ParseBool for the forward-compatible flags).

#include "cluster/cluster_settings.h"

#include <string>

#include "cluster/profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

ClusterProfile Profile(const std::string& text) {
  absl::StatusOr<ClusterProfile> p =
      ReadClusterProfile(text, "profile.yaml", {});
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : ClusterProfile{};
}

TEST(ToClusterSettingsTest, KeepsEveryValueWithItsOrigin) {
  absl::StatusOr<engine::ClusterSettings> s = ToClusterSettings(
      Profile("binaryVersion: \"1.35.2\"\n"
              "emulationVersion: \"1.34\"\n"
              "minCompatibilityVersion: \"1.33\"\n"
              "featureGates: \"WatchList=false,AllAlpha=true\"\n"
              "runtimeConfig: \"resource.k8s.io/v1beta2=true,api/all=true\"\n"
              "emulationForwardCompatible: true\n"
              "upgradeTarget: \"1.36\"\n"));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->binary.has_value());
  EXPECT_EQ(s->binary->ToString(), "1.35.2");
  EXPECT_EQ(s->source, "profile.yaml");
  EXPECT_THAT(s->binary_origin, HasSubstr("profile.yaml:1"));
  EXPECT_EQ(s->emulation_version, "1.34");
  EXPECT_THAT(s->emulation_origin, HasSubstr("profile.yaml:2"));
  EXPECT_EQ(s->min_compatibility_version, "1.33");
  EXPECT_THAT(s->min_compatibility_origin, HasSubstr("profile.yaml:3"));
  // Sorted by name, as kube-apiserver's flag keeps them (a Go map).
  EXPECT_THAT(s->feature_gates,
              ElementsAre(Pair("AllAlpha", true), Pair("WatchList", false)));
  EXPECT_THAT(s->feature_gates_origin, HasSubstr("profile.yaml:4"));
  // Sorted, as the catalog loader keeps a cluster section's runtimeConfig.
  EXPECT_THAT(s->runtime_config,
              ElementsAre(Pair("api/all", "true"),
                          Pair("resource.k8s.io/v1beta2", "true")));
  EXPECT_EQ(s->emulation_forward_compatible, std::optional<bool>(true));
  EXPECT_EQ(s->runtime_config_emulation_forward_compatible,
            std::optional<bool>());
  ASSERT_TRUE(s->upgrade_target.has_value());
  EXPECT_EQ(s->upgrade_target->binary_version, "1.36");
}

TEST(ToClusterSettingsTest, ValuesNotGivenHaveNoOrigin) {
  absl::StatusOr<engine::ClusterSettings> s =
      ToClusterSettings(Profile("binaryVersion: \"1.34\"\n"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->binary->ToString(), "1.34");
  EXPECT_THAT(s->emulation_origin, IsEmpty());
  EXPECT_THAT(s->min_compatibility_origin, IsEmpty());
  EXPECT_THAT(s->feature_gates_origin, IsEmpty());
  EXPECT_THAT(s->feature_gates, IsEmpty());
  EXPECT_FALSE(s->upgrade_target.has_value());
}

TEST(ToClusterSettingsTest, TheFlagsAlone) {
  absl::StatusOr<ClusterProfile> p = ProfileFromFlags(
      {.binary_version = "1.35.4", .upgrade_target = "1.36.1"});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<engine::ClusterSettings> s = ToClusterSettings(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->binary->ToString(), "1.35.4");
  ASSERT_TRUE(s->upgrade_target.has_value());
  EXPECT_EQ(s->upgrade_target->binary_version, "1.36.1");
}

// kube-apiserver exits at start-up on a --feature-gates value featuregate's
// Set cannot parse ("missing bool value for WatchList"): no cluster runs with
// it, so it cannot be the defaults of anything.
TEST(ToClusterSettingsTest, RefusesGatesKubeApiserverCannotParse) {
  ClusterProfile profile;
  profile.source = "kube-apiserver.yaml";
  profile.current.binary_version = {"1.35.2", "kube-apiserver.yaml:20 (image)"};
  profile.current.feature_gates = {
      "WatchList", "kube-apiserver.yaml:16 (spec.containers[0].command[4])"};
  absl::StatusOr<engine::ClusterSettings> s = ToClusterSettings(profile);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(),
              HasSubstr("kube-apiserver.yaml:16 "
                        "(spec.containers[0].command[4]): kube-apiserver "
                        "refuses --feature-gates=\"WatchList\""));
  EXPECT_THAT(s.status().message(), HasSubstr("accepted: NAME=true|false"));
}

TEST(ToClusterSettingsTest, RefusesAForwardCompatibleFlagThatIsNoBool) {
  ClusterProfile profile;
  profile.source = "kube-apiserver.yaml";
  profile.current.binary_version = {"1.35", "kube-apiserver.yaml:20 (image)"};
  profile.current.emulation_forward_compatible = {
      "yes", "kube-apiserver.yaml:17 (--emulation-forward-compatible)"};
  absl::StatusOr<engine::ClusterSettings> s = ToClusterSettings(profile);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(),
              HasSubstr("kube-apiserver.yaml:17 "
                        "(--emulation-forward-compatible): \"yes\""));
  EXPECT_THAT(s.status().message(), HasSubstr("accepted: true or false"));
}

TEST(ToClusterSettingsTest, RefusesABinaryThatIsNoVersion) {
  ClusterProfile profile;
  profile.source = "version.json";
  profile.current.binary_version = {"1.35.x", "version.json:1 (gitVersion)"};
  absl::StatusOr<engine::ClusterSettings> s = ToClusterSettings(profile);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(),
              HasSubstr("version.json:1 (gitVersion): binary version "
                        "\"1.35.x\""));
}

}  // namespace
}  // namespace compatd::cluster
