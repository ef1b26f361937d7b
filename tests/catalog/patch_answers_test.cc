// Patch releases answered as themselves (engine/patches.h), on catalogs
// loaded by the real loader: test catalogs, and the embedded lines with the
// patch changes of catalog/data/patch_changes.json. Expected values:
// kubernetes/kubernetes#137926 (MaxUnavailableStatefulSet on by default in
// 1.35.0-1.35.3, off from 1.35.4; pkg/features/kube_features.go at 1.35.2 has
// {1.24 Alpha false}, {1.35 Beta true}, at 1.35.4 {1.35 Beta false}) and the
// lines' CHANGELOGs (named at each expectation).

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "base/status_macros.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/catalog.h"
#include "engine/catalog_set.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/patches.h"
#include "engine/upgrade_plan.h"
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

// An embedded line's catalog ("1.35"), parsed once per line.
const Catalog& Embedded(absl::string_view line) {
  static auto* const cache =
      new std::vector<std::pair<std::string, std::unique_ptr<Catalog>>>();
  for (const auto& [name, catalog] : *cache) {
    if (name == line) return *catalog;
  }
  std::unique_ptr<Catalog> catalog = std::make_unique<Catalog>();
  const EmbeddedCatalog* embedded = FindEmbeddedCatalog(line);
  if (embedded == nullptr) {
    ADD_FAILURE() << "no embedded catalog of line " << line;
  } else {
    absl::StatusOr<std::unique_ptr<Catalog>> parsed =
        ParseCatalog(embedded->bytes, embedded->name);
    if (parsed.ok()) {
      catalog = *std::move(parsed);
    } else {
      ADD_FAILURE() << parsed.status();
    }
  }
  cache->emplace_back(std::string(line), std::move(catalog));
  return *cache->back().second;
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
    EXPECT_TRUE(set->Resolve(good).ok()) << good;
  }
}

absl::StatusOr<FeatureDecision> AtEmulation(const Catalog& catalog,
                                            absl::string_view binary,
                                            absl::string_view emulation,
                                            absl::string_view name) {
  VersionQuery query;
  query.binary_version = binary;
  query.emulation_version = emulation;
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           ResolveEffectiveVersions(catalog, query));
  return DecideFeature(catalog, versions, query, name);
}

// The embedded 1.35 line describes 1.35.4 (kubernetes/kubernetes#137926,
// CHANGELOG-1.35.md v1.35.4: MaxUnavailableStatefulSet "disabled by
// default"); 1.35.0-1.35.3 register {1.24 Alpha false}, {1.35 Beta true}.
TEST(EmbeddedPatchAnswersTest, MaxUnavailableStatefulSetOnUntil1354) {
  const Catalog& l135 = Embedded("1.35");
  for (const char* binary : {"1.35.0", "1.35.2", "1.35.3"}) {
    ASSERT_OK_AND_ASSIGN(FeatureDecision d,
                         At(l135, binary, "MaxUnavailableStatefulSet"));
    EXPECT_TRUE(d.enabled) << binary << ": " << d.Reason();
    EXPECT_EQ(d.stage, PreRelease::kBeta) << binary;
    EXPECT_EQ(AnsweredRelease(l135, V(binary)), binary);
  }
  for (const char* binary : {"1.35.4", "1.35.7", "1.35"}) {
    ASSERT_OK_AND_ASSIGN(FeatureDecision d,
                         At(l135, binary, "MaxUnavailableStatefulSet"));
    EXPECT_FALSE(d.enabled) << binary << ": " << d.Reason();
    EXPECT_EQ(d.stage, PreRelease::kBeta) << binary;
  }
  EXPECT_EQ(AnsweredRelease(l135, V("1.35.4")), "1.35.4");
  EXPECT_EQ(AnsweredRelease(l135, V("1.35")), "1.35.4");
  // Emulating 1.34 on 1.35.2: the {1.24 Alpha false} spec.
  ASSERT_OK_AND_ASSIGN(
      FeatureDecision emulated,
      AtEmulation(l135, "1.35.2", "1.34", "MaxUnavailableStatefulSet"));
  EXPECT_FALSE(emulated.enabled);
  EXPECT_EQ(emulated.stage, PreRelease::kAlpha);
}

