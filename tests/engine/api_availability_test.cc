// ListServedAPIs: kube-apiserver's start-up as a whole
// (docs/kubernetes-rules.md#api-availability): the KEP-4330 examples, start-up
// validation (apiserver pkg/server/options), the cluster section, output order
// and reasons. The steps have their own tests: resource_config_test,
// deleted_kinds_test, runtime_config_test.

#include "engine/api_availability.h"

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
// The KEP-4330 "API availability" examples (binary 1.33), every row, and the
// integration-test grid (KEP-4330, kubernetes/enhancements
// keps/sig-architecture/4330-compatibility-versions;
// docs/kubernetes-rules.md#api-availability,
// docs/kubernetes-rules.md#unintroduced-kinds). The KEP writes
// "api/<version>"; in kube-apiserver "api/..." is not a group, so the rows use
// a real group name.

constexpr absl::string_view kG = "example.k8s.io";

// v1alpha1: 1.30-1.31, v1beta1: 1.31-1.32, v1: 1.32.
Catalog KepAlphaBetaGA(absl::string_view binary = "1.33") {
  return MakeCatalog(
      binary,
      {GV(std::string(kG), "v1", {Res("widgets", "1.32")}),
       GV(std::string(kG), "v1beta1", {Res("widgets", "1.31", "1.32")}),
       GV(std::string(kG), "v1alpha1", {Res("widgets", "1.30", "1.31")})});
}

// v1beta1: 1.31-1.32, v1beta2: 1.32.
Catalog KepBetaBeta() {
  return MakeCatalog(
      "1.33",
      {GV(std::string(kG), "v1beta2", {Res("widgets", "1.32")}),
       GV(std::string(kG), "v1beta1", {Res("widgets", "1.31", "1.32")})});
}

// v1: 1.28, v2beta1: 1.31-1.32, v2: 1.32 (shift moves every version by
// `shift` minors).
Catalog KepGAToGA(int shift = 0, absl::string_view binary = "1.33") {
  auto m = [shift](int minor) { return absl::StrCat("1.", minor + shift); };
  return MakeCatalog(
      binary, {GV(std::string(kG), "v2", {Res("widgets", m(32))}),
               GV(std::string(kG), "v1", {Res("widgets", m(28))}),
               GV(std::string(kG), "v2beta1", {Res("widgets", m(31), m(32))})});
}

struct Row {
  const char* name;
  Catalog (*catalog)();
  const char* binary;
  const char* emulation;
  Flags flags;
  std::vector<std::string> expected;
  const char* error;  // substring of an INVALID_ARGUMENT message, or nullptr
};

Catalog CatalogA() { return KepAlphaBetaGA(); }
Catalog CatalogB() { return KepBetaBeta(); }
Catalog CatalogC() { return KepGAToGA(); }
Catalog CatalogCShifted() { return KepGAToGA(1, "1.34"); }

const char kVersionError[] =
    "cannot enable version example.k8s.io/v1 in runtime-config because all "
    "the resources have been introduced after the current version 1.31. "
    "Consider setting --runtime-config-emulation-forward-compatible=true";

