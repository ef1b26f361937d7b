// PlanCRDVersionRemoval: the two tables of the Cluster API issue on removing
// CRD versions (kubernetes-sigs/cluster-api #11894: "v1alpha3 & v1alpha4" and
// "v1beta1"; docs/kubernetes-rules.md#crd-version-removal), then one rule per
// test.

#include "engine/crd_removal.h"

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "catalog/catalog_loader.h"
#include "engine/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr bool kMigrator = true;  // storage version migration + cleanup

// One release row: "v1alpha3:u v1beta1:s*" lists v1alpha3 unserved and
// v1beta1 served as the storage version (s = served, u = unserved, * =
// storage).
CRDRelease Row(const std::string& release, const std::string& versions,
               bool migrator = false) {
  CRDRelease r;
  r.release = release;
  r.version = *Version::Parse(release);
  r.storage_version_migration = migrator;
  r.managed_fields_cleanup = migrator;
  for (absl::string_view item :
       absl::StrSplit(versions, ' ', absl::SkipEmpty())) {
    std::pair<std::string, std::string> parts = absl::StrSplit(item, ':');
    CRDVersion v;
    v.name = parts.first;
    v.served = parts.second[0] == 's';
    v.storage = absl::string_view(parts.second).back() == '*';
    r.versions.push_back(v);
  }
  return r;
}

CRDHistory History(std::vector<CRDRelease> releases, int deprecation = 3,
                   int buffer = 1, int span = 3) {
  CRDHistory h;
  h.name = "clusters.cluster.x-k8s.io";
  h.project = "Cluster API";
  h.upgrade_span = span;
  h.deprecation_releases = deprecation;
  h.revert_buffer_releases = buffer;
  h.releases = std::move(releases);
  return h;
}

// The seed's two tables as one history: the columns of both are versions of
// clusters.cluster.x-k8s.io.
CRDHistory ClusterApi() {
  return History({
      Row("v1.9", "v1alpha3:u v1alpha4:u v1beta1:s*"),
      Row("v1.10", "v1alpha3:u v1alpha4:u v1beta1:s*", kMigrator),
      Row("v1.11", "v1alpha3:u v1alpha4:u v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.12", "v1alpha3:u v1alpha4:u v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.13", "v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.14", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.15", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.16", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.17", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.18", "v1beta2:s*", kMigrator),
  });
}

// The releases each table's notes name: when the version may stop being
// served and when it may be removed. Table "v1alpha3 & v1alpha4": unserved
// before v1.9, "keep v1alpha3 + v1alpha4 around for 3 versions after the CRD
// migrator has been added" (v1.10-v1.12), removed in v1.13. Table "v1beta1":
// "keep v1beta1 served for 3 versions after introduction of v1beta2"
// (v1.11-v1.13), unserved in v1.14, "keep v1beta1 around for 3 versions after
// it was unserved" plus one buffer release, removed in v1.18.
struct SeedRow {
  const char* version;
  const char* earliest_unserve;
  const char* earliest_removal;
  const char* storage_migration_from;
  const char* cleanup_from;
};

class SeedTableTest : public ::testing::TestWithParam<SeedRow> {};

TEST_P(SeedTableTest, EarliestReleasesAreTheTables) {
  const SeedRow& row = GetParam();
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(ClusterApi(), row.version));
  EXPECT_EQ(plan.earliest_unserve_release, row.earliest_unserve);
  EXPECT_EQ(plan.earliest_removal_release, row.earliest_removal);
  EXPECT_EQ(plan.replacement, "v1beta2");
  EXPECT_THAT(plan.violations, IsEmpty()) << plan.violations[0].message;
  EXPECT_THAT(
      plan.steps,
      ElementsAre(
          AllOf(Field(&CRDRemovalStep::name, "stop-serving"),
                Field(&CRDRemovalStep::release, row.earliest_unserve)),
          AllOf(Field(&CRDRemovalStep::name, "storage-version-migration"),
                Field(&CRDRemovalStep::release, row.storage_migration_from)),
          AllOf(Field(&CRDRemovalStep::name, "managed-fields-cleanup"),
                Field(&CRDRemovalStep::release, row.cleanup_from)),
          AllOf(Field(&CRDRemovalStep::name, "remove"),
                Field(&CRDRemovalStep::release, row.earliest_removal))));
  EXPECT_THAT(plan.reason, HasSubstr("the history follows the rules"));
}