// A patch newer than every patch the 1.35 data read (v0.35.7, k8s.io/kubernetes
// v1.35.7) is answered from 1.35.7, and says so.
TEST(EmbeddedPatchAnswersTest, ANewerPatchAnswersFromTheNewestKnown) {
  const Catalog& l135 = Embedded("1.35");
  EXPECT_EQ(AnsweredRelease(l135, V("1.35.9")), "1.35.7");
  EXPECT_THAT(NewerPatchNote(l135, V("1.35.9")),
              HasSubstr("kube-apiserver 1.35.9 is newer than the newest patch "
                        "this catalog knows (1.35.7): answered from 1.35.7's "
                        "facts"));
  ASSERT_OK_AND_ASSIGN(FeatureDecision d,
                       At(l135, "1.35.9", "MaxUnavailableStatefulSet"));
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(NewerPatchNote(l135, V("1.35.7")), "");
}

// CHANGELOG-1.35.md v1.35.1: "Fixed a 1.35.0 regression by disabling the
// `SchedulerAsyncAPICalls` feature gate" (#135904); v1.35.0-beta.0 had
// re-enabled it by default (#135059).
TEST(EmbeddedPatchAnswersTest, SchedulerAsyncAPICallsOnlyIn1350) {
  const Catalog& l135 = Embedded("1.35");
  ASSERT_OK_AND_ASSIGN(FeatureDecision early,
                       At(l135, "1.35.0", "SchedulerAsyncAPICalls"));
  EXPECT_TRUE(early.enabled) << early.Reason();
  ASSERT_OK_AND_ASSIGN(FeatureDecision late,
                       At(l135, "1.35.1", "SchedulerAsyncAPICalls"));
  EXPECT_FALSE(late.enabled) << late.Reason();
  EXPECT_EQ(late.stage, PreRelease::kBeta);
}

// CHANGELOG-1.32.md v1.32.2 "Reverts the ServiceAccountNodeAudienceRestriction
// feature to disabled in v1.32" (#130015); v1.32.3 "Added a feature gate
// OrderedNamespaceDeletion" (#130508; Beta, default false since 1.30 in
// k8s.io/kubernetes v1.32.3's kube_features.go).
TEST(EmbeddedPatchAnswersTest, Line132Patches) {
  const Catalog& l132 = Embedded("1.32");
  ASSERT_OK_AND_ASSIGN(
      FeatureDecision before,
      At(l132, "1.32.1", "ServiceAccountNodeAudienceRestriction"));
  EXPECT_TRUE(before.enabled) << before.Reason();
  ASSERT_OK_AND_ASSIGN(
      FeatureDecision after,
      At(l132, "1.32.2", "ServiceAccountNodeAudienceRestriction"));
  EXPECT_FALSE(after.enabled) << after.Reason();
  absl::StatusOr<FeatureDecision> missing =
      At(l132, "1.32.2", "OrderedNamespaceDeletion");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(FeatureDecision added,
                       At(l132, "1.32.3", "OrderedNamespaceDeletion"));
  EXPECT_FALSE(added.enabled);
  EXPECT_EQ(added.stage, PreRelease::kBeta);
}

