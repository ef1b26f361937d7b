// Enablement and --runtime-config merging (engine/resource_config.h), through
// ListServedAPIs: apiserver pkg/server/resourceconfig/helpers_test.go and
// pkg/server/storage/resource_config_test.go
// (docs/kubernetes-rules.md#runtime-config-merging,
// docs/kubernetes-rules.md#emulation-forward-compatible).

#include "engine/resource_config.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/served_apis_testing.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using served_apis_testing::CoreAndApps;
using served_apis_testing::EV;
using served_apis_testing::Flags;
using served_apis_testing::Flatten;
using served_apis_testing::GV;
using served_apis_testing::List;
using served_apis_testing::MakeCatalog;
using served_apis_testing::Res;
using served_apis_testing::V;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---------------------------------------------------------------------------
// kubernetes/apiserver pkg/server/resourceconfig/helpers_test.go
// TestParseRuntimeConfig through the pipeline. Its fake default config also
// sets resource-level defaults for extensions/v1beta1, which a catalog cannot
// express, so the core and apps expectations are the ones carried over (apps
// gets the "other" resource the test checks).

struct ParseRuntimeConfigCase {
  const char* name;
  const char* runtime_config;
  std::vector<std::string> expected;  // served "group/version=resources"
  const char* error;
};

class ParseRuntimeConfigTest
    : public ::testing::TestWithParam<ParseRuntimeConfigCase> {};

TEST_P(ParseRuntimeConfigTest, MatchesHelpersTest) {
  const ParseRuntimeConfigCase& c = GetParam();
  auto served = List(CoreAndApps(), EV("1.33", "1.33"), {c.runtime_config});
  if (c.error != nullptr) {
    EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(c.error)));
    return;
  }
  ASSERT_OK(served);
  std::vector<std::string> core_and_apps;
  for (const std::string& s : Flatten(*served)) {
    if (s.rfind("extensions/", 0) != 0) core_and_apps.push_back(s);
  }
  EXPECT_EQ(core_and_apps, c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    HelpersTest, ParseRuntimeConfigTest,
    ::testing::Values(
        ParseRuntimeConfigCase{
            "using_kind",
            "apps/v1/Deployment=false",
            {},
            "group/version/resource and resource is always lowercase plural, "
            "not \"Deployment\""},
        ParseRuntimeConfigCase{"everything_default_value",
                               "",
                               {"/v1=pods", "apps/v1=deployments,other"},
                               nullptr},
        ParseRuntimeConfigCase{"version_enabled_by_runtime_config_override",
                               "apps/v1",
                               {"/v1=pods", "apps/v1=deployments,other"},
                               nullptr},
        ParseRuntimeConfigCase{
            "disable_v1", "/v1=false", {"apps/v1=deployments,other"}, nullptr},
        // MergeAPIResourceConfigs skips an unregistered group, but
        // APIEnablementOptions.Validate runs first and refuses it.
        ParseRuntimeConfigCase{"invalid_runtime_config",
                               "invalidgroup/version=false",
                               {},
                               "unknown api groups invalidgroup"},
        ParseRuntimeConfigCase{"enable_all",
                               "api/all=true",
                               {"/v1=pods", "apps/v1=deployments,other"},
                               nullptr},
        ParseRuntimeConfigCase{
            "only_enable_v1", "api/all=false,/v1=true", {"/v1=pods"}, nullptr},
        ParseRuntimeConfigCase{"disable_a_no_extensions_resources",
                               "apps/v1/deployments=false",
                               {"/v1=pods", "apps/v1=other"},
                               nullptr},
        ParseRuntimeConfigCase{"disable_all_beta_resources",
                               "api/beta=false",
                               {"/v1=pods", "apps/v1=deployments,other"},
                               nullptr},
        ParseRuntimeConfigCase{
            "user_explicit_disable_resource_over_user_version_enable",
            "apps/v1=true,apps/v1/deployments=false",
            {"/v1=pods", "apps/v1=other"},
            nullptr},
        ParseRuntimeConfigCase{
            "user_explicit_enable_resource_over_user_version_disable",
            "apps/v1=false,apps/v1/deployments=true",
            {"/v1=pods", "apps/v1=deployments"},
            nullptr},
        ParseRuntimeConfigCase{
            "user_explicit_disable_resource_over_user_stability_enable",
            "api/ga=true,apps/v1/deployments=false",
            {"/v1=pods", "apps/v1=other"},
            nullptr},
        ParseRuntimeConfigCase{
            "user_explicit_enable_resource_over_user_stability_disable",
            "api/ga=false,apps/v1/deployments=true",
            {"apps/v1=deployments"},
            nullptr},
        ParseRuntimeConfigCase{"user_explicit_disable_resource_over_user_"
                               "version_enable_over_user_stability_disable",
                               "api/ga=false,apps/v1=true,apps/v1/"
                               "deployments=false",
                               {"apps/v1=other"},
                               nullptr},
        ParseRuntimeConfigCase{"user_explicit_enable_resource_over_user_"
                               "version_disable_over_user_stability_disable",
                               "api/ga=false,apps/v1=false,apps/v1/"
                               "deployments=true",
                               {"apps/v1=deployments"},
                               nullptr},
        ParseRuntimeConfigCase{"user_explicit_disable_resource_over_user_"
                               "version_enable_over_user_stability_enable",
                               "api/ga=true,apps/v1=true,apps/v1/"
                               "deployments=false",
                               {"/v1=pods", "apps/v1=other"},
                               nullptr},
        ParseRuntimeConfigCase{"user_explicit_enable_resource_over_user_"
                               "version_disable_over_user_stability_enable",
                               "api/ga=true,apps/v1=false,apps/v1/"
                               "deployments=true",
                               {"/v1=pods", "apps/v1=deployments"},
                               nullptr}),
    [](const ::testing::TestParamInfo<ParseRuntimeConfigCase>& info) {
      return std::string(info.param.name);
    });