INSTANTIATE_TEST_SUITE_P(
    ClusterApiIssue, SeedTableTest,
    ::testing::Values(
        // version, unserve, removal, migration from, cleanup from
        SeedRow{"v1alpha3", "v1.9", "v1.13", "v1.9", "v1.9"},
        SeedRow{"v1alpha4", "v1.9", "v1.13", "v1.9", "v1.9"},
        SeedRow{"v1beta1", "v1.14", "v1.18", "v1.11", "v1.14"}),
    [](const ::testing::TestParamInfo<SeedRow>& info) {
      return std::string(info.param.version);
    });

// Each table is tight: moving its removal (or v1beta1's unserve) one release
// earlier breaks exactly the rule its note gives.
struct EarlierRow {
  const char* name;
  std::vector<CRDRelease> releases;
  const char* version;
  const char* release;  // where the violation is
  const char* rule;
  const char* message;
};

class EarlierThanSeedTest : public ::testing::TestWithParam<EarlierRow> {};

TEST_P(EarlierThanSeedTest, IsAViolation) {
  const EarlierRow& row = GetParam();
  ASSERT_OK_AND_ASSIGN(
      CRDRemovalPlan plan,
      PlanCRDVersionRemoval(History(row.releases), row.version));
  ASSERT_THAT(plan.violations, SizeIs(1));
  EXPECT_EQ(plan.violations[0].release, row.release);
  EXPECT_EQ(plan.violations[0].rule, row.rule);
  EXPECT_THAT(plan.violations[0].message, HasSubstr(row.message));
  EXPECT_THAT(plan.reason, HasSubstr(row.rule));
}

INSTANTIATE_TEST_SUITE_P(
    ClusterApiIssue, EarlierThanSeedTest,
    ::testing::Values(
        // v1alpha3 removed in v1.12: an upgrade from v1.9 never ran the
        // migrator (added in v1.10).
        EarlierRow{"AlphaRemovedInV112",
                   {Row("v1.9", "v1alpha3:u v1beta1:s*"),
                    Row("v1.10", "v1alpha3:u v1beta1:s*", kMigrator),
                    Row("v1.11", "v1alpha3:u v1beta1:s*", kMigrator),
                    Row("v1.12", "v1beta1:s*", kMigrator)},
                   "v1alpha3",
                   "v1.12",
                   "removed-before-cleanup",
                   "v1.9, a release an n-3 upgrade to v1.12 can start from "
                   "(v1.9 to v1.11), runs no storage version migration"},
        // v1beta1 removed in v1.17: v1.14 is the buffer release.
        EarlierRow{"BetaRemovedInV117",
                   {Row("v1.11", "v1beta1:s v1beta2:s*", kMigrator),
                    Row("v1.12", "v1beta1:s v1beta2:s*", kMigrator),
                    Row("v1.13", "v1beta1:s v1beta2:s*", kMigrator),
                    Row("v1.14", "v1beta1:u v1beta2:s*", kMigrator),
                    Row("v1.15", "v1beta1:u v1beta2:s*", kMigrator),
                    Row("v1.16", "v1beta1:u v1beta2:s*", kMigrator),
                    Row("v1.17", "v1beta2:s*", kMigrator)},
                   "v1beta1",
                   "v1.17",
                   "removed-during-revert-buffer",
                   "v1.14, a release an n-3 upgrade to v1.17 can start from"},
        // v1beta1 unserved in v1.13: v1beta2 exists only since v1.11.
        EarlierRow{"BetaUnservedInV113",
                   {Row("v1.10", "v1beta1:s*", kMigrator),
                    Row("v1.11", "v1beta1:s v1beta2:s*", kMigrator),
                    Row("v1.12", "v1beta1:s v1beta2:s*", kMigrator),
                    Row("v1.13", "v1beta1:u v1beta2:s*", kMigrator)},
                   "v1beta1",
                   "v1.13",
                   "unserved-during-deprecation",
                   "v1.13 stops serving v1beta1 2 release(s) after v1beta2 "
                   "was added in v1.11; deprecationReleases 3 keeps it served "
                   "through v1.13 (earliest: v1.14)"}),
    [](const ::testing::TestParamInfo<EarlierRow>& info) {
      return std::string(info.param.name);
    });

