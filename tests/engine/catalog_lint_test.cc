// LintCatalog: one rule per test on small catalogs, Kubernetes' own
// verifyFeatureRemoval table, and what the lint finds in the embedded
// Kubernetes 1.36 catalog.

#include "engine/catalog_lint.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {

// Readable gtest failures.
void PrintTo(const LintFinding& f, std::ostream* os) {
  *os << LintSeverityName(f.severity) << " " << f.rule << " [" << f.subject
      << "] " << f.release << ": " << f.message
      << (f.exception.empty() ? "" : " (exception)");
}

namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

std::unique_ptr<Catalog> Load(const std::string& yaml) {
  absl::StatusOr<std::unique_ptr<Catalog>> catalog =
      catalog::ParseCatalog(yaml, "lint_test.yaml");
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return catalog.ok() ? *std::move(catalog) : nullptr;
}

auto Finding(const std::string& rule, const std::string& subject,
             const std::string& release) {
  return AllOf(Field(&LintFinding::rule, rule),
               Field(&LintFinding::subject, subject),
               Field(&LintFinding::release, release));
}

// What the lint finds in the embedded catalog (Kubernetes 1.36, generated from
// kubernetes/kubernetes and kubernetes/api v0.36.3 data): one finding, a
// documented exception. No GA version is removed; every beta removal comes 3
// or more releases after its deprecation; no gate has a planned removal.
//
// Storage versions: kube-apiserver 1.36's ResourceEncodingOverrides apply at
// every emulation version, so emulating 1.33 it stores clustertrustbundles
// and leasecandidates as v1beta1 (introduced in 1.33) and
// mutatingadmissionpolicies(bindings) as v1beta1 (introduced only in 1.34),
// and emulating 1.34 the latter two in the version 1.34 introduces. The first
// version of the storage rules flagged these six; each of these resources had
// only alpha versions before, and alpha data has no rollback guarantee (the
// api-changes guide's alpha level), so the rules now skip them: a lint bug,
// fixed, not an exception.
TEST(CatalogLintTest, EmbeddedCatalogHasOnlyTheDocumentedException) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Catalog> catalog,
      catalog::ParseCatalog(compatd::catalog::EmbeddedCatalogYaml(),
                            compatd::catalog::EmbeddedCatalogSource()));
  const LintReport report = LintCatalog(*catalog);
  EXPECT_EQ(report.errors, 0);
  EXPECT_EQ(report.warnings, 0);
  EXPECT_EQ(report.exceptions, 1);
  EXPECT_THAT(report.findings,
              ElementsAre(AllOf(
                  Finding("ga-feature-not-locked",
                          "feature AllowServiceExternalIPs", "1.0"),
                  Field(&LintFinding::severity, LintSeverity::kWarning),
                  Field(&LintFinding::exception, HasSubstr("KEP-5707")))));
}

TEST(CatalogLintTest, EveryExceptionNamesARuleAndAReason) {
  for (const LintException& e : LintExceptions()) {
    EXPECT_THAT(std::string(e.rule),
                ::testing::AnyOf("storage-version-new-in-release",
                                 "storage-version-not-decodable",
                                 "ga-version-removed", "beta-removed-too-soon",
                                 "feature-removed-in-emulation-window",
                                 "ga-feature-not-locked"));
    EXPECT_FALSE(e.subject.empty());
    EXPECT_GT(e.reason.size(), 40u);
  }
}

// kube-apiserver 1.32-1.34 skipped versions that declare a replacement when
// choosing the storage version (kubernetes#128454); with the replacement
// introduced in the same release nothing qualified and the group's preferred
// version, the brand-new one, was stored. 1.35 reverted it (kubernetes#135197).
constexpr char kReplacedBeta[] = R"(
binaryVersion: "1.33"
apis:
  - group: example.io
    version: v1
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.33"}
  - group: example.io
    version: v1beta1
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.30", deprecated: "1.33",
         removed: "1.36", replacement: example.io/v1}
)";

