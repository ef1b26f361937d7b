// PlanUpgrade across kube-apiserver binaries (engine/upgrade_plan.h): hops of
// one binary minor, each answered from its own line's catalog, and the
// skip-level path through --emulated-version.
//
// The lines are small catalogs holding a few facts of each release, copied
// from Kubernetes at the patch the release-line note pins:
// - gates: pkg/features/kube_features.go of k8s.io/kubernetes v1.32.5,
//   v1.33.3, v1.34.7, v1.35.4 (versioned_kube_features.go in 1.32). AppArmor
//   (GA 1.31, locked, "remove in 1.33") is in 1.32 and not in 1.33;
//   PodDisruptionConditions (GA 1.31, locked, "remove in 1.33") is in 1.33 and
//   not in 1.34; PodIndexLabel (GA 1.32, locked, "remove in 1.35") is in 1.33
//   and 1.34, not 1.35; MemoryManager (GA 1.32, locked) is in 1.33 to 1.35,
//   not in 1.36.
// - APIs: k8s.io/api storagemigration/v1alpha1 (introduced 1.30) exists at
//   v0.33.3 and v0.34.7; v0.35.4 and v0.36.0 have storagemigration/v1beta1
//   only.
// - messages: component-base featuregate/feature_gate.go (unsafeSetFromMap:
//   "unrecognized feature gate: %s", "cannot set feature gate %v to %v,
//   feature is locked to %v") and apiserver pkg/server/resourceconfig/
//   helpers.go ("group version %s that has not been registered") at v0.33.0
//   to v0.36.0.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "catalog/catalog_loader.h"
#include "engine/catalog_set.h"
#include "engine/upgrade_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr char kAppArmor[] = R"(
  - name: AppArmor
    component: kube
    versionedSpecs:
      - {version: "1.4", default: true, lockToDefault: false, preRelease: Beta}
      - {version: "1.31", default: true, lockToDefault: true, preRelease: GA})";
constexpr char kPodDisruptionConditions[] = R"(
  - name: PodDisruptionConditions
    component: kube
    versionedSpecs:
      - {version: "1.25", default: false, lockToDefault: false, preRelease: Alpha}
      - {version: "1.26", default: true, lockToDefault: false, preRelease: Beta}
      - {version: "1.31", default: true, lockToDefault: true, preRelease: GA})";
constexpr char kPodIndexLabel[] = R"(
  - name: PodIndexLabel
    component: kube
    versionedSpecs:
      - {version: "1.28", default: true, lockToDefault: false, preRelease: Beta}
      - {version: "1.32", default: true, lockToDefault: true, preRelease: GA})";
constexpr char kMemoryManager[] = R"(
  - name: MemoryManager
    component: kube
    versionedSpecs:
      - {version: "1.21", default: false, lockToDefault: false, preRelease: Alpha}
      - {version: "1.22", default: true, lockToDefault: false, preRelease: Beta}
      - {version: "1.32", default: true, lockToDefault: true, preRelease: GA})";

constexpr char kCoreV1[] = R"(
  - group: ""
    version: v1
    resources:
      - {resource: pods, kind: Pod, introduced: "1.0"})";
constexpr char kStorageMigrationV1alpha1[] = R"(
  - group: storagemigration.k8s.io
    version: v1alpha1
    enabledByDefault: false
    resources:
      - {resource: storageversionmigrations, kind: StorageVersionMigration, introduced: "1.30"})";
constexpr char kStorageMigrationV1beta1[] = R"(
  - group: storagemigration.k8s.io
    version: v1beta1
    enabledByDefault: false
    resources:
      - {resource: storageversionmigrations, kind: StorageVersionMigration, introduced: "1.35"})";

std::shared_ptr<const Catalog> Line(absl::string_view binary,
                                    std::vector<absl::string_view> features,
                                    std::vector<absl::string_view> apis) {
  std::string yaml = absl::StrCat("binaryVersion: \"", binary, "\"\n");
  absl::StrAppend(&yaml, features.empty() ? "features: []" : "features:");
  for (absl::string_view f : features) absl::StrAppend(&yaml, f);
  absl::StrAppend(&yaml, "\napis:");
  for (absl::string_view a : apis) absl::StrAppend(&yaml, a);
  absl::StrAppend(&yaml, "\n");
  absl::StatusOr<std::unique_ptr<Catalog>> parsed =
      catalog::ParseCatalog(yaml, absl::StrCat("test:kubernetes-", binary));
  EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << yaml;
  if (!parsed.ok()) return nullptr;
  return std::shared_ptr<const Catalog>(std::move(*parsed));
}

class UpgradePlanLinesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    lines_ = new std::shared_ptr<const CatalogSet>(
        CatalogSet::Make(AllLines()).value());
  }
  static void TearDownTestSuite() {
    delete lines_;
    lines_ = nullptr;
  }

  static std::vector<std::shared_ptr<const Catalog>> AllLines() {
    return {
        Line("1.32.5", {kAppArmor}, {kCoreV1, kStorageMigrationV1alpha1}),
        Line("1.33.3",
             {kMemoryManager, kPodDisruptionConditions, kPodIndexLabel},
             {kCoreV1, kStorageMigrationV1alpha1}),
        Line("1.34.7", {kMemoryManager, kPodIndexLabel},
             {kCoreV1, kStorageMigrationV1alpha1}),
        Line("1.35.4", {kMemoryManager}, {kCoreV1, kStorageMigrationV1beta1}),
        Line("1.36.0", {}, {kCoreV1, kStorageMigrationV1beta1}),
    };
  }

  static const CatalogSet& lines() { return **lines_; }

  static UpgradePlanQuery Binaries(absl::string_view from,
                                   absl::string_view to) {
    UpgradePlanQuery q;
    q.from.binary_version = from;
    q.to.binary_version = to;
    return q;
  }

  static std::vector<const PlanItem*> Items(const UpgradePath& path,
                                            absl::string_view rule) {
    std::vector<const PlanItem*> out;
    for (const PlanItem& item : path.items) {
      if (item.rule == rule) out.push_back(&item);
    }
    return out;
  }

  static std::vector<std::string> StepNames(const UpgradePath& path) {
    std::vector<std::string> out;
    for (const UpgradeStep& s : path.steps) out.push_back(s.name);
    return out;
  }

  static std::shared_ptr<const CatalogSet>* lines_;
};

std::shared_ptr<const CatalogSet>* UpgradePlanLinesTest::lines_ = nullptr;

Version V(uint64_t minor) { return Version::MajorMinor(1, minor); }

std::vector<std::string> StepNamesOf(const UpgradePath& path) {
  std::vector<std::string> out;
  for (const UpgradeStep& s : path.steps) out.push_back(s.name);
  return out;
}

// The issue's first "done when": binary 1.32 with --feature-gates=
// AppArmor=true to 1.33 blocks on AppArmor (kube-apiserver 1.33 exits with
// component-base's "unrecognized feature gate: AppArmor").
TEST_F(UpgradePlanLinesTest, AppArmorOn132BlocksTheHopTo133) {
  UpgradePlanQuery q = Binaries("1.32", "1.33");
  q.from.feature_gates = "AppArmor=true";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(lines(), q));
  EXPECT_EQ(plan.path.name, "one minor at a time");
  EXPECT_TRUE(plan.path.supported);
  EXPECT_THAT(plan.alternatives, IsEmpty());  // one minor: no skip
  // 1.33 with --emulated-version=1.32: min-compatibility max(1.31, floor
  // 1.31); then emulation 1.33 (min-compatibility 1.32: no flag before 1.35).
  ASSERT_THAT(StepNames(plan.path),
              ElementsAre("binaries 1.33", "emulation 1.33"));
  // The target's binary as given; the catalog names the patch it describes.
  EXPECT_EQ(plan.path.steps[0].versions.binary.ToString(), "1.33");
  EXPECT_EQ(plan.path.steps[0].versions.emulation, V(32));
  EXPECT_EQ(plan.path.steps[0].versions.min_compatibility, V(31));
  EXPECT_EQ(plan.path.steps[1].versions.emulation, V(33));
  EXPECT_EQ(plan.path.steps[1].versions.min_compatibility, V(32));
  EXPECT_EQ(plan.path.steps[0].catalog,
            "test:kubernetes-1.33.3 (kube-apiserver 1.33.3)");

  const std::vector<const PlanItem*> unknown =
      Items(plan.path, "feature-gate-unknown");
  ASSERT_THAT(unknown, SizeIs(1));
  EXPECT_EQ(unknown[0]->step, 1);
  EXPECT_TRUE(unknown[0]->blocking);
  EXPECT_EQ(unknown[0]->subject,
            "--feature-gates AppArmor=true (from.feature_gates)");
  EXPECT_THAT(unknown[0]->reason,
              HasSubstr("unrecognized feature gate: AppArmor"));
  EXPECT_THAT(unknown[0]->action,
              HasSubstr("remove AppArmor from --feature-gates"));
  EXPECT_EQ(plan.path.blockers, 1);
  // The gate itself is gone from the binary.
  const std::vector<const PlanItem*> removed =
      Items(plan.path, "feature-gate-removed");
  ASSERT_THAT(removed, SizeIs(1));
  EXPECT_EQ(removed[0]->subject, "feature gate AppArmor");
  EXPECT_EQ(removed[0]->step, 1);
}