// helpers_test.go TestEmulationForwardCompatibleResourceConfig, every case.
// Group "test" has v2, v1, v2beta2, v2beta1, v2alpha1 (kube-aware order); the
// test's starting config enables one version or one resource; the catalog
// says the same with enabledByDefault and --runtime-config.

struct EFCCase {
  const char* name;
  const char* enabled_version;  // enabledByDefault: true; others false
  const char* runtime_config;
  std::vector<std::string> expected;
};

Catalog EFCCatalog(absl::string_view enabled_version) {
  Catalog c = MakeCatalog("1.34", {});
  for (const char* version : {"v2", "v1", "v2beta2", "v2beta1", "v2alpha1"}) {
    c.apis.push_back(GV("test", version, {Res("testtype1"), Res("testtype2")},
                        enabled_version == version));
  }
  return c;
}

class EmulationForwardCompatibleConfigTest
    : public ::testing::TestWithParam<EFCCase> {};

TEST_P(EmulationForwardCompatibleConfigTest, MatchesHelpersTest) {
  const EFCCase& c = GetParam();
  auto served = List(EFCCatalog(c.enabled_version), EV("1.34", "1.33"),
                     {c.runtime_config, true});
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    HelpersTest, EmulationForwardCompatibleConfigTest,
    ::testing::Values(
        EFCCase{"enabled_no_higher_priority",
                "v2",
                "",
                {"test/v2=testtype1,testtype2"}},
        EFCCase{"alpha_version",
                "v2alpha1",
                "",
                {"test/v2alpha1=testtype1,testtype2"}},
        EFCCase{"enabled_higher_priority_ga",
                "v1",
                "",
                {"test/v2=testtype1,testtype2", "test/v1=testtype1,testtype2"}},
        // v2beta2's default is an explicit false entry: compatd enables it
        // (KEP intent, docs/kubernetes-rules.md#emulation-forward-compatible).
        EFCCase{"enabled_higher_priority",
                "v2beta1",
                "",
                {"test/v2=testtype1,testtype2", "test/v1=testtype1,testtype2",
                 "test/v2beta2=testtype1,testtype2",
                 "test/v2beta1=testtype1,testtype2"}},
        EFCCase{"enabled_higher_priority_with_override",
                "v2beta1",
                "test/v2beta2=false",
                {"test/v2=testtype1,testtype2", "test/v1=testtype1,testtype2",
                 "test/v2beta1=testtype1,testtype2"}},
        EFCCase{"enabled_resource_no_higher_priority",
                "",
                "test/v2/testtype1=true",
                {"test/v2=testtype1"}},
        EFCCase{"alpha_resource",
                "",
                "test/v2alpha1/testtype1=true",
                {"test/v2alpha1=testtype1"}},
        EFCCase{"enabled_resource_higher_priority",
                "",
                "test/v2beta1/testtype1=true",
                {"test/v2=testtype1", "test/v1=testtype1",
                 "test/v2beta2=testtype1", "test/v2beta1=testtype1"}},
        EFCCase{"enabled_resource_higher_priority_with_override",
                "",
                "test/v2beta1/testtype1=true,test/v2beta2/testtype1=false",
                {"test/v2=testtype1", "test/v1=testtype1",
                 "test/v2beta1=testtype1"}}),
    [](const ::testing::TestParamInfo<EFCCase>& info) {
      return std::string(info.param.name);
    });