TEST(CatalogLintTest, NewVersionStoredInTheReleaseThatIntroducesItIsAnError) {
  std::unique_ptr<Catalog> catalog = Load(kReplacedBeta);
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  // Emulating 1.31 and 1.32 it even stores a version those releases lack.
  ASSERT_THAT(report.findings,
              ElementsAre(Finding("storage-version-not-decodable",
                                  "widgets.example.io", "1.31"),
                          Finding("storage-version-not-decodable",
                                  "widgets.example.io", "1.32"),
                          Finding("storage-version-new-in-release",
                                  "widgets.example.io", "1.33")));
  const LintFinding& f = report.findings[2];
  EXPECT_EQ(f.severity, LintSeverity::kError);
  EXPECT_EQ(f.line, 7);
  EXPECT_THAT(f.message,
              HasSubstr("kube-apiserver 1.33 stores widgets.example.io as v1 "
                        "(no version qualified: the group's preferred "
                        "version), the version 1.33 introduces, although "
                        "v1beta1 was served in 1.32"));
  EXPECT_EQ(report.errors, 3);
}

TEST(CatalogLintTest, TheSameCatalogAtKubernetes135IsClean) {
  // 1.35's rule stores v1beta1 (introduced by min-compatibility 1.32).
  std::string yaml = kReplacedBeta;
  yaml.replace(yaml.find("\"1.33\""), 6, "\"1.35\"");
  std::unique_ptr<Catalog> catalog = Load(yaml);
  ASSERT_NE(catalog, nullptr);
  EXPECT_THAT(LintCatalog(*catalog).findings, IsEmpty());
}

constexpr char kOverrideToNewVersion[] = R"(
binaryVersion: "1.36"
apis:
  - group: example.io
    version: v1
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.36"}
  - group: example.io
    version: v1beta1
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.30"}
storageOverrides:
  - {group: example.io, resource: widgets, version: v1}
)";

TEST(CatalogLintTest, StorageVersionTheReleaseBeforeCannotDecodeIsAnError) {
  std::unique_ptr<Catalog> catalog = Load(kOverrideToNewVersion);
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  // The override applies at every emulated release: 1.33-1.35 store a
  // version that only 1.36 has; 1.36 stores the version it introduces.
  EXPECT_THAT(report.findings,
              ElementsAre(Finding("storage-version-not-decodable",
                                  "widgets.example.io", "1.33"),
                          Finding("storage-version-not-decodable",
                                  "widgets.example.io", "1.34"),
                          Finding("storage-version-not-decodable",
                                  "widgets.example.io", "1.35"),
                          Finding("storage-version-new-in-release",
                                  "widgets.example.io", "1.36")));
  EXPECT_THAT(report.findings[2].message,
              HasSubstr("kube-apiserver 1.36 emulating 1.35 stores "
                        "widgets.example.io as v1 (storage override), "
                        "introduced only in 1.36, although v1beta1 was served "
                        "in 1.34: an apiserver rolled back to 1.34 cannot "
                        "decode it"));
}

TEST(CatalogLintTest, ResourcesWithOnlyAlphaBeforeHaveNoRollbackGuarantee) {
  // The shape of coordination.k8s.io leasecandidates in 1.36: v1beta1
  // (1.33) stored by override, only v1alpha2 (1.32) before.
  std::unique_ptr<Catalog> catalog = Load(R"(
binaryVersion: "1.36"
apis:
  - group: example.io
    version: v1beta1
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.33"}
  - group: example.io
    version: v1alpha2
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.32"}
storageOverrides:
  - {group: example.io, resource: widgets, version: v1beta1}
)");
  ASSERT_NE(catalog, nullptr);
  EXPECT_THAT(LintCatalog(*catalog).findings, IsEmpty());
}

TEST(CatalogLintTest, NotPersistedResourcesAreNotChecked) {
  std::string yaml = kOverrideToNewVersion;
  yaml.replace(yaml.find("storageOverrides"), std::string::npos, "");
  std::unique_ptr<Catalog> catalog = Load(absl::StrReplaceAll(
      yaml, {{"kind: Widget", "kind: Widget, persisted: false"}}));
  ASSERT_NE(catalog, nullptr);
  EXPECT_THAT(LintCatalog(*catalog).findings, IsEmpty());
}