std::vector<Row> KepRows() {
  return {
      // Row 1: emulation 1.30 "NA". With binary 1.33 the code's 1.31 floor
      // rejects it (docs/kubernetes-rules.md#emulation-version-floor).
      {"A_em130_Invalid",
       CatalogA,
       "1.33",
       "1.30",
       {},
       {},
       "emulation version 1.30 is not between [1.31, 1.33.0]"},
      {"A_em131_NothingByDefault", CatalogA, "1.33", "1.31", {}, {}, nullptr},
      {"A_em131_BetaEnabled",
       CatalogA,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true"},
       {"example.k8s.io/v1beta1=widgets"},
       nullptr},
      // KEP: "v1beta1=true,v1=true" serves both. The code refuses it without
      // --runtime-config-emulation-forward-compatible (A2).
      {"A_em131_BothEnabled_RefusedWithoutRCFC",
       CatalogA,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true,example.k8s.io/v1=true"},
       {},
       kVersionError},
      {"A_em131_BothEnabled_WithRCFC",
       CatalogA,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true,example.k8s.io/v1=true", std::nullopt,
        true},
       {"example.k8s.io/v1=widgets", "example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"A_em131_BetaEnabled_EFC",
       CatalogA,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true", true},
       {"example.k8s.io/v1=widgets", "example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"A_em133",
       CatalogA,
       "1.33",
       "1.33",
       {},
       {"example.k8s.io/v1=widgets"},
       nullptr},
      {"B_em131_Beta1Enabled",
       CatalogB,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true"},
       {"example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"B_em131_BothEnabled_RefusedWithoutRCFC",
       CatalogB,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true,example.k8s.io/v1beta2=true"},
       {},
       "cannot enable version example.k8s.io/v1beta2 in runtime-config"},
      {"B_em131_BothEnabled_WithRCFC",
       CatalogB,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true,example.k8s.io/v1beta2=true", std::nullopt,
        true},
       {"example.k8s.io/v1beta2=widgets", "example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"B_em131_Beta1Enabled_EFC",
       CatalogB,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true", true},
       {"example.k8s.io/v1beta2=widgets", "example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"B_em133_OffByDefault", CatalogB, "1.33", "1.33", {}, {}, nullptr},
      {"B_em133_Beta2Enabled",
       CatalogB,
       "1.33",
       "1.33",
       {"example.k8s.io/v1beta2=true"},
       {"example.k8s.io/v1beta2=widgets"},
       nullptr},
      // Row "v1/v2beta1/v2 at 1.30": invalid at binary 1.33 (A3); the same
      // lifecycle shifted one release (binary 1.34, emulation 1.31) shows the
      // KEP's intent.
      {"C_em130_Invalid",
       CatalogC,
       "1.33",
       "1.30",
       {},
       {},
       "emulation version 1.30 is not between [1.31, 1.33.0]"},
      {"C_shifted_em131_GAOnly",
       CatalogCShifted,
       "1.34",
       "1.31",
       {},
       {"example.k8s.io/v1=widgets"},
       nullptr},
      {"C_shifted_em131_V2Enabled_RefusedWithoutRCFC",
       CatalogCShifted,
       "1.34",
       "1.31",
       {"example.k8s.io/v2=true"},
       {},
       "cannot enable version example.k8s.io/v2 in runtime-config"},
      {"C_shifted_em131_V2Enabled_WithRCFC",
       CatalogCShifted,
       "1.34",
       "1.31",
       {"example.k8s.io/v2=true", std::nullopt, true},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets"},
       nullptr},
      {"C_shifted_em131_EFC",
       CatalogCShifted,
       "1.34",
       "1.31",
       {"", true},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets"},
       nullptr},
      {"C_em131_GAOnly",
       CatalogC,
       "1.33",
       "1.31",
       {},
       {"example.k8s.io/v1=widgets"},
       nullptr},
      {"C_em131_Beta",
       CatalogC,
       "1.33",
       "1.31",
       {"example.k8s.io/v2beta1=true"},
       {"example.k8s.io/v1=widgets", "example.k8s.io/v2beta1=widgets"},
       nullptr},
      {"C_em131_BetaAndGA_RefusedWithoutRCFC",
       CatalogC,
       "1.33",
       "1.31",
       {"example.k8s.io/v2beta1=true,example.k8s.io/v2=true"},
       {},
       "cannot enable version example.k8s.io/v2 in runtime-config"},
      {"C_em131_BetaAndGA_WithRCFC",
       CatalogC,
       "1.33",
       "1.31",
       {"example.k8s.io/v2beta1=true,example.k8s.io/v2=true", std::nullopt,
        true},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets",
        "example.k8s.io/v2beta1=widgets"},
       nullptr},
      {"C_em131_Beta_EFC",
       CatalogC,
       "1.33",
       "1.31",
       {"example.k8s.io/v2beta1=true", true},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets",
        "example.k8s.io/v2beta1=widgets"},
       nullptr},
      {"C_em133",
       CatalogC,
       "1.33",
       "1.33",
       {},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets"},
       nullptr},
  };
}

class KepApiAvailabilityTest : public ::testing::TestWithParam<Row> {};

TEST_P(KepApiAvailabilityTest, ServesWhatKubeApiserverServes) {
  const Row& row = GetParam();
  const Catalog catalog = row.catalog();
  auto served = List(catalog, EV(row.binary, row.emulation), row.flags);
  if (row.error != nullptr) {
    EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(row.error)));
    return;
  }
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served), row.expected);
}

