// Patch releases answered as themselves (engine/patches.h), on catalogs
// loaded by the real loader. Expected values: kubernetes/kubernetes#137926
// (MaxUnavailableStatefulSet on by default in 1.35.0-1.35.3, off from
// 1.35.4) and CHANGELOG-1.31.md (OrderedNamespaceDeletion added in 1.31.7).

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "base/status_macros.h"
#include "catalog/catalog_loader.h"
#include "engine/catalog.h"
#include "engine/catalog_set.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/patches.h"
#include "engine/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::catalog {
namespace {

using ::testing::HasSubstr;
using namespace ::compatd::engine;  // NOLINT: the model the loader builds

std::shared_ptr<const Catalog> Load(const std::string& relative) {
  std::ifstream in(std::string(COMPATD_TESTDATA_DIR) + "/catalogs/" + relative);
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<std::unique_ptr<Catalog>> catalog =
      ParseCatalog(buffer.str(), relative, nullptr);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  if (!catalog.ok()) return nullptr;
  return std::shared_ptr<const Catalog>(*std::move(catalog));
}

Version V(absl::string_view text) { return *Version::Parse(text); }

absl::StatusOr<FeatureDecision> At(const Catalog& catalog,
                                   absl::string_view binary,
                                   absl::string_view name) {
  VersionQuery query;
  query.binary_version = binary;
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           ResolveEffectiveVersions(catalog, query));
  return DecideFeature(catalog, versions, query, name);
}

TEST(PatchAnswersTest, EachPatchOfTheLineAnswersFromItsOwnSpecs) {
  std::shared_ptr<const Catalog> catalog = Load("good/patch_specs.yaml");
  ASSERT_NE(catalog, nullptr);
  ASSERT_TRUE(catalog->patches_known_through.has_value());
  EXPECT_EQ(*catalog->patches_known_through, V("1.35.6"));
  for (const char* binary : {"1.35.0", "1.35.2", "v1.35.3"}) {
    ASSERT_OK_AND_ASSIGN(FeatureDecision d,
                         At(*catalog, binary, "MaxUnavailableStatefulSet"));
    EXPECT_TRUE(d.enabled) << binary;
    EXPECT_EQ(d.stage, PreRelease::kBeta) << binary;
  }
  for (const char* binary : {"1.35.4", "1.35.6", "1.35", ""}) {
    ASSERT_OK_AND_ASSIGN(FeatureDecision d,
                         At(*catalog, binary, "MaxUnavailableStatefulSet"));
    EXPECT_FALSE(d.enabled) << binary;
    EXPECT_EQ(d.stage, PreRelease::kBeta) << binary;
  }
}

TEST(PatchAnswersTest, AnAnswerNamesThePatchItsFactsDescribe) {
  std::shared_ptr<const Catalog> catalog = Load("good/patch_specs.yaml");
  ASSERT_NE(catalog, nullptr);
  EXPECT_EQ(AnsweredRelease(*catalog, V("1.35.2")), "1.35.2");
  EXPECT_EQ(AnsweredRelease(*catalog, V("1.35.6")), "1.35.6");
  EXPECT_EQ(AnsweredRelease(*catalog, V("1.35")), "1.35.4");
  // Newer than every patch it knows: the newest known, and the reason says so.
  EXPECT_EQ(AnsweredRelease(*catalog, V("1.35.9")), "1.35.6");
  EXPECT_THAT(NewerPatchNote(*catalog, V("1.35.9")),
              HasSubstr("newer than the newest patch this catalog knows "
                        "(1.35.6): answered from 1.35.6's facts"));
  EXPECT_EQ(NewerPatchNote(*catalog, V("1.35.6")), "");
  // A pre-release is answered as the catalog's own patch.
  EXPECT_EQ(AnsweredRelease(*catalog, V("1.35.4-rc.1")), "1.35.4");
  EXPECT_EQ(catalog->exactness, Exactness::kExact);
}