// A gate locked to its default, set the other way, is refused at start-up by
// the binary that locks it ("cannot set feature gate AppArmor to false,
// feature is locked to true"): from must describe a cluster that runs.
TEST_F(UpgradePlanLinesTest, FromFlagsTheBinaryRefusesAreAnError) {
  UpgradePlanQuery q = Binaries("1.32", "1.33");
  q.from.feature_gates = "AppArmor=false";
  EXPECT_THAT(PlanUpgrade(lines(), q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot set feature gate AppArmor to false, "
                                 "feature is locked to true")));
}

// The issue's second "done when": 1.33 to 1.36 hops on the 1.34 and 1.35
// binaries, each in KEP-4330's order, and each gate flag blocks the hop to the
// first binary that does not register it.
TEST_F(UpgradePlanLinesTest, From133To136HopsThroughEveryBinary) {
  UpgradePlanQuery q = Binaries("1.33", "1.36");
  q.from.feature_gates =
      "PodDisruptionConditions=true,PodIndexLabel=true,MemoryManager=true";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(lines(), q));
  EXPECT_EQ(plan.from.emulation, V(33));
  EXPECT_EQ(plan.from.min_compatibility, V(32));
  EXPECT_EQ(plan.to.emulation, V(36));
  EXPECT_EQ(plan.to.min_compatibility, V(35));
  ASSERT_THAT(
      StepNames(plan.path),
      ElementsAre("binaries 1.34", "emulation 1.34", "binaries 1.35",
                  "emulation 1.35", "min-compatibility 1.34", "binaries 1.36",
                  "emulation 1.36", "min-compatibility 1.35"));
  const std::vector<std::tuple<std::string, int, int>> versions = {
      {"1.34.7", 33, 32}, {"1.34.7", 34, 33}, {"1.35.4", 34, 33},
      {"1.35.4", 35, 33}, {"1.35.4", 35, 34}, {"1.36", 35, 34},
      {"1.36", 36, 34},   {"1.36", 36, 35}};
  for (size_t i = 0; i < versions.size(); ++i) {
    SCOPED_TRACE(plan.path.steps[i].name);
    const UpgradeStep& step = plan.path.steps[i];
    EXPECT_EQ(step.versions.binary.ToString(), std::get<0>(versions[i]));
    EXPECT_EQ(step.versions.emulation, V(std::get<1>(versions[i])));
    EXPECT_EQ(step.versions.min_compatibility, V(std::get<2>(versions[i])));
    EXPECT_EQ(step.rollback_to,
              step.versions.min_compatibility.MajorMinorString());
  }
  const std::vector<const PlanItem*> unknown =
      Items(plan.path, "feature-gate-unknown");
  ASSERT_THAT(unknown, SizeIs(3));
  EXPECT_EQ(unknown[0]->step, 1);
  EXPECT_THAT(unknown[0]->reason,
              HasSubstr("unrecognized feature gate: PodDisruptionConditions"));
  EXPECT_EQ(unknown[1]->step, 3);
  EXPECT_THAT(unknown[1]->reason,
              HasSubstr("unrecognized feature gate: PodIndexLabel"));
  EXPECT_EQ(unknown[2]->step, 6);
  EXPECT_THAT(unknown[2]->reason,
              HasSubstr("unrecognized feature gate: MemoryManager"));
  for (const PlanItem* item : unknown) EXPECT_TRUE(item->blocking);
  EXPECT_EQ(plan.path.blockers, 3);

  // The skip-level path: 1.36 accepts --emulated-version back to 1.33.
  ASSERT_THAT(plan.alternatives, SizeIs(1));
  const UpgradePath& skip = plan.alternatives[0];
  EXPECT_EQ(skip.name, "skip-level through --emulated-version");
  EXPECT_FALSE(skip.supported);
  EXPECT_THAT(skip.support, HasSubstr("KEP-4330"));
  ASSERT_THAT(StepNames(skip),
              ElementsAre("binaries 1.36", "emulation 1.34", "emulation 1.35",
                          "emulation 1.36", "min-compatibility 1.34",
                          "min-compatibility 1.35"));
  // Straight to 1.36 emulating 1.33: min-compatibility rises to 1.36's floor.
  EXPECT_EQ(skip.steps[0].versions.emulation, V(33));
  EXPECT_EQ(skip.steps[0].versions.min_compatibility, V(33));
  // All three gates are unknown to the 1.36 binary at once.
  const std::vector<const PlanItem*> skip_unknown =
      Items(skip, "feature-gate-unknown");
  ASSERT_THAT(skip_unknown, SizeIs(3));
  for (const PlanItem* item : skip_unknown) EXPECT_EQ(item->step, 1);
}