INSTANTIATE_TEST_SUITE_P(Kep4330Table, KepApiAvailabilityTest,
                         ::testing::ValuesIn(KepRows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return info.param.name;
                         });

// --- The KEP's integration-test grid: binary N = 1.33, emulation N-1 = 1.32.

TEST(KepIntegrationGridTest, AlphaApiIntroducedAtNDoesNotExistAtNMinus1) {
  const Catalog c = MakeCatalog(
      "1.33", {GV(std::string(kG), "v1alpha1", {Res("widgets", "1.33")})});
  auto served = List(c, EV("1.33", "1.32"), {});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(KepIntegrationGridTest, AlphaApiIntroducedAtNCannotBeEnabledAtNMinus1) {
  const Catalog c = MakeCatalog(
      "1.33", {GV(std::string(kG), "v1alpha1", {Res("widgets", "1.33")})});
  EXPECT_THAT(List(c, EV("1.33", "1.32"), {"example.k8s.io/v1alpha1=true"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot enable version "
                                 "example.k8s.io/v1alpha1 in runtime-config")));
}

TEST(KepIntegrationGridTest, AlphaApiAtNIsOffByDefaultAndCanBeEnabled) {
  const Catalog c = MakeCatalog(
      "1.33", {GV(std::string(kG), "v1alpha1", {Res("widgets", "1.33")})});
  auto off = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(off);
  EXPECT_THAT(*off, IsEmpty());
  auto on = List(c, EV("1.33", "1.33"), {"example.k8s.io/v1alpha1=true"});
  ASSERT_OK(on);
  EXPECT_THAT(Flatten(*on), ElementsAre("example.k8s.io/v1alpha1=widgets"));
}

Catalog BetaGraduatedToGA() {
  return MakeCatalog(
      "1.33", {GV(std::string(kG), "v1", {Res("widgets", "1.33")}),
               GV(std::string(kG), "v1beta1", {Res("widgets", "1.32")})});
}

TEST(KepIntegrationGridTest, BetaGraduatedToGAAtNMinus1NeedsRuntimeConfig) {
  auto served = List(BetaGraduatedToGA(), EV("1.33", "1.32"), {});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(KepIntegrationGridTest, BetaGraduatedToGAAtNMinus1ServesBetaWhenEnabled) {
  // The grid (written before forward compatibility) lists v1 too; the code
  // serves v1 at N-1 only with --emulation-forward-compatible.
  auto served = List(BetaGraduatedToGA(), EV("1.33", "1.32"),
                     {"example.k8s.io/v1beta1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1beta1=widgets"));
}

TEST(KepIntegrationGridTest, BetaGraduatedToGAAtNMinus1ServesBothWithEFC) {
  auto served = List(BetaGraduatedToGA(), EV("1.33", "1.32"),
                     {"example.k8s.io/v1beta1=true", true});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1=widgets",
                                            "example.k8s.io/v1beta1=widgets"));
}