TEST(CRDRemovalTest, ExampleCatalogIsTheSeedHistory) {
  std::ifstream in(std::string(COMPATD_SOURCE_DIR) +
                   "/examples/cluster-api.yaml");
  std::stringstream bytes;
  bytes << in.rdbuf();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Catalog> catalog,
                       catalog::ParseCatalog(bytes.str(), "cluster-api.yaml"));
  ASSERT_THAT(catalog->crds, SizeIs(1));
  const CRDHistory& history = catalog->crds[0];
  const CRDHistory seed = ClusterApi();
  EXPECT_EQ(history.name, seed.name);
  EXPECT_EQ(history.upgrade_span, 3);
  EXPECT_EQ(history.deprecation_releases, 3);
  EXPECT_EQ(history.revert_buffer_releases, 1);
  ASSERT_EQ(history.releases.size(), seed.releases.size());
  for (size_t i = 0; i < seed.releases.size(); ++i) {
    const CRDRelease& got = history.releases[i];
    const CRDRelease& want = seed.releases[i];
    EXPECT_EQ(got.release, want.release);
    EXPECT_EQ(got.storage_version_migration, want.storage_version_migration)
        << want.release;
    EXPECT_EQ(got.managed_fields_cleanup, want.managed_fields_cleanup)
        << want.release;
    ASSERT_EQ(got.versions.size(), want.versions.size()) << want.release;
    for (size_t j = 0; j < want.versions.size(); ++j) {
      EXPECT_EQ(got.versions[j].name, want.versions[j].name);
      EXPECT_EQ(got.versions[j].served, want.versions[j].served);
      EXPECT_EQ(got.versions[j].storage, want.versions[j].storage);
    }
  }
}

TEST(CRDRemovalTest, WithoutTheBufferReleaseBetaMayGoInV117) {
  CRDHistory history = ClusterApi();
  history.revert_buffer_releases = 0;
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  // n-3 alone: v1.14, v1.15 and v1.16 no longer serve v1beta1 and clean up.
  EXPECT_EQ(plan.earliest_removal_release, "v1.17");
}

TEST(CRDRemovalTest, RemovingAnEarlierStorageVersionIsFlagged) {
  const CRDHistory history = History({
      Row("v1.9", "v1beta1:s*"),
      Row("v1.10", "v1beta1:s*", kMigrator),
      Row("v1.11", "v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.12", "v1beta2:s*", kMigrator),
  });
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  ASSERT_THAT(plan.violations, SizeIs(1));
  EXPECT_EQ(plan.violations[0].rule, "removed-while-storage");
  EXPECT_THAT(plan.violations[0].message,
              HasSubstr("v1.12 removes v1beta1 while v1.9, a release an n-3 "
                        "upgrade to v1.12 can start from (v1.9 to v1.11), "
                        "still has it as its storage version"));
}

TEST(CRDRemovalTest, RemovingAServedVersionIsFlagged) {
  // Deprecation 0 and no buffer: only the serving rule is left to break.
  const CRDHistory history = History(
      {
          Row("v1.11", "v1beta1:s v1beta2:s*", kMigrator),
          Row("v1.12", "v1beta1:s v1beta2:s*", kMigrator),
          Row("v1.13", "v1beta2:s*", kMigrator),
      },
      /*deprecation=*/0, /*buffer=*/0);
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  ASSERT_THAT(plan.violations, SizeIs(1));
  EXPECT_EQ(plan.violations[0].rule, "removed-while-served");
  EXPECT_THAT(plan.violations[0].message, HasSubstr("#111937"));
}