TEST(CatalogLintTest, RemovedGAVersionIsAnError) {
  std::unique_ptr<Catalog> catalog = Load(R"(
binaryVersion: "1.36"
apis:
  - group: example.io
    version: v1
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.20", removed: "1.30"}
)");
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  ASSERT_THAT(report.findings,
              ElementsAre(Finding("ga-version-removed", "example.io/v1 widgets",
                                  "1.30")));
  EXPECT_THAT(report.findings[0].message,
              HasSubstr("GA API versions must not be removed within a major "
                        "version"));
}

struct BetaRemovalRow {
  const char* name;
  const char* deprecated;  // "" = none
  const char* removed;
  bool finding;
  const char* message;
};

class BetaRemovalTest : public ::testing::TestWithParam<BetaRemovalRow> {};

// Kubernetes deprecation policy, rule #4a: beta versions are served 3 releases
// (or 9 months) after deprecation. Rows from real lifecycles: batch/v1beta1
// CronJob (deprecated 1.21, removed 1.25), flowcontrol v1beta3 (1.29, 1.32).
TEST_P(BetaRemovalTest, ThreeReleasesAfterDeprecation) {
  const BetaRemovalRow& row = GetParam();
  std::string resource =
      std::string("{resource: widgets, kind: Widget, introduced: \"1.10\"") +
      (row.deprecated[0] != '\0'
           ? std::string(", deprecated: \"") + row.deprecated + "\""
           : std::string()) +
      ", removed: \"" + row.removed + "\"}";
  std::unique_ptr<Catalog> catalog = Load(std::string(R"(
binaryVersion: "1.36"
apis:
  - group: example.io
    version: v1beta1
    resources:
      - )") + resource + "\n");
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  if (!row.finding) {
    EXPECT_THAT(report.findings, IsEmpty());
    return;
  }
  ASSERT_THAT(report.findings,
              ElementsAre(Finding("beta-removed-too-soon",
                                  "example.io/v1beta1 widgets", row.removed)));
  EXPECT_THAT(report.findings[0].message, HasSubstr(row.message));
}

INSTANTIATE_TEST_SUITE_P(
    DeprecationPolicy, BetaRemovalTest,
    ::testing::Values(
        BetaRemovalRow{"FourReleases", "1.21", "1.25", false, ""},
        BetaRemovalRow{"ThreeReleases", "1.29", "1.32", false, ""},
        BetaRemovalRow{"TwoReleases", "1.20", "1.22", true,
                       "deprecated in 1.20 and removed in 1.22, 2 release(s) "
                       "later"},
        BetaRemovalRow{"SameRelease", "1.22", "1.22", true,
                       "0 release(s) later"},
        BetaRemovalRow{"NeverDeprecated", "", "1.22", true,
                       "removed in 1.22 without being deprecated first"}),
    [](const ::testing::TestParamInfo<BetaRemovalRow>& info) {
      return std::string(info.param.name);
    });

TEST(CatalogLintTest, AlphaRemovalsAreNotChecked) {
  std::unique_ptr<Catalog> catalog = Load(R"(
binaryVersion: "1.36"
apis:
  - group: example.io
    version: v1alpha1
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.30", removed: "1.31"}
)");
  ASSERT_NE(catalog, nullptr);
  EXPECT_THAT(LintCatalog(*catalog).findings, IsEmpty());
}

// Kubernetes' test/compatibility_lifecycle/cmd/feature_gates_test.go
// TestVerifyFeatureRemoval, row by row ("feature with no version specs" and
// "feature with invalid version" cannot happen: the catalog loader rejects
// such gates).
struct FeatureRemovalRow {
  const char* name;
  std::vector<FeatureSpec> specs;
  const char* removed;    // the test's currentVersion
  const char* threshold;  // the test's thresholdVersion (nil = 0.0)
  const char* error;      // "" = removal allowed
};

FeatureSpec Spec(const char* version, PreRelease stage, bool lock = false) {
  FeatureSpec spec;
  spec.version = *Version::Parse(version);
  spec.pre_release = stage;
  spec.lock_to_default = lock;
  spec.default_enabled = stage == PreRelease::kGA;
  return spec;
}

class VerifyFeatureRemovalTest
    : public ::testing::TestWithParam<FeatureRemovalRow> {};

TEST_P(VerifyFeatureRemovalTest, MatchesKubernetes) {
  const FeatureRemovalRow& row = GetParam();
  Feature feature;
  feature.name = "FeatureX";
  feature.specs = row.specs;
  const std::optional<std::string> problem = CheckFeatureRemoval(
      feature, *Version::Parse(row.removed), *Version::Parse(row.threshold));
  if (row.error[0] == '\0') {
    EXPECT_EQ(problem, std::nullopt) << *problem;
  } else {
    EXPECT_THAT(problem, Optional(HasSubstr(row.error)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kubernetes, VerifyFeatureRemovalTest,
    ::testing::Values(
        FeatureRemovalRow{"AlphaFeatureRemoved",
                          {Spec("1.0", PreRelease::kAlpha)},
                          "1.1",
                          "0.0",
                          ""},
        FeatureRemovalRow{"BetaFeatureRemoved",
                          {Spec("1.0", PreRelease::kBeta)},
                          "1.1",
                          "0.0",
                          "feature FeatureX cannot be removed while in beta"},
        FeatureRemovalRow{"GAFeatureRemovedBeforeAllowedVersion",
                          {Spec("1.0", PreRelease::kGA, true)},
                          "1.2",
                          "0.0",
                          "feature FeatureX cannot be removed until version "
                          "1.3 (required for emulation support)"},
        FeatureRemovalRow{"GAFeatureRemovedAfterAllowedVersion",
                          {Spec("1.0", PreRelease::kGA, true)},
                          "1.4",
                          "0.0",
                          ""},
        FeatureRemovalRow{"GAFeatureNotLockedToDefault",
                          {Spec("1.0", PreRelease::kGA)},
                          "1.4",
                          "0.0",
                          "feature FeatureX cannot be removed because it is "
                          "in GA or Deprecated state and is not locked to "
                          "default"},
        FeatureRemovalRow{"DeprecatedFeatureNotLockedToDefault",
                          {Spec("1.0", PreRelease::kDeprecated)},
                          "1.4",
                          "0.0",
                          "feature FeatureX cannot be removed because it is "
                          "in GA or Deprecated state and is not locked to "
                          "default"},
        FeatureRemovalRow{"GAFeatureRemovedAtThresholdVersion",
                          {Spec("1.4", PreRelease::kGA, true)},
                          "1.5",
                          "1.4",
                          ""}),
    [](const ::testing::TestParamInfo<FeatureRemovalRow>& info) {
      return std::string(info.param.name);
    });

// The four gates Kubernetes deleted after 1.36 (catalog/data/PROVENANCE.md:
// AnyVolumeDataSource, SchedulerQueueingHints, SidecarContainers,
// StructuredAuthenticationConfiguration), with their 1.36 specs and their
// real removal in 1.37: all allowed, the latest lock (1.34) is 3 releases
// before.
constexpr char kRemovedAfter136[] = R"(
binaryVersion: "1.36"
features:
  - name: AnyVolumeDataSource
    removed: "1.37"
    versionedSpecs:
      - {version: "1.18", default: false, lockToDefault: false, preRelease: Alpha}
      - {version: "1.24", default: true, lockToDefault: false, preRelease: Beta}
      - {version: "1.33", default: true, lockToDefault: true, preRelease: GA}
  - name: SchedulerQueueingHints
    removed: "1.37"
    versionedSpecs:
      - {version: "1.28", default: false, lockToDefault: false, preRelease: Beta}
      - {version: "1.32", default: true, lockToDefault: false, preRelease: Beta}
      - {version: "1.34", default: true, lockToDefault: true, preRelease: GA}
  - name: SidecarContainers
    removed: "1.37"
    versionedSpecs:
      - {version: "1.28", default: false, lockToDefault: false, preRelease: Alpha}
      - {version: "1.29", default: true, lockToDefault: false, preRelease: Beta}
      - {version: "1.33", default: true, lockToDefault: true, preRelease: GA}
  - name: StructuredAuthenticationConfiguration
    removed: "1.37"
    versionedSpecs:
      - {version: "1.29", default: false, lockToDefault: false, preRelease: Alpha}
      - {version: "1.30", default: true, lockToDefault: false, preRelease: Beta}
      - {version: "1.34", default: true, lockToDefault: true, preRelease: GA}
)";

TEST(CatalogLintTest, GatesKubernetesRemovedIn137WereAllowedToGo) {
  std::unique_ptr<Catalog> catalog = Load(kRemovedAfter136);
  ASSERT_NE(catalog, nullptr);
  EXPECT_THAT(LintCatalog(*catalog).findings, IsEmpty());
}

TEST(CatalogLintTest, RemovingALockedGateInsideTheEmulationWindowIsAnError) {
  // SchedulerQueueingHints (locked in 1.34) removed one release earlier.
  std::string yaml = kRemovedAfter136;
  yaml.replace(yaml.find("\"1.36\""), 6, "\"1.35\"");
  const size_t at =
      yaml.find("removed: \"1.37\"", yaml.find("name: SchedulerQueueingHints"));
  yaml.replace(at, 15, "removed: \"1.36\"");
  std::unique_ptr<Catalog> catalog =
      Load(absl::StrReplaceAll(yaml, {{"    removed: \"1.37\"\n", ""}}));
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  ASSERT_THAT(report.findings,
              ElementsAre(Finding("feature-removed-in-emulation-window",
                                  "feature SchedulerQueueingHints", "1.36")));
  EXPECT_THAT(report.findings[0].message,
              HasSubstr("is locked to its default only since 1.34: feature "
                        "SchedulerQueueingHints cannot be removed until "
                        "version 1.37 (required for emulation support): a "
                        "1.36 binary emulates down to 1.33"));
}

TEST(CatalogLintTest, PlannedRemovalMustBeAfterTheBinaryVersion) {
  std::string yaml = kRemovedAfter136;
  yaml.replace(yaml.find("removed: \"1.37\""), 15, "removed: \"1.36\"");
  EXPECT_THAT(catalog::ParseCatalog(yaml, "lint_test.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("feature \"AnyVolumeDataSource\": removed "
                                 "1.36 is not after binaryVersion 1.36")));
}

TEST(CatalogLintTest, PlannedRemovalMustBeAMajorMinorVersion) {
  std::string yaml = kRemovedAfter136;
  yaml.replace(yaml.find("removed: \"1.37\""), 15, "removed: \"soon\"");
  EXPECT_THAT(catalog::ParseCatalog(yaml, "lint_test.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("feature \"AnyVolumeDataSource\": removed "
                                 "\"soon\" is not a version")));
}

constexpr char kGAGates[] = R"(
binaryVersion: "1.36"
features:
  - name: OldUnlocked
    versionedSpecs:
      - {version: "1.28", default: false, lockToDefault: false, preRelease: Beta}
      - {version: "1.30", default: true, lockToDefault: false, preRelease: GA}
  - name: NewUnlocked
    versionedSpecs:
      - {version: "1.34", default: true, lockToDefault: false, preRelease: GA}
  - name: OldLocked
    versionedSpecs:
      - {version: "1.30", default: true, lockToDefault: true, preRelease: GA}
)";

