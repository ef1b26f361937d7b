// ValidateFeatureSpecs: component-base featuregate AddVersioned, per release
// line. The rules and messages are those of
// k8s.io/component-base/featuregate/feature_gate.go (AddVersioned) before 1.33
// (v0.31.0, v0.32.0: no checks, the list is sorted), in 1.33-1.34 (v0.33.0,
// v0.34.0: strictly increasing versions) and from 1.35 (v0.35.0 and master:
// MinCompatibilityVersion, equal-version entries, no transition without
// change, no unlock). Each case names the check it exercises
// (docs/kubernetes-rules.md#feature-spec-validation).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog_loader.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/query.h"
#include "engine/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr PreRelease kAlpha = PreRelease::kAlpha;
constexpr PreRelease kBeta = PreRelease::kBeta;
constexpr PreRelease kGA = PreRelease::kGA;
constexpr PreRelease kDeprecated = PreRelease::kDeprecated;

Version V(const char* text) { return *Version::Parse(text); }

struct SpecRow {
  const char* version;
  bool default_enabled;
  PreRelease pre_release;
  bool lock = false;
  const char* min_compat = nullptr;
};

std::vector<FeatureSpec> Specs(const std::vector<SpecRow>& rows) {
  std::vector<FeatureSpec> specs;
  for (const SpecRow& row : rows) {
    FeatureSpec spec;
    spec.version = V(row.version);
    spec.default_enabled = row.default_enabled;
    spec.pre_release = row.pre_release;
    spec.lock_to_default = row.lock;
    if (row.min_compat != nullptr) {
      spec.min_compatibility_version = V(row.min_compat);
    }
    specs.push_back(spec);
  }
  return specs;
}

struct ValidationCase {
  const char* name;
  const char* binary;
  std::vector<SpecRow> specs;
  // Empty: valid. Otherwise a substring of Kubernetes' message.
  const char* error;
};

class ValidateFeatureSpecsTest
    : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(ValidateFeatureSpecsTest, MatchesAddVersioned) {
  const ValidationCase& c = GetParam();
  std::vector<FeatureSpec> specs = Specs(c.specs);
  const absl::Status status = ValidateFeatureSpecs("F", specs, V(c.binary));
  if (std::string(c.error).empty()) {
    EXPECT_OK(status);
  } else {
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(c.error)));
  }
}