// A --runtime-config entry for a group-version the next binary does not
// register: kube-apiserver 1.35 refuses to start ("group version ... that has
// not been registered"); the API stops being served at the hop.
TEST_F(UpgradePlanLinesTest, RuntimeConfigOfAGroupVersionTheNextBinaryLacks) {
  UpgradePlanQuery q = Binaries("1.34", "1.35");
  q.from.runtime_config = "storagemigration.k8s.io/v1alpha1=true";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(lines(), q));
  const std::vector<const PlanItem*> refused =
      Items(plan.path, "runtime-config-refused");
  ASSERT_THAT(refused, SizeIs(1));
  EXPECT_EQ(refused[0]->step, 1);
  EXPECT_TRUE(refused[0]->blocking);
  EXPECT_EQ(refused[0]->subject,
            "--runtime-config storagemigration.k8s.io/v1alpha1=true");
  EXPECT_THAT(refused[0]->reason,
              HasSubstr("group version storagemigration.k8s.io/v1alpha1 that "
                        "has not been registered"));
  EXPECT_THAT(refused[0]->action,
              HasSubstr("remove storagemigration.k8s.io/v1alpha1=true from "
                        "--runtime-config"));
  const std::vector<const PlanItem*> stops =
      Items(plan.path, "api-stops-serving");
  ASSERT_THAT(stops, SizeIs(1));
  EXPECT_EQ(stops[0]->subject, "storagemigration.k8s.io/v1alpha1");
  EXPECT_EQ(stops[0]->step, 1);
  EXPECT_TRUE(stops[0]->blocking);
  EXPECT_THAT(stops[0]->reason, HasSubstr("storageversionmigrations"));
}

// Clients: every step records every client's verdict, and a client out of
// the allowance is an item at the first step of each hop that leaves it (the
// KEP-4330 skew table: kubelet from min-compatibility - 2 to emulation).
TEST_F(UpgradePlanLinesTest, ClientVerdictsAtEveryHop) {
  UpgradePlanQuery q = Binaries("1.33", "1.36");
  q.clients.push_back(PlanClient{"kubelet", "1.31", "clients[0]", true});
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(lines(), q));
  std::vector<std::string> verdicts;
  for (const UpgradeStep& step : plan.path.steps) {
    ASSERT_THAT(step.clients, SizeIs(1));
    verdicts.push_back(step.clients[0].verdict);
  }
  // Min-compatibility 1.32, 1.33, 1.33, 1.33, 1.34, 1.34, 1.34, 1.35.
  EXPECT_THAT(verdicts,
              ElementsAre("allowed", "allowed", "allowed", "allowed", "too-old",
                          "too-old", "too-old", "too-old"));
  EXPECT_EQ(plan.path.steps[4].clients[0].min_version, "1.32");
  const std::vector<const PlanItem*> old = Items(plan.path, "client-too-old");
  ASSERT_THAT(old, SizeIs(2));
  EXPECT_EQ(old[0]->step, 5);  // min-compatibility 1.34 on the 1.35 binary
  EXPECT_EQ(old[1]->step, 6);  // the hop to 1.36
}