TEST(CatalogLintTest, GAGateNotLockedForTheWholeEmulationWindowIsAWarning) {
  std::unique_ptr<Catalog> catalog = Load(kGAGates);
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  ASSERT_THAT(report.findings,
              ElementsAre(Finding("ga-feature-not-locked",
                                  "feature OldUnlocked", "1.30")));
  EXPECT_EQ(report.findings[0].severity, LintSeverity::kWarning);
  EXPECT_THAT(report.findings[0].message,
              HasSubstr("locking it in 1.37 allows removing it in 1.40"));
  EXPECT_EQ(report.warnings, 1);
  EXPECT_EQ(report.errors, 0);
}

TEST(CatalogLintTest, UnlockedGAGateWithAPlannedRemovalIsAnError) {
  std::string yaml = kGAGates;
  yaml.insert(yaml.find("    versionedSpecs"), "    removed: \"1.38\"\n");
  std::unique_ptr<Catalog> catalog = Load(yaml);
  ASSERT_NE(catalog, nullptr);
  EXPECT_THAT(LintCatalog(*catalog).findings,
              ElementsAre(Finding("feature-removed-in-emulation-window",
                                  "feature OldUnlocked", "1.38")));
}

TEST(CatalogLintTest, KnownExceptionsCountAsNeitherErrorNorWarning) {
  std::unique_ptr<Catalog> catalog = Load(R"(
binaryVersion: "1.36"
features:
  - name: AllowServiceExternalIPs
    versionedSpecs:
      - {version: "1.0", default: true, lockToDefault: false, preRelease: GA}
  - name: OtherOldGate
    versionedSpecs:
      - {version: "1.0", default: true, lockToDefault: false, preRelease: GA}
apis:
  - group: example.io
    version: v1
    resources:
      - {resource: widgets, kind: Widget, introduced: "1.20", removed: "1.30"}
)");
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  EXPECT_EQ(report.errors, 1);
  EXPECT_EQ(report.warnings, 1);
  EXPECT_EQ(report.exceptions, 1);
  // Errors, then warnings, then exceptions.
  EXPECT_THAT(
      report.findings,
      ElementsAre(
          Finding("ga-version-removed", "example.io/v1 widgets", "1.30"),
          Finding("ga-feature-not-locked", "feature OtherOldGate", "1.0"),
          AllOf(Finding("ga-feature-not-locked",
                        "feature AllowServiceExternalIPs", "1.0"),
                Field(&LintFinding::exception, HasSubstr("KEP-5707")))));
}