const ValidationCase kValidationCases[] = {
    // Both release lines.
    {"SingleAlpha134", "1.34", {{"1.30", false, kAlpha}}, ""},
    {"SingleAlpha135", "1.35", {{"1.30", false, kAlpha}}, ""},
    {"EmptyListIsAccepted", "1.36", {}, ""},
    {"AlphaBetaGA134",
     "1.34",
     {{"1.29", false, kAlpha},
      {"1.31", true, kBeta},
      {"1.33", true, kGA, true}},
     ""},
    {"AlphaBetaGA136",
     "1.36",
     {{"1.29", false, kAlpha},
      {"1.31", true, kBeta},
      {"1.33", true, kGA, true}},
     ""},
    {"PatchVersion134",
     "1.34",
     {{"1.30.1", false, kAlpha}},
     "feature \"F\" specified patch version: 1.30.1"},
    {"PatchVersion135",
     "1.35",
     {{"1.30.0", false, kAlpha}},
     "feature \"F\" specified patch version: 1.30.0"},
    {"DeprecatedFirstNeedsMinorZero134",
     "1.34",
     {{"1.30", false, kDeprecated}},
     "feature \"F\" introduced as deprecated must provide a 1.0 entry "
     "indicating initial state"},
    {"DeprecatedFirstNeedsMinorZero136",
     "1.36",
     {{"1.30", false, kDeprecated}},
     "introduced as deprecated must provide a 1.0 entry"},
    {"DeprecatedFirstAtOneZero",
     "1.36",
     {{"1.0", true, kDeprecated}, {"1.30", false, kDeprecated}},
     ""},
    {"DeprecatedAfterGA",
     "1.36",
     {{"1.0", true, kGA}, {"1.31", false, kDeprecated}},
     ""},
    {"DeprecatedToDeprecatedNewDefault134",
     "1.34",
     {{"1.0", true, kGA},
      {"1.31", true, kDeprecated},
      {"1.33", false, kDeprecated}},
     ""},
    {"DeprecatedResurrects134",
     "1.34",
     {{"1.0", true, kGA}, {"1.31", false, kDeprecated}, {"1.33", true, kGA}},
     "deprecated feature \"F\" must not resurrect from its terminal state"},
    {"DeprecatedResurrects136",
     "1.36",
     {{"1.0", true, kGA}, {"1.31", false, kDeprecated}, {"1.33", true, kGA}},
     "deprecated feature \"F\" must not resurrect from its terminal state"},
    {"BetaToAlpha",
     "1.34",
     {{"1.29", false, kBeta}, {"1.30", true, kAlpha}},
     "feature \"F\" regresses stability from more stable level to ALPHA in "
     "1.30"},
    {"GAToAlpha",
     "1.36",
     {{"1.29", true, kGA}, {"1.30", false, kAlpha}},
     "regresses stability from more stable level to ALPHA in 1.30"},
    {"GAToBeta",
     "1.36",
     {{"1.29", true, kGA}, {"1.30", false, kBeta}},
     "regresses stability from more stable level to BETA in 1.30"},
    {"GAAfterBetaThenAlpha",
     "1.34",
     {{"1.28", false, kAlpha},
      {"1.29", true, kBeta},
      {"1.30", true, kGA},
      {"1.31", false, kAlpha}},
     "regresses stability from more stable level to ALPHA in 1.31"},

    // Before 1.35: versions strictly increase.
    {"EqualVersions134",
     "1.34",
     {{"1.30", false, kBeta}, {"1.30", true, kBeta}},
     "feature \"F\" lists version transitions in non-increasing order (1.30 "
     "<= 1.30)"},
    {"DecreasingVersions133",
     "1.33",
     {{"1.31", false, kAlpha}, {"1.30", true, kBeta}},
     "lists version transitions in non-increasing order (1.30 <= 1.31)"},
    {"MinCompatibilityBefore135",
     "1.34",
     {{"1.34", false, kBeta}, {"1.34", true, kBeta, false, "1.34"}},
     "minCompatibilityVersion 1.34"},
    // Before 1.35 these are allowed; 1.35 rejects them (cases below).
    {"TransitionWithoutChangeAllowed134",
     "1.34",
     {{"1.30", false, kAlpha}, {"1.31", false, kAlpha}},
     ""},
    {"UnlockAllowed134",
     "1.34",
     {{"1.30", true, kGA, true}, {"1.31", true, kGA, false}},
     ""},

    // From 1.35 (component-base v0.35.0+).
    {"DecreasingVersions135",
     "1.35",
     {{"1.31", false, kAlpha}, {"1.30", true, kBeta}},
     "feature \"F\" lists version transitions in decreasing order (1.30 < "
     "1.31)"},
    // The example of FeatureSpec.MinCompatibilityVersion's doc comment.
    {"MinCompatibilityAtSameVersion",
     "1.35",
     {{"1.35", false, kBeta}, {"1.35", true, kBeta, false, "1.35"}},
     ""},
    {"MinCompatibilityThenGA",
     "1.37",
     {{"1.35", false, kBeta},
      {"1.35", true, kBeta, false, "1.35"},
      {"1.37", true, kGA}},
     ""},
    {"MinCompatibilityOnFirstEntry",
     "1.35",
     {{"1.35", true, kBeta, false, "1.34"}},
     "feature \"F\" specified MinCompatibilityVersion: 1.34 without a "
     "preceding entry at the same Version without MinCompatibilityVersion "
     "set"},
    {"MinCompatibilityAtNewVersion",
     "1.36",
     {{"1.34", false, kBeta}, {"1.35", true, kBeta, false, "1.35"}},
     "specified MinCompatibilityVersion: 1.35 without a preceding entry"},
    {"MinCompatibilityWithPatch",
     "1.35",
     {{"1.35", false, kBeta}, {"1.35", true, kBeta, false, "1.34.1"}},
     "feature \"F\" specified patch MinCompatibilityVersion: 1.34.1"},
    {"MinCompatibilityAboveVersion",
     "1.36",
     {{"1.35", false, kBeta}, {"1.35", true, kBeta, false, "1.36"}},
     "feature \"F\" MinCompatibilityVersion 1.36 greater than Version 1.35"},
    {"DuplicateEntries",
     "1.35",
     {{"1.35", false, kBeta}, {"1.35", true, kBeta}},
     "feature \"F\" lists duplicate entries with the same versions (1.35 = "
     "1.35)"},
    {"StabilityChangeAtSameVersion",
     "1.35",
     {{"1.35", false, kAlpha}, {"1.35", true, kBeta, false, "1.35"}},
     "feature \"F\" lists stability changes with the same version (ALPHA -> "
     "BETA)"},
    {"LockChangeAtSameVersion",
     "1.35",
     {{"1.35", true, kGA}, {"1.35", false, kGA, true, "1.35"}},
     "feature \"F\" lists locked to default changes with the same version "
     "(false -> true)"},
    {"TransitionWithoutChange",
     "1.35",
     {{"1.30", false, kAlpha}, {"1.31", false, kAlpha}},
     "feature \"F\" lists transition without stability change (1.30 -> "
     "1.31)"},
    {"SameStageNewDefaultIsAChange",
     "1.35",
     {{"1.30", false, kBeta}, {"1.31", true, kBeta}},
     ""},
    {"SameStageNewLockIsAChange",
     "1.35",
     {{"1.30", true, kGA}, {"1.31", true, kGA, true}},
     ""},
    {"DeprecatedToDeprecatedNewDefault136",
     "1.36",
     {{"1.0", true, kGA},
      {"1.31", true, kDeprecated},
      {"1.33", false, kDeprecated}},
     ""},
    {"Unlock",
     "1.35",
     {{"1.30", true, kGA, true}, {"1.31", false, kGA, false}},
     "feature \"F\" must not unlock after locking to default"},
    {"UnlockIntoDeprecated",
     "1.36",
     {{"1.30", true, kGA, true}, {"1.33", false, kDeprecated, false}},
     "must not unlock after locking to default"},
    // An inherited min-compatibility version counts in the decreasing check
    // of a later explicit one.
    {"MinCompatibilityDecreases",
     "1.37",
     {{"1.35", false, kBeta},
      {"1.35", true, kBeta, false, "1.35"},
      {"1.36", true, kGA},
      {"1.36", true, kGA, true, "1.34"}},
     "feature \"F\" lists min compatibility version transitions in "
     "decreasing order (1.34 < 1.35)"},
    // A later entry whose own min-compatibility equals the inherited one is a
    // duplicate.
    {"EqualToInheritedMinCompatibilityIsDuplicate",
     "1.37",
     {{"1.35", false, kBeta},
      {"1.35", true, kBeta, false, "1.35"},
      {"1.36", true, kGA},
      {"1.36", true, kGA, true, "1.35"}},
     "lists duplicate entries with the same versions (1.36 = 1.36)"},
    // Before 1.33 AddVersioned checked nothing: component-base v0.31.0 and
    // v0.32.0 featuregate/feature_gate.go lines 418-445 only sort each list
    // (the checks arrived in v0.33.0, commit 2234523). Each of these is
    // refused by the 1.33-1.34 rules above.
    {"EqualVersions132Accepted",
     "1.32",
     {{"1.30", false, kBeta}, {"1.30", true, kBeta}},
     ""},
    {"PatchVersion132Accepted", "1.32", {{"1.30.1", false, kAlpha}}, ""},
    {"DeprecatedFirst131Accepted", "1.31", {{"1.30", false, kDeprecated}}, ""},
    {"RegressionGAToAlpha132Accepted",
     "1.32",
     {{"1.29", true, kGA}, {"1.30", false, kAlpha}},
     ""},
    {"ResurrectFromDeprecated131Accepted",
     "1.31",
     {{"1.0", true, kGA}, {"1.31", false, kDeprecated}, {"1.33", true, kGA}},
     ""},
    {"Decreasing132AcceptedAndSorted",
     "1.32",
     {{"1.31", false, kAlpha}, {"1.30", true, kBeta}},
     ""},
    // The field itself is 1.35's.
    {"MinCompatibility132Refused",
     "1.32",
     {{"1.30", false, kBeta}, {"1.30", true, kBeta, false, "1.30"}},
     "feature gates support only from Kubernetes 1.35"},
    // The checks start at 1.33, pre-releases included.
    {"EqualVersions133PreReleaseRefused",
     "1.33.0-alpha.1",
     {{"1.30", false, kBeta}, {"1.30", true, kBeta}},
     "non-increasing order"},
    // The 1.35 rule is chosen by the binary's major.minor, pre-releases
    // included.
    {"PreReleaseBinaryUses135Rules",
     "1.35.0-alpha.1",
     {{"1.30", false, kAlpha}, {"1.31", false, kAlpha}},
     "transition without stability change"},
};