TEST(CRDRemovalTest, RemovingBeforeTheDeprecationEndedIsFlagged) {
  const CRDHistory history = History({
      Row("v1.10", "v1beta1:s*", kMigrator),
      Row("v1.11", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.12", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.13", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.14", "v1beta2:s*", kMigrator),
  });
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  ASSERT_THAT(plan.violations, SizeIs(2));
  EXPECT_EQ(plan.violations[0].rule, "unserved-during-deprecation");
  EXPECT_EQ(plan.violations[0].release, "v1.11");
  EXPECT_EQ(plan.violations[1].rule, "removed-before-deprecation-ended");
  EXPECT_EQ(plan.violations[1].release, "v1.14");
}

TEST(CRDRemovalTest, AReleaseMissingFromTheHistoryDoesNotCount) {
  const CRDHistory history = History({
      Row("v1.11", "v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.12", "v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.13", "v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.14", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.15", "v1beta1:u v1beta2:s*", kMigrator),
      // v1.16 is not listed.
      Row("v1.17", "v1beta1:u v1beta2:s*", kMigrator),
      Row("v1.18", "v1beta2:s*", kMigrator),
  });
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  ASSERT_THAT(plan.violations, SizeIs(1));
  EXPECT_EQ(plan.violations[0].rule, "removed-with-unknown-release");
  EXPECT_THAT(plan.violations[0].message, HasSubstr("v1.16"));
  // v1.16 may have served v1beta1 again, so v1.17 may be a revert buffer
  // release; v1.18, v1.19 and v1.20 count: v1.21.
  EXPECT_EQ(plan.earliest_removal_release, "v1.21");
}

TEST(CRDRemovalTest, ReleasesAfterTheHistoryFollowThePlan) {
  // The history ends in v1.12 with v1beta1 still served.
  const CRDHistory history = History({
      Row("v1.10", "v1beta1:s*", kMigrator),
      Row("v1.11", "v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.12", "v1beta1:s v1beta2:s*", kMigrator),
  });
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  EXPECT_EQ(plan.earliest_unserve_release, "v1.14");
  EXPECT_EQ(plan.earliest_removal_release, "v1.18");
  EXPECT_THAT(plan.steps.back().why,
              HasSubstr("releases after v1.12 (the last listed) are assumed "
                        "to follow this plan"));
}

TEST(CRDRemovalTest, WithoutMigratorTheStepSaysToAddIt) {
  const CRDHistory history = History({
      Row("v1.11", "v1beta1:s v1beta2:s*"),
      Row("v1.12", "v1beta1:s v1beta2:s*"),
  });
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  EXPECT_EQ(plan.steps[1].name, "storage-version-migration");
  EXPECT_THAT(plan.steps[1].why,
              HasSubstr("the history's last release, v1.12, does not run it: "
                        "add it"));
}

TEST(CRDRemovalTest, DeprecatedMarkerLaterThanTheReplacementStartsTheClock) {
  std::vector<CRDRelease> releases = {
      Row("v1.11", "v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.12", "v1beta1:s v1beta2:s*", kMigrator),
      Row("v1.13", "v1beta1:s v1beta2:s*", kMigrator),
  };
  releases[2].versions[0].deprecated = true;
  ASSERT_OK_AND_ASSIGN(
      CRDRemovalPlan plan,
      PlanCRDVersionRemoval(History(std::move(releases)), "v1beta1"));
  EXPECT_EQ(plan.earliest_unserve_release, "v1.16");
  EXPECT_THAT(plan.steps[0].why, HasSubstr("v1.13 marked v1beta1 deprecated"));
}

TEST(CRDRemovalTest, ComputedReleasesFollowTheHistorysSpelling) {
  const CRDHistory history = History({
      Row("1.11", "v1beta1:s v1beta2:s*", kMigrator),
  });
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  EXPECT_EQ(plan.earliest_unserve_release, "1.14");
}

TEST(CRDRemovalTest, UpgradeSpanOneNeedsOneCleanupRelease) {
  const CRDHistory history = History(
      {
          Row("v1.11", "v1beta1:s v1beta2:s*", kMigrator),
          Row("v1.12", "v1beta1:u v1beta2:s*", kMigrator),
          Row("v1.13", "v1beta2:s*", kMigrator),
      },
      /*deprecation=*/1, /*buffer=*/0, /*span=*/1);
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(history, "v1beta1"));
  EXPECT_EQ(plan.earliest_removal_release, "v1.13");
  EXPECT_THAT(plan.violations, IsEmpty());
}

TEST(CRDRemovalTest, TheCurrentStorageVersionCannotBePlanned) {
  ASSERT_OK_AND_ASSIGN(CRDRemovalPlan plan,
                       PlanCRDVersionRemoval(ClusterApi(), "v1beta2"));
  EXPECT_EQ(plan.earliest_unserve_release, "");
  EXPECT_EQ(plan.earliest_removal_release, "");
  EXPECT_THAT(plan.reason,
              HasSubstr("v1beta2 is still the storage version of v1.18"));
  ASSERT_THAT(plan.steps, SizeIs(1));
  EXPECT_THAT(plan.steps[0].why, HasSubstr("(in v1.19 at the earliest)"));
}

TEST(CRDRemovalTest, UnknownVersionIsNotFoundAndListsTheVersions) {
  EXPECT_THAT(PlanCRDVersionRemoval(ClusterApi(), "v2"),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("no version \"v2\" in any release; its "
                                 "versions: v1alpha3, v1alpha4, v1beta1, "
                                 "v1beta2")));
}

