// engine::CheckCRDManifest: a CRD as a manifest carries it, against
// apiextensions' storedVersions rule and the Cluster API removal rules of the
// catalog's history (the v1beta1 table of kubernetes-sigs/cluster-api #11894,
// cut short so that the manifest is the next release).

#include "engine/crd_manifest.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "engine/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::engine {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr char kCrd[] = "clusters.cluster.x-k8s.io";

// "v1beta1:s v1beta2:s*": s = served, u = unserved, * = storage.
std::vector<CRDVersion> Versions(const std::string& text) {
  std::vector<CRDVersion> out;
  for (absl::string_view item : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    std::pair<std::string, std::string> parts = absl::StrSplit(item, ':');
    out.push_back(CRDVersion{parts.first, parts.second[0] == 's',
                             absl::string_view(parts.second).back() == '*',
                             false});
  }
  return out;
}

CRDRelease Release(const std::string& name, const std::string& versions) {
  CRDRelease r;
  r.release = name;
  r.version = *Version::Parse(name);
  r.versions = Versions(versions);
  r.storage_version_migration = name != "v1.9";
  r.managed_fields_cleanup = r.storage_version_migration;
  return r;
}

// Cluster API's history up to and including `last` (v1.9 .. v1.18).
Catalog CapiCatalog(int last_minor) {
  const std::vector<std::pair<int, std::string>> rows = {
      {9, "v1alpha3:u v1alpha4:u v1beta1:s*"},
      {10, "v1alpha3:u v1alpha4:u v1beta1:s*"},
      {11, "v1alpha3:u v1alpha4:u v1beta1:s v1beta2:s*"},
      {12, "v1alpha3:u v1alpha4:u v1beta1:s v1beta2:s*"},
      {13, "v1beta1:s v1beta2:s*"},
      {14, "v1beta1:u v1beta2:s*"},
      {15, "v1beta1:u v1beta2:s*"},
      {16, "v1beta1:u v1beta2:s*"},
      {17, "v1beta1:u v1beta2:s*"},
      {18, "v1beta2:s*"},
  };
  CRDHistory history;
  history.name = kCrd;
  history.project = "Cluster API";
  history.upgrade_span = 3;
  history.deprecation_releases = 3;
  history.revert_buffer_releases = 1;
  for (const auto& [minor, versions] : rows) {
    if (minor > last_minor) break;
    history.releases.push_back(
        Release("v1." + std::to_string(minor), versions));
  }
  Catalog catalog;
  catalog.binary_version = Version::MajorMinor(1, 36);
  catalog.crds.push_back(history);
  return catalog;
}

TEST(CrdManifestTest, AReleaseOfTheHistoryIsClean) {
  const Catalog catalog = CapiCatalog(18);
  EXPECT_THAT(CheckCRDManifest(catalog, kCrd, Versions("v1beta1:u v1beta2:s*"),
                               {"v1beta2"}),
              IsEmpty());
  EXPECT_THAT(
      CheckCRDManifest(catalog, kCrd, Versions("v1beta2:s*"), {"v1beta2"}),
      IsEmpty());
}

TEST(CrdManifestTest, RemovingAVersionRightAfterItWasServedIsTooEarly) {
  // The history ends at v1.13, where v1beta1 is still served: a manifest
  // without it is v1.14, four releases before the plan's v1.18.
  const std::vector<CRDManifestFinding> findings = CheckCRDManifest(
      CapiCatalog(13), kCrd, Versions("v1beta2:s*"), {"v1beta2"});
  ASSERT_THAT(findings, Not(IsEmpty()));
  EXPECT_THAT(findings,
              Each(AllOf(Field(&CRDManifestFinding::release, "v1.14"),
                         Field(&CRDManifestFinding::version, "v1beta1"))));
  EXPECT_THAT(findings,
              Contains(Field(&CRDManifestFinding::message,
                             HasSubstr("taken as release v1.14, after the "
                                       "history's last, v1.13"))));
}

TEST(CrdManifestTest, UnservingDuringTheDeprecationPeriod) {
  // v1beta2 arrives in v1.11; v1beta1 must stay served 3 releases (to v1.13).
  const std::vector<CRDManifestFinding> findings = CheckCRDManifest(
      CapiCatalog(11), kCrd,
      Versions("v1alpha3:u v1alpha4:u v1beta1:u v1beta2:s*"), {"v1beta2"});
  EXPECT_THAT(findings,
              Contains(AllOf(Field(&CRDManifestFinding::rule,
                                   "unserved-during-deprecation"),
                             Field(&CRDManifestFinding::release, "v1.12"))));
}

TEST(CrdManifestTest, StoredVersionThatIsNoLongerListed) {
  const std::vector<CRDManifestFinding> findings = CheckCRDManifest(
      Catalog(), kCrd, Versions("v1beta2:s*"), {"v1beta1", "v1beta2"});
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].rule, "stored-version-not-listed");
  EXPECT_EQ(findings[0].version, "v1beta1");
  EXPECT_THAT(findings[0].message, HasSubstr("must appear in spec.versions"));
}

TEST(CrdManifestTest, ExactlyOneStorageVersion) {
  const std::vector<CRDManifestFinding> findings = CheckCRDManifest(
      CapiCatalog(18), kCrd, Versions("v1beta1:s* v1beta2:s*"), {});
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].rule, "storage-versions");
}

TEST(CrdManifestTest, ACrdWithoutHistoryHasOnlyTheApiextensionsRules) {
  EXPECT_THAT(CheckCRDManifest(CapiCatalog(13), "machines.cluster.x-k8s.io",
                               Versions("v1beta2:s*"), {"v1beta2"}),
              IsEmpty());
}

}  // namespace
}  // namespace compatd::engine
