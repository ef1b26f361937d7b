// The cluster's upgrade target (api::DeriveUpgradeTarget, derived once per
// snapshot for the metrics, the admission webhook and the client verdicts at
// the target) is planned across binaries: from the cluster's own line to the
// target's, one minor at a time, as PlanUpgrade over the lines plans it.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "api/catalog_answers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/catalog_set.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::api {
namespace {

std::shared_ptr<const engine::Catalog> Line(absl::string_view line,
                                            absl::string_view cluster = "") {
  const catalog::EmbeddedCatalog* embedded = catalog::FindEmbeddedCatalog(line);
  EXPECT_NE(embedded, nullptr) << line;
  if (embedded == nullptr) return nullptr;
  absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
      catalog::ParseCatalog(absl::StrCat(embedded->bytes, cluster),
                            embedded->name);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  if (!catalog.ok()) return nullptr;
  return *std::move(catalog);
}

int64_t Blockers(const UpgradeTargetAnswers& target, absl::string_view kind) {
  for (const auto& [name, count] : target.blockers) {
    if (name == kind) return count;
  }
  return -1;
}

// A 1.32 cluster whose kube-apiserver runs --feature-gates=AppArmor=true.
// k8s.io/kubernetes v1.32.5 pkg/features/versioned_kube_features.go
// registers AppArmor (GA, LockToDefault: true, "remove in 1.33"); v1.33.3's
// kube_features.go no longer does, and component-base's featuregate.Set
// refuses an unknown gate ("unrecognized feature gate: AppArmor"), so the
// 1.33 binary does not start with that flag: one blocking flag.
constexpr char kAppArmorCluster[] =
    "cluster:\n"
    "  featureGates: {AppArmor: true}\n"
    "  upgradeTarget: {binaryVersion: \"%s\"}\n";

TEST(UpgradeTargetTest, TheNextBinaryIsPlannedFromTheClustersLine) {
  const std::shared_ptr<const engine::Catalog> from =
      Line("1.32", absl::StrReplaceAll(kAppArmorCluster, {{"%s", "1.33"}}));
  ASSERT_NE(from, nullptr);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const engine::CatalogSet> set,
                       engine::CatalogSet::Make({from, Line("1.33")}));
  const UpgradeTargetAnswers target = DeriveUpgradeTarget(*set, *from);
  ASSERT_TRUE(target.present);
  ASSERT_TRUE(target.status.ok()) << target.status;
  EXPECT_EQ(target.line, 1u);
  EXPECT_EQ(target.catalog, set->lines()[1].get());
  EXPECT_EQ(target.versions.binary.MajorMinorString(), "1.33");
  EXPECT_EQ(Blockers(target, "flags"), 1);
  EXPECT_FALSE(target.served.empty());
}

// Two binaries ahead: the hops go through 1.33 (Kubernetes upgrades one
// minor at a time), and the flag 1.33 refuses blocks the whole way.
TEST(UpgradeTargetTest, ATargetTwoBinariesAheadIsPlannedThroughTheMiddle) {
  const std::shared_ptr<const engine::Catalog> from =
      Line("1.32", absl::StrReplaceAll(kAppArmorCluster, {{"%s", "1.34"}}));
  ASSERT_NE(from, nullptr);
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<const engine::CatalogSet> set,
      engine::CatalogSet::Make({from, Line("1.33"), Line("1.34")}));
  const UpgradeTargetAnswers target = DeriveUpgradeTarget(*set, *from);
  ASSERT_TRUE(target.status.ok()) << target.status;
  EXPECT_EQ(target.line, 2u);
  EXPECT_EQ(target.versions.binary.MajorMinorString(), "1.34");
  EXPECT_GE(Blockers(target, "flags"), 1);
  // Without the 1.33 line between them there is no plan (the hops need
  // every line), and the answer says why.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const engine::CatalogSet> gap,
                       engine::CatalogSet::Make({from, Line("1.34")}));
  const UpgradeTargetAnswers missing = DeriveUpgradeTarget(*gap, *from);
  EXPECT_FALSE(missing.status.ok());
  EXPECT_NE(missing.status.message().find("1.33"), std::string::npos)
      << missing.status;
}

// A cluster on the default line's binary with a target on the same binary
// (an emulation version step) is unchanged: no hop, no flag blocker.
TEST(UpgradeTargetTest, ATargetOnTheSameBinaryIsAnEmulationStep) {
  const std::shared_ptr<const engine::Catalog> from =
      Line("1.36",
           "cluster:\n"
           "  emulationVersion: \"1.35\"\n"
           "  upgradeTarget: {emulationVersion: \"1.36\"}\n");
  ASSERT_NE(from, nullptr);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const engine::CatalogSet> set,
                       engine::CatalogSet::Make({Line("1.35"), from}));
  const UpgradeTargetAnswers target = DeriveUpgradeTarget(*set, *from);
  ASSERT_TRUE(target.status.ok()) << target.status;
  EXPECT_EQ(target.line, 1u);
  EXPECT_EQ(target.versions.emulation.MajorMinorString(), "1.36");
  EXPECT_EQ(Blockers(target, "flags"), 0);
}

}  // namespace
}  // namespace compatd::api