INSTANTIATE_TEST_SUITE_P(
    AddVersioned, ValidateFeatureSpecsTest,
    ::testing::ValuesIn(kValidationCases),
    [](const ::testing::TestParamInfo<ValidationCase>& info) {
      return std::string(info.param.name);
    });

// Before 1.33 AddVersioned's only effect is sort.Sort(specs) by version
// (component-base v0.31.0 / v0.32.0 featuregate/feature_gate.go line 430;
// an insertion sort for short lists, so equal versions keep their order).
TEST(ValidateFeatureSpecsBefore133Test, SortsByVersionKeepingEqualOnesInOrder) {
  for (const char* binary : {"1.31", "1.32.4", "1.30"}) {
    std::vector<FeatureSpec> specs = Specs({{"1.32", true, kGA},
                                            {"1.30", false, kAlpha},
                                            {"1.31", true, kBeta},
                                            {"1.30", true, kAlpha}});
    ASSERT_OK(ValidateFeatureSpecs("F", specs, V(binary)));
    ASSERT_EQ(specs.size(), 4u);
    EXPECT_EQ(specs[0].version.ToString(), "1.30") << binary;
    EXPECT_FALSE(specs[0].default_enabled) << binary;
    EXPECT_EQ(specs[1].version.ToString(), "1.30") << binary;
    EXPECT_TRUE(specs[1].default_enabled) << binary;
    EXPECT_EQ(specs[2].pre_release, kBeta) << binary;
    EXPECT_EQ(specs[3].pre_release, kGA) << binary;
  }
}