TEST(CRDRemovalTest, HistoryAcrossMajorVersionsIsAFailedPrecondition) {
  const CRDHistory history = History({
      Row("v0.4", "v1alpha4:s*"),
      Row("v1.0", "v1alpha4:s v1beta1:s*"),
  });
  EXPECT_THAT(PlanCRDVersionRemoval(history, "v1alpha4"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("v0.4 and v1.0 differ in major version")));
}

TEST(CRDRemovalTest, EmptyHistoryIsAFailedPrecondition) {
  EXPECT_THAT(PlanCRDVersionRemoval(History({}), "v1beta1"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("has no releases")));
}

struct InvalidHistoryRow {
  const char* name;
  CRDHistory history;
  const char* message;
};

class ValidateCRDHistoryTest
    : public ::testing::TestWithParam<InvalidHistoryRow> {};

TEST_P(ValidateCRDHistoryTest, NamesTheField) {
  EXPECT_THAT(ValidateCRDHistory(GetParam().history, "history"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(GetParam().message)));
}

CRDHistory WithReleases(std::vector<CRDRelease> releases) {
  return History(std::move(releases));
}

CRDHistory WithSpan(int span) {
  return History({Row("v1.9", "v1beta1:s*")}, 3, 1, span);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ValidateCRDHistoryTest,
    ::testing::Values(
        InvalidHistoryRow{"SpanZero", WithSpan(0),
                          "history.upgrade_span: 0 must be at least 1"},
        InvalidHistoryRow{"SpanHuge", WithSpan(1000),
                          "history.upgrade_span: 1000 is more than 100"},
        InvalidHistoryRow{"NegativeDeprecation",
                          History({Row("v1.9", "v1beta1:s*")}, -1),
                          "history.deprecation_releases: -1 must not be "
                          "negative"},
        InvalidHistoryRow{"NegativeBuffer",
                          History({Row("v1.9", "v1beta1:s*")}, 3, -2),
                          "history.revert_buffer_releases: -2 must not be "
                          "negative"},
        InvalidHistoryRow{"NoReleases", WithReleases({}),
                          "history.releases: at least one release"},
        InvalidHistoryRow{"Unordered",
                          WithReleases({Row("v1.10", "v1beta1:s*"),
                                        Row("v1.9", "v1beta1:s*")}),
                          "history.releases[1].release: v1.9 is not a later "
                          "minor release than v1.10"},
        InvalidHistoryRow{"SameMinor",
                          WithReleases({Row("v1.9.0", "v1beta1:s*"),
                                        Row("v1.9.2", "v1beta1:s*")}),
                          "history.releases[1].release: v1.9.2 is not a "
                          "later minor release than v1.9.0"},
        InvalidHistoryRow{"MixedMajor",
                          WithReleases({Row("v0.4", "v1beta1:s*"),
                                        Row("v1.0", "v1beta1:s*")}),
                          "history.releases[1].release: v1.0 is not in major "
                          "version 0"},
        InvalidHistoryRow{"TwoStorage",
                          WithReleases({Row("v1.9", "v1beta1:s* v1:s*")}),
                          "history.releases[0].versions: 2 versions are "
                          "marked storage"},
        InvalidHistoryRow{"NoStorage", WithReleases({Row("v1.9", "v1beta1:s")}),
                          "history.releases[0].versions: 0 versions are "
                          "marked storage"},
        InvalidHistoryRow{"DuplicateName",
                          WithReleases({Row("v1.9", "v1beta1:s* v1beta1:u")}),
                          "history.releases[0].versions[1].name: duplicate "
                          "version \"v1beta1\""},
        InvalidHistoryRow{"TooLong",
                          WithReleases({Row("v1.9", "v1beta1:s*"),
                                        Row("v1.2000", "v1beta1:s*")}),
                          "history.releases: v1.9 to v1.2000 spans more than "
                          "1000 minor releases"}),
    [](const ::testing::TestParamInfo<InvalidHistoryRow>& info) {
      return std::string(info.param.name);
    });

TEST(ValidateCRDHistoryTest, AcceptsTheSeedHistory) {
  EXPECT_OK(ValidateCRDHistory(ClusterApi(), "history"));
}

}  // namespace
}  // namespace compatd::engine