TEST(PatchAnswersTest, APatchThatDidNotRegisterAGateRefusesIt) {
  std::shared_ptr<const Catalog> catalog =
      Load("good/patch_not_registered.yaml");
  ASSERT_NE(catalog, nullptr);
  EXPECT_EQ(catalog->exactness, Exactness::kProvisional);
  EXPECT_EQ(catalog->exactness_reason,
            "a test catalog built from the 1.31 changelog");
  absl::StatusOr<FeatureDecision> early =
      At(*catalog, "1.31.6", "OrderedNamespaceDeletion");
  EXPECT_EQ(early.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(early.status().message(),
              HasSubstr("kube-apiserver 1.31.6 does not register it: 1.31.7 "
                        "added it"));
  ASSERT_OK_AND_ASSIGN(FeatureDecision late,
                       At(*catalog, "1.31.7", "OrderedNamespaceDeletion"));
  EXPECT_FALSE(late.enabled);
  EXPECT_EQ(late.stage, PreRelease::kBeta);
  // Without patchesKnownThrough the catalog vouches for its own patch only.
  EXPECT_EQ(AnsweredRelease(*catalog, V("1.31.6")), "1.31.8");
  // --feature-gates naming it is refused by that patch as kube-apiserver does
  // at start-up.
  VersionQuery query;
  query.binary_version = "1.31.6";
  query.feature_gates = "OrderedNamespaceDeletion=true";
  ASSERT_OK_AND_ASSIGN(EffectiveVersions versions,
                       ResolveEffectiveVersions(*catalog, query));
  absl::StatusOr<std::vector<FeatureDecision>> all =
      DecideFeatures(*catalog, versions, query, "");
  EXPECT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(all.status().message(),
              HasSubstr("unrecognized feature gate: OrderedNamespaceDeletion"));
}

// A provisional line answers only the requests that name it: the default is
// the newest exact line.
TEST(PatchAnswersTest, TheDefaultLineIsTheNewestExactOne) {
  std::shared_ptr<const Catalog> exact = Load("good/patch_specs.yaml");
  auto provisional = std::make_shared<Catalog>();
  provisional->binary_version = V("1.37.0");
  provisional->exactness = Exactness::kProvisional;
  provisional->exactness_reason = "code freeze";
  provisional->source = "test:1.37";
  ASSERT_NE(exact, nullptr);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const CatalogSet> set,
                       CatalogSet::Make({exact, provisional}));
  EXPECT_EQ(set->default_catalog().binary_version, V("1.35.4"));
  ASSERT_OK_AND_ASSIGN(const Catalog* at37, set->Resolve("1.37.1"));
  EXPECT_EQ(at37, provisional.get());
}

TEST(PatchAnswersTest, AMalformedPatchNamesTheFieldAndTheAcceptedForms) {
  std::shared_ptr<const Catalog> catalog = Load("good/patch_specs.yaml");
  ASSERT_NE(catalog, nullptr);
  std::shared_ptr<const CatalogSet> set = CatalogSet::Single(catalog);
  for (const char* bad :
       {"1.35.x", "1.35.-1", "1.35.2.1", "1.35.", "1.35.2-"}) {
    absl::StatusOr<const Catalog*> resolved = set->Resolve(bad);
    EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_THAT(resolved.status().message(),
                HasSubstr("versions.binaryVersion"))
        << bad;
    EXPECT_THAT(
        resolved.status().message(),
        HasSubstr("accepted forms are MAJOR.MINOR or MAJOR.MINOR.PATCH"))
        << bad;
  }
  for (const char* good :
       {"1.35", "v1.35.2", " 1.35.2 ", "1.35.2-gke.1000", "1.35.0+build.1"}) {
    EXPECT_OK(set->Resolve(good).status()) << good;
  }
}

}  // namespace
}  // namespace compatd::catalog