// The same through the catalog loader and a decision: a 1.32 catalog whose
// list is out of order and regresses GA -> Beta loads, and the spec in force
// is the one Kubernetes 1.32 picks from its sorted list.
TEST(ValidateFeatureSpecsBefore133Test,
     CatalogOf132LoadsAndDecidesOnSortedSpecs) {
  const std::string features =
      "features:\n"
      "  - name: Foo\n"
      "    versionedSpecs:\n"
      "      - {version: \"1.31\", default: false, lockToDefault: false, "
      "preRelease: Beta}\n"
      "      - {version: \"1.30\", default: true, lockToDefault: false, "
      "preRelease: GA}\n";
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Catalog> catalog,
      catalog::ParseCatalog("binaryVersion: \"1.32\"\n" + features, "a.yaml"));
  EffectiveVersions versions;
  versions.binary = V("1.32");
  versions.emulation = V("1.31");
  versions.min_compatibility = V("1.31");
  ASSERT_OK_AND_ASSIGN(FeatureDecision d, DecideFeature(*catalog, versions,
                                                        VersionQuery{}, "Foo"));
  EXPECT_EQ(d.stage, kBeta);
  EXPECT_FALSE(d.enabled);
  // The 1.33 rules refuse the same list.
  EXPECT_FALSE(
      catalog::ParseCatalog("binaryVersion: \"1.33\"\n" + features, "b.yaml")
          .ok());
}

TEST(ValidateFeatureSpecsInheritanceTest, LaterEntriesInheritMinCompatibility) {
  std::vector<FeatureSpec> specs = Specs({{"1.35", false, kBeta},
                                          {"1.35", true, kBeta, false, "1.35"},
                                          {"1.37", true, kGA, true}});
  ASSERT_OK(ValidateFeatureSpecs("FeatureA", specs, V("1.37")));
  EXPECT_FALSE(specs[0].min_compatibility_version.has_value());
  ASSERT_TRUE(specs[1].min_compatibility_version.has_value());
  EXPECT_EQ(specs[1].min_compatibility_version->ToString(), "1.35");
  ASSERT_TRUE(specs[2].min_compatibility_version.has_value());
  EXPECT_EQ(specs[2].min_compatibility_version->ToString(), "1.35");
}

TEST(ValidateFeatureSpecsInheritanceTest, InvalidListIsLeftUnchanged) {
  std::vector<FeatureSpec> specs = Specs({{"1.35", false, kBeta},
                                          {"1.35", true, kBeta, false, "1.35"},
                                          {"1.36", true, kGA},
                                          {"1.36", false, kAlpha}});
  EXPECT_THAT(ValidateFeatureSpecs("FeatureA", specs, V("1.37")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("stability changes with the same version")));
  EXPECT_FALSE(specs[2].min_compatibility_version.has_value());
}

TEST(ValidateFeatureSpecsMessageTest, NamesTheEntryLineAndReleaseLine) {
  std::vector<FeatureSpec> specs =
      Specs({{"1.30", false, kAlpha}, {"1.31", false, kAlpha}});
  specs[1].line = 42;
  EXPECT_THAT(ValidateFeatureSpecs("SomeGate", specs, V("1.36.2")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("\"SomeGate\""),
                             HasSubstr("versionedSpecs[1] (line 42)"),
                             HasSubstr("Kubernetes 1.36"))));
}

// docs/kubernetes-rules.md#feature-spec-validation:
// TestFeatureSpecAtEmulationAndMinCompatVersion (component-base
// feature_gate_test.go) builds a list with an Alpha -> Beta
// change at one version, which AddVersioned rejects; a catalog list of that
// shape must be rejected too.
TEST(ValidateFeatureSpecsA8Test, AlphaToBetaAtSameVersionIsRejected) {
  std::vector<FeatureSpec> specs =
      Specs({{"1.34", false, kAlpha},
             {"1.35", true, kAlpha},
             {"1.35", true, kBeta, false, "1.35"}});
  EXPECT_THAT(ValidateFeatureSpecs("F", specs, V("1.35")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("stability changes with the same version")));
}

}  // namespace
}  // namespace compatd::engine