TEST(EmulationForwardCompatibleConfigTest, ReasonNamesTheLowerVersion) {
  auto served = List(EFCCatalog("v2beta1"), EV("1.34", "1.33"), {"", true});
  ASSERT_OK(served);
  ASSERT_FALSE(served->empty());
  EXPECT_EQ((*served)[0].version, "v2");
  EXPECT_THAT((*served)[0].reason,
              HasSubstr("--emulation-forward-compatible (lower-priority "
                        "test/v2beta1 is enabled)"));
}

// apiserver pkg/server/storage/resource_config_test.go TestDisabledResource:
// a resource-level preference wins over its version's.
TEST(ResourceConfigTest, ResourcePreferencesWinOverVersions) {
  const std::vector<APIResource> resources = {Res("unspecified"),
                                              Res("enabled"), Res("disabled")};
  const Catalog c = MakeCatalog("1.33", {GV("group1", "version1", resources),
                                         GV("group1", "version2", resources),
                                         GV("group2", "version1", resources)});
  auto served =
      List(c, EV("1.33", "1.33"),
           {"group1/version1=false,group1/version2=true,group2/version1=true,"
            "group1/version1/enabled=true,group1/version2/enabled=true,"
            "group2/version1/enabled=true,group1/version1/disabled=false,"
            "group1/version2/disabled=false,group2/version1/disabled=false"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served),
              ElementsAre("group1/version1=enabled",
                          "group1/version2=enabled,unspecified",
                          "group2/version1=enabled,unspecified"));
}

// ---------------------------------------------------------------------------
// Default enablement (DefaultAPIResourceConfigSource as the catalog states
// it) and the stability matchers.

TEST(DefaultEnablementTest, GAOnBetaAndAlphaOff) {
  const Catalog c = MakeCatalog("1.33", {GV("g.io", "v1", {Res("as")}),
                                         GV("g.io", "v1beta1", {Res("as")}),
                                         GV("g.io", "v1alpha1", {Res("as")})});
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("g.io/v1=as"));
  EXPECT_EQ((*served)[0].reason, "enabled by default (GA version)");
}

TEST(DefaultEnablementTest, CatalogEnabledByDefaultOverridesTheRule) {
  const Catalog c =
      MakeCatalog("1.33", {GV("g.io", "v1", {Res("as")}, false),
                           GV("g.io", "v1beta1", {Res("as")}, true)});
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("g.io/v1beta1=as"));
  EXPECT_THAT((*served)[0].reason, HasSubstr("catalog enabledByDefault"));
}

TEST(DefaultEnablementTest, ApiAlphaEnablesEveryAlphaVersion) {
  const Catalog c = MakeCatalog("1.33", {GV("a.io", "v1alpha1", {Res("xs")}),
                                         GV("b.io", "v2alpha3", {Res("ys")}),
                                         GV("b.io", "v1beta1", {Res("ys")})});
  auto served = List(c, EV("1.33", "1.33"), {"api/alpha=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served),
              ElementsAre("a.io/v1alpha1=xs", "b.io/v2alpha3=ys"));
  EXPECT_EQ((*served)[0].reason, "enabled by --runtime-config api/alpha=true");
}

}  // namespace
}  // namespace compatd::engine