// Bad input names the field, the value and what is accepted.
TEST_F(UpgradePlanLinesTest, BadBinariesAreInvalidArgument) {
  EXPECT_THAT(PlanUpgrade(lines(), Binaries("1.35", "1.34")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("to.binary_version \"1.34\" is older "
                                       "than from's binary 1.35"),
                             HasSubstr("1.35 or later are accepted"))));
  EXPECT_THAT(PlanUpgrade(lines(), Binaries("1.33", "1.37")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("to.binary_version \"1.37\": no "
                                       "catalog describes kube-apiserver 1.37"),
                             HasSubstr("1.32, 1.33, 1.34, 1.35, 1.36"))));
  EXPECT_THAT(PlanUpgrade(lines(), Binaries("1.x", "1.36")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("from.binary_version \"1.x\" is not a "
                                 "kube-apiserver version")));
  EXPECT_THAT(PlanUpgrade(lines(), Binaries("1.30", "1.33")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("from.binary_version \"1.30\": no catalog")));
  // Backwards in emulation on a newer binary.
  UpgradePlanQuery q = Binaries("1.35", "1.36");
  q.to.emulation_version = "1.34";
  EXPECT_THAT(PlanUpgrade(lines(), q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("to.emulation_version 1.34 is older than "
                                 "from's 1.35")));
}

TEST_F(UpgradePlanLinesTest, AMissingLineInBetweenIsInvalidArgument) {
  std::vector<std::shared_ptr<const Catalog>> all = AllLines();
  all.erase(all.begin() + 3);  // no 1.35
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const CatalogSet> gap,
                       CatalogSet::Make(std::move(all)));
  EXPECT_THAT(
      PlanUpgrade(*gap, Binaries("1.33", "1.36")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("to.binary_version \"1.36\""),
                     HasSubstr("no catalog describes 1.35"),
                     HasSubstr("the release lines compatd has are 1.32, "
                               "1.33, 1.34, 1.36"))));
  // 1.33 to 1.34 needs no 1.35.
  EXPECT_OK(PlanUpgrade(*gap, Binaries("1.33", "1.34")).status());
}

// Each end's emulation version is kept: from a 1.34 binary emulating 1.33 the
// hop holds 1.33 on the 1.35 binary, then raises it one minor at a time.
TEST_F(UpgradePlanLinesTest, AnEmulatingFromIsHeldThroughTheHop) {
  UpgradePlanQuery q = Binaries("1.34", "1.35");
  q.from.emulation_version = "1.33";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(lines(), q));
  ASSERT_THAT(StepNames(plan.path),
              ElementsAre("binaries 1.35", "emulation 1.34", "emulation 1.35",
                          "min-compatibility 1.33", "min-compatibility 1.34"));
  EXPECT_EQ(plan.path.steps[0].versions.emulation, V(33));
  EXPECT_EQ(plan.path.steps[0].versions.min_compatibility, V(32));
}