// CHANGELOG-1.31.md v1.31.1: DisableNodeKubeProxyVersion "reverted to
// default-off" (#126721; k8s.io/kubernetes v1.31.0 has {Default: true,
// PreRelease: Beta}, v1.31.1 {Default: false, PreRelease: Deprecated}).
// CHANGELOG-1.34.md v1.34.2: StatefulSetSemanticRevisionComparison added,
// enabled by default (#135087).
TEST(EmbeddedPatchAnswersTest, Lines131And134Patches) {
  const Catalog& l131 = Embedded("1.31");
  ASSERT_OK_AND_ASSIGN(FeatureDecision on,
                       At(l131, "1.31.0", "DisableNodeKubeProxyVersion"));
  EXPECT_TRUE(on.enabled);
  EXPECT_EQ(on.stage, PreRelease::kBeta);
  ASSERT_OK_AND_ASSIGN(FeatureDecision off,
                       At(l131, "1.31.1", "DisableNodeKubeProxyVersion"));
  EXPECT_FALSE(off.enabled);
  EXPECT_EQ(off.stage, PreRelease::kDeprecated);
  const Catalog& l134 = Embedded("1.34");
  EXPECT_EQ(At(l134, "1.34.1", "StatefulSetSemanticRevisionComparison")
                .status()
                .code(),
            absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(
      FeatureDecision added,
      At(l134, "1.34.2", "StatefulSetSemanticRevisionComparison"));
  EXPECT_TRUE(added.enabled);
  EXPECT_EQ(added.stage, PreRelease::kBeta);
}

// The gate items of a plan's supported path: (step, subject, rule).
std::vector<std::tuple<int, std::string, std::string>> GateItems(
    const UpgradePlan& plan) {
  std::vector<std::tuple<int, std::string, std::string>> out;
  for (const PlanItem& item : plan.path.items) {
    if (item.section == PlanSection::kFeatureGates) {
      out.emplace_back(item.step, item.subject, item.rule);
    }
  }
  return out;
}

UpgradePlanQuery PatchQuery(absl::string_view from, absl::string_view to) {
  UpgradePlanQuery query;
  query.from.binary_version = from;
  query.to.binary_version = to;
  return query;
}

// A plan between two patches of one line is a restart onto the new patch,
// and says which gates change on the way: 1.35.2 -> 1.35.4 turns
// MaxUnavailableStatefulSet off (#137926); 1.35.0 -> 1.35.7 also turns
// SchedulerAsyncAPICalls off (1.35.1, #135904); 1.35.4 -> 1.35.7 changes no
// gate.
TEST(EmbeddedPatchAnswersTest, APlanBetweenPatchesNamesTheGatesThatChange) {
  const Catalog& l135 = Embedded("1.35");
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan,
                       PlanUpgrade(l135, PatchQuery("1.35.2", "1.35.4")));
  ASSERT_EQ(plan.steps().size(), 1u);
  EXPECT_EQ(plan.steps()[0].name, "binaries");
  EXPECT_EQ(plan.steps()[0].versions.binary, V("1.35.4"));
  EXPECT_THAT(plan.steps()[0].action, HasSubstr("kube-apiserver 1.35.4"));
  EXPECT_EQ(plan.from.binary, V("1.35.2"));
  using Item = std::tuple<int, std::string, std::string>;
  EXPECT_THAT(GateItems(plan),
              ::testing::ElementsAre(Item{1,
                                          "feature gate "
                                          "MaxUnavailableStatefulSet",
                                          "feature-gate-enabled-changes"}));
  for (const PlanItem& item : plan.path.items) {
    if (item.section != PlanSection::kFeatureGates) continue;
    EXPECT_THAT(item.action,
                HasSubstr("MaxUnavailableStatefulSet turns off: check the "
                          "workloads that depend on it, or keep it on with "
                          "--feature-gates=MaxUnavailableStatefulSet=true"));
  }

  ASSERT_OK_AND_ASSIGN(UpgradePlan longer,
                       PlanUpgrade(l135, PatchQuery("1.35.0", "1.35.7")));
  EXPECT_THAT(
      GateItems(longer),
      ::testing::ElementsAre(Item{1, "feature gate MaxUnavailableStatefulSet",
                                  "feature-gate-enabled-changes"},
                             Item{1, "feature gate SchedulerAsyncAPICalls",
                                  "feature-gate-enabled-changes"}));

  ASSERT_OK_AND_ASSIGN(UpgradePlan none,
                       PlanUpgrade(l135, PatchQuery("1.35.4", "1.35.7")));
  EXPECT_THAT(GateItems(none), ::testing::IsEmpty());
}

}  // namespace
}  // namespace compatd::catalog