TEST(KepIntegrationGridTest, BetaGraduatedToGAAtNServesGA) {
  auto served = List(BetaGraduatedToGA(), EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1=widgets"));
}

Catalog BetaRemovedAtN(std::optional<bool> enabled_by_default) {
  return MakeCatalog(
      "1.33", {GV(std::string(kG), "v1beta1", {Res("widgets", "1.31", "1.33")},
                  enabled_by_default)});
}

TEST(KepIntegrationGridTest,
     OffByDefaultBetaRemovedAtNServedAtNMinus1OnlyWhenEnabled) {
  auto off = List(BetaRemovedAtN(std::nullopt), EV("1.33", "1.32"), {});
  ASSERT_OK(off);
  EXPECT_THAT(*off, IsEmpty());
  auto on = List(BetaRemovedAtN(std::nullopt), EV("1.33", "1.32"),
                 {"example.k8s.io/v1beta1=true"});
  ASSERT_OK(on);
  EXPECT_THAT(Flatten(*on), ElementsAre("example.k8s.io/v1beta1=widgets"));
}

TEST(KepIntegrationGridTest, BetaRemovedAtNDoesNotExistAtNEvenWhenEnabled) {
  auto served = List(BetaRemovedAtN(std::nullopt), EV("1.33", "1.33"),
                     {"example.k8s.io/v1beta1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(KepIntegrationGridTest,
     OnByDefaultBetaRemovedAtNServedAtNMinus1UnlessDisabled) {
  auto on = List(BetaRemovedAtN(true), EV("1.33", "1.32"), {});
  ASSERT_OK(on);
  EXPECT_THAT(Flatten(*on), ElementsAre("example.k8s.io/v1beta1=widgets"));
  auto off = List(BetaRemovedAtN(true), EV("1.33", "1.32"),
                  {"example.k8s.io/v1beta1=false"});
  ASSERT_OK(off);
  EXPECT_THAT(*off, IsEmpty());
}

TEST(KepIntegrationGridTest, OnByDefaultBetaRemovedAtNDoesNotExistAtN) {
  auto served = List(BetaRemovedAtN(true), EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(KepIntegrationGridTest, EmulationAboveBinaryFails) {
  EXPECT_THAT(List(KepAlphaBetaGA(), EV("1.33", "1.34"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("emulation version 1.34 is not between "
                                 "[1.31, 1.33.0]")));
}

TEST(KepIntegrationGridTest, EmulationBelowNMinus3Fails) {
  EXPECT_THAT(List(KepAlphaBetaGA("1.35"), EV("1.35", "1.31"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("emulation version 1.31 is not between "
                                 "[1.32, 1.35.0]")));
}

TEST(EmulationRangeTest, Binary132AllowsOnlyNMinus1) {
  EXPECT_OK(List(KepAlphaBetaGA("1.32"), EV("1.32", "1.31"), {}));
  EXPECT_THAT(List(KepAlphaBetaGA("1.31"), EV("1.31", "1.30"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is not between [1.31, 1.31.0]")));
}

// ---------------------------------------------------------------------------
// Validation (APIEnablementOptions.Validate, ServerRunOptions.Validate) and
// merge errors.

struct ValidationCase {
  const char* name;
  const char* runtime_config;
  const char* error;
};

class RuntimeConfigValidationTest
    : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(RuntimeConfigValidationTest, IsInvalidArgument) {
  const ValidationCase& c = GetParam();
  EXPECT_THAT(List(CoreAndApps(), EV("1.33", "1.33"), {c.runtime_config}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)));
}

INSTANTIATE_TEST_SUITE_P(
    ApiEnablement, RuntimeConfigValidationTest,
    ::testing::Values(
        // api_enablement_test.go TestAPIEnablementOptionsValidate.
        ValidationCase{"only_api_all_false", "api/all=false",
                       "invalid key with only api/all=false"},
        ValidationCase{"key_without_slash", "apiall=false",
                       "runtime-config invalid key apiall"},
        ValidationCase{"unknown_group", "foo.io/v1=true",
                       "unknown api groups foo.io"},
        ValidationCase{"four_tokens", "apps/v1/deployments/scale=true",
                       "runtime-config invalid key "
                       "apps/v1/deployments/scale"},
        ValidationCase{"blank_item", "apps/v1=true, ",
                       "runtime-config invalid key "},
        ValidationCase{"unregistered_version", "apps/v2=true",
                       "group version apps/v2 that has not been registered"},
        ValidationCase{"unregistered_core_version", "/v2=false",
                       "group version v2 that has not been registered"},
        ValidationCase{"bad_bool", "apps/v1=yes",
                       "invalid value of apps/v1: yes, err: "
                       "strconv.ParseBool: parsing \"yes\": invalid syntax"},
        ValidationCase{"api_matcher_needs_exact_bool", "api/beta=1",
                       "invalid value api/beta=1"},
        ValidationCase{"api_matcher_empty_value", "api/ga,apps/v1=true",
                       "invalid value api/ga="}),
    [](const ::testing::TestParamInfo<ValidationCase>& info) {
      return std::string(info.param.name);
    });

TEST(RuntimeConfigValidationTest, ApiAllFalseWithAnotherKeyIsAccepted) {
  auto served =
      List(CoreAndApps(), EV("1.33", "1.33"), {"api/all=false,apps/v1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("apps/v1=deployments,other"));
}

TEST(RuntimeConfigValidationTest, GoBoolSpellingsAreAccepted) {
  auto served = List(CoreAndApps(), EV("1.33", "1.33"),
                     {"apps/v1=F,/v1=0,extensions/v1beta1=FALSE"});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(ForwardCompatibleFlagsTest, EFCAtBinaryVersionIsRefused) {
  EXPECT_THAT(
      List(CoreAndApps(), EV("1.33.2", "1.33"), {"", true}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("EmulationForwardCompatible cannot be set to true if "
                         "the emulation version is the same as the binary "
                         "version")));
}

TEST(ForwardCompatibleFlagsTest, RCFCAtBinaryVersionIsRefused) {
  EXPECT_THAT(List(CoreAndApps(), EV("1.33", "1.33"), {"", false, true}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("RuntimeConfigEmulationForwardCompatible "
                                 "cannot be set to true")));
}

TEST(ForwardCompatibleFlagsTest, AllStartupErrorsAreReportedTogether) {
  auto served =
      List(CoreAndApps(), EV("1.33", "1.33"), {"api/all=false", true, true});
  EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("EmulationForwardCompatible")));
  EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("RuntimeConfigEmulationForward")));
  EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("invalid key with only api/all")));
}

TEST(ForwardCompatibleFlagsTest, FalseFlagsAtBinaryVersionAreFine) {
  EXPECT_OK(List(CoreAndApps(), EV("1.33", "1.33"), {"", false, false}));
}

// apiserver v0.31.0 and v0.32.0 pkg/server/options/server_run_options.go have
// neither flag (both arrive in v0.33.0): kube-apiserver 1.31 and 1.32 refuse
// them as unknown flags, emulating or not.
TEST(ForwardCompatibleFlagsTest, Before133TheFlagsDoNotExist) {
  EXPECT_THAT(List(KepAlphaBetaGA("1.32"), EV("1.32", "1.31"), {"", true}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown flag: --emulation-forward-compatible "
                                 "(kube-apiserver 1.32 has no such flag")));
  EXPECT_THAT(
      List(KepAlphaBetaGA("1.31"), EV("1.31.4", "1.31"), {"", false, true}),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          HasSubstr(
              "unknown flag: --runtime-config-emulation-forward-compatible "
              "(kube-apiserver 1.31 has no such flag")));
  Catalog cluster = KepAlphaBetaGA("1.32");
  cluster.cluster.emulation_forward_compatible = true;
  EXPECT_THAT(
      List(cluster, EV("1.32", "1.32"), {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("unknown flag: --emulation-forward-compatible")));
  // false is taken as "not set".
  EXPECT_OK(
      List(KepAlphaBetaGA("1.32"), EV("1.32", "1.31"), {"", false, false}));
}

TEST(ForwardCompatibleFlagsTest, ClusterSectionEnablesEFC) {
  Catalog c = KepAlphaBetaGA();
  c.cluster.emulation_forward_compatible = true;
  auto served = List(c, EV("1.33", "1.31"), {"example.k8s.io/v1beta1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1=widgets",
                                            "example.k8s.io/v1beta1=widgets"));
}

TEST(ForwardCompatibleFlagsTest, QueryFlagOverridesClusterSection) {
  Catalog c = KepAlphaBetaGA();
  c.cluster.emulation_forward_compatible = true;
  auto served =
      List(c, EV("1.33", "1.31"), {"example.k8s.io/v1beta1=true", false});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1beta1=widgets"));
}

// ---------------------------------------------------------------------------
// The cluster section under the query.

TEST(ClusterRuntimeConfigTest, ClusterEntriesApply) {
  Catalog c = CoreAndApps();
  c.cluster.runtime_config = {{"apps/v1", "false"}};
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served),
              ElementsAre("/v1=pods", "extensions/v1beta1=ingresses"));
}

TEST(ClusterRuntimeConfigTest, QueryKeyWins) {
  Catalog c = CoreAndApps();
  c.cluster.runtime_config = {{"apps/v1", "false"}};
  auto served = List(c, EV("1.33", "1.33"), {"apps/v1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served),
              ElementsAre("/v1=pods", "apps/v1=deployments,other",
                          "extensions/v1beta1=ingresses"));
}

TEST(ClusterRuntimeConfigTest, OnlyApiAllFalseCountsAfterMerging) {
  Catalog c = CoreAndApps();
  c.cluster.runtime_config = {{"api/all", "false"}};
  EXPECT_THAT(List(c, EV("1.33", "1.33"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("invalid key with only api/all=false")));
  EXPECT_OK(List(c, EV("1.33", "1.33"), {"/v1=true"}));
}

// ---------------------------------------------------------------------------
// Output order and reasons.

TEST(OutputOrderTest, GroupsSortedVersionsByPriorityResourcesSorted) {
  const Catalog c = MakeCatalog(
      "1.33",
      {GV("zeta.io", "v1", {Res("zs")}),
       // Listed out of priority order on purpose.
       GV("alpha.io", "v1beta1", {Res("bs", "", ""), Res("as")}, true),
       GV("alpha.io", "v2", {Res("cs")}), GV("alpha.io", "v1", {Res("ds")}),
       GV("", "v1", {Res("pods"), Res("configmaps")})});
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(
      Flatten(*served),
      ElementsAre("/v1=configmaps,pods", "alpha.io/v2=cs", "alpha.io/v1=ds",
                  "alpha.io/v1beta1=as,bs", "zeta.io/v1=zs"));
}

TEST(OutputOrderTest, VersionWithoutServedResourcesIsOmitted) {
  const Catalog c =
      MakeCatalog("1.33", {GV("g.io", "v1", {Res("as", "1.30", "1.32")}),
                           GV("g.io", "v2", {Res("bs")})});
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("g.io/v2=bs"));
}

TEST(ReasonTest, ResourceEnabledIndividuallyIsExplained) {
  auto served = List(CoreAndApps(), EV("1.33", "1.33"),
                     {"apps/v1=false,apps/v1/deployments=true"});
  ASSERT_OK(served);
  EXPECT_EQ((*served)[1].group, "apps");
  EXPECT_THAT((*served)[1].reason, HasSubstr("resources enabled individually"));
  EXPECT_THAT((*served)[1].reason,
              HasSubstr("deployments enabled by --runtime-config "
                        "apps/v1/deployments=true"));
}

TEST(ReasonTest, ForwardCompatibleResourceIsExplained) {
  auto served = List(KepAlphaBetaGA(), EV("1.33", "1.31"),
                     {"example.k8s.io/v1beta1=true", true});
  ASSERT_OK(served);
  EXPECT_THAT((*served)[0].reason,
              HasSubstr("widgets introduced at 1.32 after emulation 1.31, "
                        "served by --emulation-forward-compatible"));
}

TEST(ReasonTest, AlphaResourceWhileEmulatingIsServedWithWarning) {
  // docs/kubernetes-rules.md#api-availability: the KEP says alpha APIs cannot
  // be enabled while emulating; kube-apiserver serves them and logs a warning.
  auto served =
      List(MakeCatalog("1.34", {GV("test", "v2alpha1",
                                   {Res("testtype1"), Res("testtype2")})}),
           EV("1.34", "1.33"), {"test/v2alpha1/testtype1=true"});
  ASSERT_OK(served);
  ASSERT_EQ(served->size(), 1u);
  EXPECT_THAT((*served)[0].reason, HasSubstr("unsupported"));
}

}  // namespace
}  // namespace compatd::engine