// StorageVersionMigrations into 1.37, on two small lines holding these facts:
// StorageVersionMigrator {1.30 Alpha off}, {1.35 Beta off} in 1.36 and
// {1.37 GA on} added in 1.37 (pkg/features/kube_features.go at v1.36.0 and at
// ae5d4d35, the 1.37 code freeze); storagemigration.k8s.io v1beta1
// (introduced 1.35, a beta off by default) and v1 (introduced 1.37),
// MutatingAdmissionPolicy v1beta1 (1.34) and v1 (1.36), Workload v1alpha2
// (1.36) and v1beta1 (1.37) (k8s.io/api zz_generated.prerelease-lifecycle.go
// at v0.36.0 and 10b39a39); the storage overrides of
// pkg/kubeapiserver/default_storage_factory_builder.go (1.36:
// mutatingadmissionpolicies v1beta1, workloads v1alpha2; 864752076be6:
// workloads v1beta1, no mutatingadmissionpolicies override). A 1.37 binary
// emulating 1.36 has no v1 to enable (apiserver pkg/server/resourceconfig
// helpers.go: an unintroduced version explicitly enabled is an error), so the
// hop's migrations are v1beta1; from emulation 1.37, v1 is served by default.
TEST(UpgradePlanMigrationsTest, V1beta1AtTheHopTo137AndV1FromEmulation137) {
  auto line = [](absl::string_view binary, absl::string_view gate,
                 absl::string_view apis, absl::string_view overrides) {
    const std::string yaml =
        absl::StrCat("binaryVersion: \"", binary, "\"\nfeatures:", gate,
                     "\napis:", apis, "\nstorageOverrides:", overrides, "\n");
    absl::StatusOr<std::unique_ptr<Catalog>> parsed =
        catalog::ParseCatalog(yaml, absl::StrCat("test:kubernetes-", binary));
    EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << yaml;
    return std::shared_ptr<const Catalog>(parsed.ok() ? std::move(*parsed)
                                                      : nullptr);
  };
  constexpr char kMigrator136[] = R"(
  - name: StorageVersionMigrator
    component: kube
    versionedSpecs:
      - {version: "1.30", default: false, lockToDefault: false, preRelease: Alpha}
      - {version: "1.35", default: false, lockToDefault: false, preRelease: Beta})";
  const std::string migrator137 = absl::StrCat(
      kMigrator136,
      "\n      - {version: \"1.37\", default: true, lockToDefault: false, "
      "preRelease: GA}");
  constexpr char kMutatingAdmissionPolicies[] = R"(
  - group: admissionregistration.k8s.io
    version: v1
    resources:
      - {resource: mutatingadmissionpolicies, kind: MutatingAdmissionPolicy, introduced: "1.36"}
  - group: admissionregistration.k8s.io
    version: v1beta1
    enabledByDefault: false
    resources:
      - {resource: mutatingadmissionpolicies, kind: MutatingAdmissionPolicy, introduced: "1.34"})";
  const std::string apis136 =
      absl::StrCat(kCoreV1, kMutatingAdmissionPolicies, R"(
  - group: scheduling.k8s.io
    version: v1alpha2
    enabledByDefault: false
    resources:
      - {resource: workloads, kind: Workload, introduced: "1.36"})",
                   kStorageMigrationV1beta1);
  const std::string apis137 =
      absl::StrCat(kCoreV1, kMutatingAdmissionPolicies, R"(
  - group: scheduling.k8s.io
    version: v1beta1
    enabledByDefault: false
    resources:
      - {resource: workloads, kind: Workload, introduced: "1.37"}
  - group: storagemigration.k8s.io
    version: v1
    resources:
      - {resource: storageversionmigrations, kind: StorageVersionMigration, introduced: "1.37"})",
                   kStorageMigrationV1beta1);
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<const CatalogSet> set,
      CatalogSet::Make({line("1.36.0", kMigrator136, apis136,
                             R"(
  - {group: admissionregistration.k8s.io, resource: mutatingadmissionpolicies, version: v1beta1}
  - {group: scheduling.k8s.io, resource: workloads, version: v1alpha2})"),
                        line("1.37.0", migrator137, apis137, R"(
  - {group: scheduling.k8s.io, resource: workloads, version: v1beta1})")}));
  UpgradePlanQuery q;
  q.from.binary_version = "1.36";
  q.to.binary_version = "1.37";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(*set, q));
  ASSERT_THAT(
      StepNamesOf(plan.path),
      ElementsAre("binaries 1.37", "emulation 1.37", "min-compatibility 1.36"));
  ASSERT_THAT(plan.path.migrations, SizeIs(2));
  const StorageMigration& workloads = plan.path.migrations[0];
  EXPECT_EQ(workloads.step, 1);
  EXPECT_EQ(workloads.resource, "workloads");
  EXPECT_EQ(workloads.from_version, "v1alpha2");
  EXPECT_EQ(workloads.to_version, "v1beta1");
  EXPECT_EQ(workloads.api_version, "storagemigration.k8s.io/v1beta1");
  EXPECT_EQ(workloads.needs,
            "--runtime-config=storagemigration.k8s.io/v1beta1=true and "
            "--feature-gates=StorageVersionMigrator=true");
  const StorageMigration& policies = plan.path.migrations[1];
  EXPECT_EQ(policies.step, 3);
  EXPECT_EQ(policies.resource, "mutatingadmissionpolicies");
  EXPECT_EQ(policies.to_version, "v1");
  EXPECT_EQ(policies.api_version, "storagemigration.k8s.io/v1");
  EXPECT_EQ(policies.needs, "");
  EXPECT_THAT(policies.manifest,
              AllOf(HasSubstr("apiVersion: storagemigration.k8s.io/v1\n"
                              "kind: StorageVersionMigration\n"),
                    HasSubstr("    group: \"admissionregistration.k8s.io\"\n"
                              "    resource: mutatingadmissionpolicies\n")));
}

}  // namespace
}  // namespace compatd::engine