TEST(CatalogLintTest, SeverityNames) {
  EXPECT_EQ(LintSeverityName(LintSeverity::kError), "error");
  EXPECT_EQ(LintSeverityName(LintSeverity::kWarning), "warning");
}

// The API history against apis: both views of a scan must agree.
TEST(CatalogLintTest, ApiHistoryMustListEveryServedKind) {
  auto catalog = Load(R"(binaryVersion: "1.36"
apis:
  - group: apps
    version: v1
    resources:
      - {resource: deployments, kind: Deployment, introduced: "1.9"}
      - {resource: daemonsets, kind: DaemonSet, introduced: "1.9"}
apiHistory:
  - {group: apps, version: v1, kind: Deployment, introduced: "1.9"}
)");
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  EXPECT_THAT(report.findings,
              ElementsAre(AllOf(Finding("api-history-missing-kind",
                                        "apps/v1 daemonsets", "1.36"),
                                Field(&LintFinding::line, 7))));
  EXPECT_EQ(report.errors, 1);
}

TEST(CatalogLintTest, ApiHistoryMustNotEndAKindTheCatalogServes) {
  auto catalog = Load(R"(binaryVersion: "1.36"
apis:
  - group: storage.k8s.io
    version: v1beta1
    resources:
      - {resource: volumeattributesclasses, kind: VolumeAttributesClass,
         introduced: "1.31", deprecated: "1.34", removed: "1.37"}
apiHistory:
  - {group: storage.k8s.io, version: v1beta1, kind: VolumeAttributesClass,
     introduced: "1.31", deprecated: "1.34", typesDeleted: "1.35"}
)");
  ASSERT_NE(catalog, nullptr);
  const LintReport report = LintCatalog(*catalog);
  ASSERT_THAT(report.findings,
              ElementsAre(Finding("api-history-removed-but-served",
                                  "storage.k8s.io/v1beta1 "
                                  "volumeattributesclasses",
                                  "1.35")));
  EXPECT_THAT(report.findings[0].message,
              HasSubstr("apiHistory (line 9) ends storage.k8s.io/v1beta1 "
                        "VolumeAttributesClass in 1.35, but apis still serves "
                        "it in 1.35"));
}

TEST(CatalogLintTest, WithoutApiHistoryTheHistoryRulesDoNotApply) {
  auto catalog = Load(R"(binaryVersion: "1.36"
apis:
  - group: apps
    version: v1
    resources:
      - {resource: deployments, kind: Deployment, introduced: "1.9"}
)");
  ASSERT_NE(catalog, nullptr);
  EXPECT_THAT(LintCatalog(*catalog).findings, IsEmpty());
}

}  // namespace
}  // namespace compatd::engine
