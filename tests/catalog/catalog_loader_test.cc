// ParseCatalog: the strict loader. Valid catalogs under
// tests/testdata/catalogs/good/, one deliberately broken catalog per rejection
// rule under tests/testdata/catalogs/bad/ (named after the rule).

#include "catalog/catalog_loader.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/catalog.h"
#include "engine/skew.h"
#include "engine/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::catalog {
namespace {

using namespace ::compatd::engine;  // NOLINT: the model the loader builds

using ::compatd::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::SizeIs;
using ::testing::StartsWith;

std::string ReadTestdata(const std::string& relative) {
  std::ifstream in(std::string(COMPATD_TESTDATA_DIR) + "/catalogs/" + relative,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing test file " << relative;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

absl::StatusOr<std::unique_ptr<Catalog>> Load(const std::string& relative,
                                              CatalogErrors* errors = nullptr) {
  return ParseCatalog(ReadTestdata(relative), relative, errors);
}

Version V(absl::string_view text) { return *Version::Parse(text); }

// ---------------------------------------------------------------------------
// Valid catalogs.

TEST(CatalogLoaderTest, MinimalCatalogTakesTheDefaults) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/minimal.yaml"));
  EXPECT_EQ(catalog->binary_version.ToString(), "1.36");
  EXPECT_TRUE(catalog->features.empty());
  EXPECT_TRUE(catalog->apis.empty());
  EXPECT_TRUE(catalog->cluster.emulation_version.empty());
  EXPECT_TRUE(catalog->cluster.feature_gates.empty());
  EXPECT_FALSE(catalog->cluster.emulation_forward_compatible.has_value());
  // No skewPolicy: none is copied in; the KEP-4330 table applies through
  // engine::SkewRulesInForce.
  EXPECT_TRUE(catalog->skew_policy.empty());
  const std::vector<SkewRule>& rules = engine::SkewRulesInForce(*catalog);
  ASSERT_THAT(rules, SizeIs(DefaultSkewPolicy().size()));
  EXPECT_EQ(rules[2].components, std::vector<std::string>{"kubectl"});
  EXPECT_EQ(rules[2].max.offset, 1);
}

TEST(CatalogLoaderTest, DigestIsSha256OfTheBytesAndSourceIsKept) {
  // printf 'binaryVersion: "1.36"\n' | sha256sum
  ASSERT_OK_AND_ASSIGN(
      auto catalog, ParseCatalog("binaryVersion: \"1.36\"\n", "inline.yaml"));
  EXPECT_EQ(
      catalog->digest,
      "sha256:b6f3488c84e19f1e139c5bbef1a85e56c1e473d0bce461d42da320bea7b3"
      "79da");
  EXPECT_EQ(catalog->source, "inline.yaml");
}

TEST(CatalogLoaderTest, SmallCatalogKeepsBinaryVersionAsWritten) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  EXPECT_EQ(catalog->binary_version.ToString(), "1.35.2");
}

TEST(CatalogLoaderTest, SmallCatalogClusterSection) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  const ClusterSettings& cluster = catalog->cluster;
  EXPECT_EQ(cluster.emulation_version, "1.34");
  EXPECT_EQ(cluster.min_compatibility_version, "1.33");
  // Sorted by name.
  EXPECT_THAT(cluster.feature_gates,
              ElementsAre(Pair("AllAlpha", false), Pair("WatchList", true)));
  EXPECT_THAT(cluster.runtime_config,
              ElementsAre(Pair("resource.k8s.io/v1beta2", "true")));
}

TEST(CatalogLoaderTest, FeaturesAreSortedByNameAndIndexed) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  ASSERT_THAT(catalog->features, SizeIs(3));
  EXPECT_EQ(catalog->features[0].name, "ExampleMinCompatGate");
  EXPECT_EQ(catalog->features[1].name, "SidecarContainers");
  EXPECT_EQ(catalog->features[2].name, "WatchList");
  for (const Feature& feature : catalog->features) {
    EXPECT_EQ(catalog->FindFeature(feature.name), &feature);
  }
  EXPECT_EQ(catalog->FindFeature("NoSuchGate"), nullptr);
}

TEST(CatalogLoaderTest, FeatureSpecsKeepValuesAndLines) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  const Feature* sidecar = catalog->FindFeature("SidecarContainers");
  ASSERT_NE(sidecar, nullptr);
  EXPECT_EQ(sidecar->component, "kube");
  EXPECT_EQ(sidecar->line, 18);
  ASSERT_THAT(sidecar->specs, SizeIs(3));
  const FeatureSpec& ga = sidecar->specs[2];
  EXPECT_EQ(ga.version, V("1.33"));
  EXPECT_TRUE(ga.default_enabled);
  EXPECT_TRUE(ga.lock_to_default);
  EXPECT_EQ(ga.pre_release, PreRelease::kGA);
  EXPECT_EQ(ga.line, 23);
  EXPECT_EQ(sidecar->specs[0].pre_release, PreRelease::kAlpha);
  EXPECT_EQ(sidecar->specs[1].pre_release, PreRelease::kBeta);
  EXPECT_FALSE(sidecar->specs[0].min_compatibility_version.has_value());
}

TEST(CatalogLoaderTest, FeatureWithoutComponentHasEmptyComponent) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  const Feature* gate = catalog->FindFeature("ExampleMinCompatGate");
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->component, "");
}

TEST(CatalogLoaderTest, SpecMinCompatibilityVersionIsRead) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  const Feature* gate = catalog->FindFeature("ExampleMinCompatGate");
  ASSERT_NE(gate, nullptr);
  ASSERT_THAT(gate->specs, SizeIs(3));
  EXPECT_FALSE(gate->specs[1].min_compatibility_version.has_value());
  ASSERT_TRUE(gate->specs[2].min_compatibility_version.has_value());
  EXPECT_EQ(*gate->specs[2].min_compatibility_version, V("1.35"));
}

TEST(CatalogLoaderTest, ApisKeepFileOrderAndLifecycles) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  ASSERT_THAT(catalog->apis, SizeIs(6));
  EXPECT_EQ(catalog->apis[0].group, "");
  EXPECT_EQ(catalog->apis[0].version, "v1");
  EXPECT_EQ(catalog->apis[3].group, "resource.k8s.io");
  EXPECT_EQ(catalog->apis[3].version, "v1beta2");
  const APIResource& claims = catalog->apis[3].resources[0];
  EXPECT_EQ(claims.resource, "resourceclaims");
  EXPECT_EQ(claims.kind, "ResourceClaim");
  EXPECT_EQ(claims.introduced, V("1.33"));
  EXPECT_EQ(claims.deprecated, V("1.36"));
  EXPECT_EQ(claims.removed, V("1.39"));
  EXPECT_EQ(claims.replacement, "");
  EXPECT_EQ(claims.line, 46);
}

TEST(CatalogLoaderTest, BlockStyleResourceWithReplacement) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  const APIGroupVersion& v1beta3 = catalog->apis[5];
  EXPECT_EQ(v1beta3.version, "v1beta3");
  EXPECT_EQ(v1beta3.enabled_by_default, false);
  ASSERT_THAT(v1beta3.resources, SizeIs(1));
  EXPECT_EQ(v1beta3.resources[0].replacement,
            "flowcontrol.apiserver.k8s.io/v1");
  EXPECT_EQ(v1beta3.resources[0].removed, V("1.32"));
  EXPECT_EQ(v1beta3.resources[0].line, 55);
}

TEST(CatalogLoaderTest, EnabledByDefaultAndPersistedHaveDefaults) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  const APIGroupVersion& core = catalog->apis[0];
  EXPECT_FALSE(core.enabled_by_default.has_value());
  ASSERT_THAT(core.resources, SizeIs(2));
  EXPECT_TRUE(core.resources[0].persisted);   // pods: absent -> true
  EXPECT_FALSE(core.resources[1].persisted);  // bindings: persisted: false
  EXPECT_EQ(core.resources[0].introduced, V("1.0"));
}

TEST(CatalogLoaderTest, StorageOverridesAreRead) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  ASSERT_THAT(catalog->storage_overrides, SizeIs(1));
  EXPECT_EQ(catalog->storage_overrides[0].group, "resource.k8s.io");
  EXPECT_EQ(catalog->storage_overrides[0].resource, "resourceclaims");
  EXPECT_EQ(catalog->storage_overrides[0].version, "v1beta2");
  EXPECT_EQ(catalog->storage_overrides[0].line, 62);
}

TEST(CatalogLoaderTest, SkewPolicyReplacesTheDefault) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  ASSERT_THAT(catalog->skew_policy, SizeIs(2));
  const SkewRule& kubelet = catalog->skew_policy[1];
  EXPECT_EQ(kubelet.components, std::vector<std::string>{"kubelet"});
  EXPECT_EQ(kubelet.min.of, SkewBase::kMinCompatibility);
  EXPECT_EQ(kubelet.min.offset, -2);
  EXPECT_EQ(kubelet.max.of, SkewBase::kBinary);
  EXPECT_EQ(kubelet.max.offset, 0);
  EXPECT_EQ(kubelet.line, 67);
}

TEST(CatalogLoaderTest, CrdHistoriesAreRead) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/small.yaml"));
  ASSERT_THAT(catalog->crds, SizeIs(1));
  const CRDHistory& crd = catalog->crds[0];
  EXPECT_EQ(crd.name, "clusters.cluster.x-k8s.io");
  EXPECT_EQ(crd.project, "Cluster API");
  EXPECT_EQ(crd.upgrade_span, 3);
  EXPECT_EQ(crd.deprecation_releases, 1);  // absent: 1
  ASSERT_THAT(crd.releases, SizeIs(2));
  EXPECT_EQ(crd.releases[0].release, "v1.9");
  EXPECT_EQ(crd.releases[0].version, V("1.9"));
  EXPECT_EQ(crd.releases[1].version, V("1.10"));
  EXPECT_TRUE(crd.releases[1].storage_version_migration);
  EXPECT_FALSE(crd.releases[1].managed_fields_cleanup);
  ASSERT_THAT(crd.releases[1].versions, SizeIs(2));
  EXPECT_EQ(crd.releases[1].versions[1].name, "v1beta1");
  EXPECT_TRUE(crd.releases[1].versions[1].served);
  EXPECT_FALSE(crd.releases[1].versions[1].storage);
  EXPECT_TRUE(crd.releases[1].versions[1].deprecated);
}

TEST(CatalogLoaderTest, JsonFormLoadsTheSameCatalog) {
  ASSERT_OK_AND_ASSIGN(auto yaml, Load("good/small.yaml"));
  ASSERT_OK_AND_ASSIGN(auto json, Load("good/small.json"));
  EXPECT_EQ(json->binary_version, yaml->binary_version);
  EXPECT_EQ(json->cluster.feature_gates, yaml->cluster.feature_gates);
  EXPECT_EQ(json->cluster.runtime_config, yaml->cluster.runtime_config);
  ASSERT_EQ(json->features.size(), yaml->features.size());
  for (size_t i = 0; i < json->features.size(); ++i) {
    const Feature& a = json->features[i];
    const Feature& b = yaml->features[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.component, b.component);
    ASSERT_EQ(a.specs.size(), b.specs.size()) << a.name;
    for (size_t j = 0; j < a.specs.size(); ++j) {
      EXPECT_EQ(a.specs[j].version, b.specs[j].version);
      EXPECT_EQ(a.specs[j].default_enabled, b.specs[j].default_enabled);
      EXPECT_EQ(a.specs[j].lock_to_default, b.specs[j].lock_to_default);
      EXPECT_EQ(a.specs[j].pre_release, b.specs[j].pre_release);
      EXPECT_EQ(a.specs[j].min_compatibility_version,
                b.specs[j].min_compatibility_version);
    }
  }
  ASSERT_EQ(json->apis.size(), yaml->apis.size());
  for (size_t i = 0; i < json->apis.size(); ++i) {
    EXPECT_EQ(json->apis[i].group, yaml->apis[i].group);
    EXPECT_EQ(json->apis[i].version, yaml->apis[i].version);
    EXPECT_EQ(json->apis[i].enabled_by_default,
              yaml->apis[i].enabled_by_default);
    ASSERT_EQ(json->apis[i].resources.size(), yaml->apis[i].resources.size());
    for (size_t j = 0; j < json->apis[i].resources.size(); ++j) {
      const APIResource& a = json->apis[i].resources[j];
      const APIResource& b = yaml->apis[i].resources[j];
      EXPECT_EQ(a.resource, b.resource);
      EXPECT_EQ(a.introduced, b.introduced);
      EXPECT_EQ(a.removed, b.removed);
      EXPECT_EQ(a.replacement, b.replacement);
      EXPECT_EQ(a.persisted, b.persisted);
    }
  }
  EXPECT_EQ(json->skew_policy.size(), yaml->skew_policy.size());
  ASSERT_EQ(json->crds.size(), 1u);
  EXPECT_EQ(json->crds[0].releases.size(), yaml->crds[0].releases.size());
  EXPECT_NE(json->digest, yaml->digest);
}

TEST(CatalogLoaderTest, UnquotedVersionsKeepTheirText) {
  // `version: 1.30` is the YAML float 1.3, but the loader keeps the scalar as
  // written: 1.30, not 1.3.
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/plain_scalars.yaml"));
  EXPECT_EQ(catalog->binary_version, V("1.36"));
  const Feature* gate = catalog->FindFeature("ExampleGate");
  ASSERT_NE(gate, nullptr);
  ASSERT_THAT(gate->specs, SizeIs(2));
  EXPECT_EQ(gate->specs[0].version.minor(), 30u);
  EXPECT_EQ(gate->specs[1].version.minor(), 31u);
  EXPECT_EQ(catalog->apis[0].resources[0].introduced, V("1.30"));
}

TEST(CatalogLoaderTest, BooleansInEveryYaml12Spelling) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/plain_scalars.yaml"));
  const Feature* gate = catalog->FindFeature("ExampleGate");
  ASSERT_NE(gate, nullptr);
  EXPECT_FALSE(gate->specs[0].default_enabled);          // False
  EXPECT_FALSE(gate->specs[0].lock_to_default);          // FALSE
  EXPECT_TRUE(gate->specs[1].default_enabled);           // True
  EXPECT_TRUE(catalog->apis[0].resources[0].persisted);  // TRUE
}

TEST(CatalogLoaderTest, NullMeansAbsent) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/plain_scalars.yaml"));
  EXPECT_EQ(catalog->cluster.emulation_version, "");              // ~
  EXPECT_EQ(catalog->features[0].component, "");                  // null
  EXPECT_FALSE(catalog->apis[0].enabled_by_default.has_value());  // empty
  EXPECT_FALSE(catalog->apis[0].resources[0].deprecated.has_value());
}

TEST(CatalogLoaderTest, ApiHistoryIsReadAndIndexed) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/api_history.yaml"));
  EXPECT_TRUE(catalog->apis.empty());
  ASSERT_EQ(catalog->api_history.size(), 5u);
  const engine::APIHistoryEntry* endpoints =
      catalog->FindHistory("", "v1", "Endpoints");
  ASSERT_NE(endpoints, nullptr);
  EXPECT_EQ(endpoints->line, 4);
  EXPECT_EQ(endpoints->resource, "endpoints");
  EXPECT_EQ(endpoints->deprecated, Version::MajorMinor(1, 33));
  EXPECT_FALSE(endpoints->removed.has_value());
  EXPECT_EQ(endpoints->replacement, "discovery.k8s.io/v1");
  EXPECT_EQ(endpoints->replacement_kind, "EndpointSlice");
  const engine::APIHistoryEntry* deployment =
      catalog->FindHistory("extensions", "v1beta1", "Deployment");
  ASSERT_NE(deployment, nullptr);
  EXPECT_EQ(deployment->removed, Version::MajorMinor(1, 16));
  EXPECT_EQ(deployment->types_deleted, Version::MajorMinor(1, 27));
  EXPECT_FALSE(deployment->enabled_by_default.has_value());
  const engine::APIHistoryEntry* cronjob =
      catalog->FindHistory("batch", "v1beta1", "CronJob");
  ASSERT_NE(cronjob, nullptr);
  EXPECT_EQ(cronjob->enabled_by_default, true);
  EXPECT_EQ(catalog->FindHistory("batch", "v1beta1", "Job"), nullptr);
  EXPECT_EQ(catalog->FindHistory("", "v1beta1", "Endpoints"), nullptr);
}

// The 1.31 line's two patch-level changes (kubernetes CHANGELOG-1.31.md:
// DisableNodeKubeProxyVersion reverted to default-off in v1.31.1,
// OrderedNamespaceDeletion added in v1.31.7), flow and block style.
TEST(CatalogLoaderTest, PatchChangesAreRead) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/patch_changes.yaml"));
  EXPECT_EQ(catalog->binary_version, V("1.31.8"));
  ASSERT_EQ(catalog->patch_changes.size(), 2u);
  const PatchChange& first = catalog->patch_changes[0];
  EXPECT_EQ(first.feature, "DisableNodeKubeProxyVersion");
  EXPECT_EQ(first.since, V("1.31.1"));
  EXPECT_EQ(first.before, "Beta, default true");
  EXPECT_EQ(first.line, 10);
  const PatchChange& second = catalog->patch_changes[1];
  EXPECT_EQ(second.feature, "OrderedNamespaceDeletion");
  EXPECT_EQ(second.since, V("1.31.7"));
  EXPECT_EQ(second.before, "not registered");
  EXPECT_EQ(second.line, 11);
  // 1.31's one unversioned spec each, at "0.0".
  const Feature* gate = catalog->FindFeature("OrderedNamespaceDeletion");
  ASSERT_NE(gate, nullptr);
  ASSERT_EQ(gate->specs.size(), 1u);
  EXPECT_EQ(gate->specs[0].version, Version::MajorMinor(0, 0));
}

// kubernetes/api core/v1 lifecycle.go (v0.33.0+): Endpoints is deprecated in
// 1.33 in favour of discovery.k8s.io/v1 EndpointSlice.
TEST(CatalogLoaderTest, ResourceReplacementKindIsRead) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/api_replacement_kind.yaml"));
  ASSERT_EQ(catalog->apis.size(), 2u);
  ASSERT_EQ(catalog->apis[0].resources.size(), 1u);
  const APIResource& endpoints = catalog->apis[0].resources[0];
  EXPECT_EQ(endpoints.replacement, "discovery.k8s.io/v1");
  EXPECT_EQ(endpoints.replacement_kind, "EndpointSlice");
  EXPECT_EQ(catalog->apis[1].resources[0].replacement_kind, "");
}

TEST(CatalogLoaderTest, NoPatchChangesByDefault) {
  ASSERT_OK_AND_ASSIGN(auto catalog, Load("good/api_history.yaml"));
  EXPECT_TRUE(catalog->patch_changes.empty());
}

TEST(CatalogLoaderTest, ErrorsOutputIsEmptyOnSuccess) {
  CatalogErrors errors;
  errors.errors.push_back(CatalogError{3, "stale"});
  ASSERT_OK(Load("good/minimal.yaml", &errors));
  EXPECT_TRUE(errors.errors.empty());
}

// ---------------------------------------------------------------------------
// Rejections: one file per rule, the line and the message of its one error.

struct BadCase {
  const char* file;  // under tests/testdata/catalogs/bad/, without ".yaml"
  int line;
  const char* message;  // a substring of the error's message
  size_t errors = 1;    // how many errors the file produces in all
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class RejectionTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(RejectionTest, ReportsLineAndMessage) {
  const BadCase& c = GetParam();
  const std::string file = absl::StrCat("bad/", c.file, ".yaml");
  CatalogErrors errors;
  absl::StatusOr<std::unique_ptr<Catalog>> catalog = Load(file, &errors);
  ASSERT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr(c.message)));
  ASSERT_THAT(errors.errors, SizeIs(c.errors)) << catalog.status();
  bool found = false;
  for (const CatalogError& error : errors.errors) {
    if (error.message.find(c.message) != std::string::npos) {
      EXPECT_EQ(error.line, c.line) << error.message;
      found = true;
    }
  }
  EXPECT_TRUE(found) << catalog.status();
  // The status message is every error, "<source>:<line>: <message>".
  const std::string prefix =
      c.line > 0 ? absl::StrCat(file, ":", c.line, ": ") : file + ": ";
  EXPECT_THAT(std::string(catalog.status().message()),
              HasSubstr(absl::StrCat(prefix)));
}

const BadCase kBadCases[] = {
    // The YAML itself.
    {"empty", 0,
     "empty catalog: expected a mapping with at least binaryVersion"},
    {"only_comments", 0, "empty catalog"},
    {"truncated", 5,
     "invalid YAML: did not find expected ',' or '}' while parsing a flow "
     "mapping (started on line 5)"},
    {"multiple_documents", 2, "more than one YAML document"},
    {"top_level_not_mapping", 1,
     "the top level must be a mapping, got a sequence"},
    {"alias", 7, "YAML aliases (*name) are not supported"},
    {"key_not_scalar", 2,
     "the top level: a key must be a scalar, got a sequence"},
    // The schema (catalog.proto), by json_name.
    {"unknown_top_level_key", 2,
     "unknown key \"featurs\" in the top level; accepted: apiHistory, apis, "
     "binaryVersion, cluster, crds, exactness, features, patchChanges, "
     "patchesKnownThrough, skewPolicy, storageOverrides"},
    // A miscased key is unknown, and the key it missed is then missing.
    {"unknown_nested_key", 5,
     "unknown key \"prerelease\" in features[0].versionedSpecs[0]; accepted: "
     "default, lockToDefault, minCompatibilityVersion, preRelease, version; "
     "did "
     "you mean \"preRelease\"?",
     2},
    {"duplicate_key", 4,
     "duplicate key \"name\" in features[0] (first at line 3)"},
    {"bool_not_true_or_false", 5,
     "features[0].versionedSpecs[0].default must be a boolean (true or false), "
     "got \"yes\""},
    {"bool_quoted", 5, "got \"true\" (quoted; write it without quotes)"},
    {"int_not_decimal", 4,
     "skewPolicy[0].min.offset must be an integer, got \"-2.5\""},
    {"sequence_expected", 3, "features must be a sequence, got a mapping"},
    {"mapping_expected", 2, "cluster must be a mapping, got a sequence"},
    {"scalar_expected", 3, "features[0].name must be a string, got a sequence"},
    // binaryVersion.
    {"missing_binary_version", 1, "binaryVersion is required"},
    {"empty_binary_version", 1, "binaryVersion is empty"},
    {"bad_binary_version", 1, "binaryVersion: could not parse \"one.36\""},
    // The cluster section: parsable, and what kube-apiserver accepts as flags.
    {"bad_cluster_emulation_version", 3,
     "cluster.emulationVersion: illegal version string \"1.x\""},
    {"cluster_emulation_below_floor", 3, "cluster: emulation_version \"1.30\""},
    {"cluster_min_compat_above_emulation", 3,
     "cluster: min_compatibility_version \"1.35\""},
    {"unknown_cluster_feature_gate", 3,
     "cluster.featureGates: unknown feature gate \"NoSuchGate\"; accepted: a "
     "name from features, AllAlpha or AllBeta"},
    {"cluster_locked_gate_override", 3,
     "cluster.featureGates: cannot set feature gate Foo to false"},
    {"cluster_bad_runtime_config", 3, "nosuchgroup.k8s.io"},
    // cluster.upgradeTarget: a plan from the cluster section must be
    // answerable (engine/upgrade_plan.h).
    // A later binary is planned across the lines served together
    // (runtime/catalog_pipeline.cc); an older one is never a target.
    {"upgrade_target_older_binary", 4,
     "cluster.upgradeTarget.binaryVersion: \"1.35\" is older than this "
     "catalog's binary 1.36"},
    {"upgrade_target_older_than_cluster", 4,
     "cluster.upgradeTarget: emulation_version 1.34 is older than from's "
     "1.35"},
    {"upgrade_target_bad_version", 5,
     "cluster.upgradeTarget.emulationVersion: illegal version string "
     "\"1.x\""},
    {"upgrade_target_unknown_key", 5,
     "unknown key \"emulation\" in cluster.upgradeTarget"},
    // Features.
    {"feature_without_name", 3, "features[0]: name is required"},
    {"duplicate_feature", 6,
     "duplicate feature \"Foo\" (first defined at line 3)"},
    {"feature_without_specs", 3, "feature \"Foo\" has no versionedSpecs"},
    {"bad_pre_release", 5,
     "preRelease \"BETA\" is not a stage; accepted: Alpha, Beta, GA, "
     "Deprecated"},
    {"missing_pre_release", 5, "versionedSpecs[0]: preRelease is required"},
    {"bad_spec_version", 5,
     "versionedSpecs[0]: version \"1.3x\" is not a version: expected "
     "\"major.minor\""},
    {"missing_spec_version", 5, "versionedSpecs[0]: version is required"},
    {"bad_spec_min_compatibility_version", 6,
     "versionedSpecs[1]: minCompatibilityVersion \"v1\" is not a version"},
    // ValidateFeatureSpecs (component-base AddVersioned), at the failing spec.
    {"specs_out_of_order", 6,
     "feature \"Foo\" lists version transitions in decreasing order"},
    {"spec_stability_regression", 7,
     "feature \"Foo\" regresses stability from more stable level to ALPHA"},
    // APIs.
    {"duplicate_group_version", 6,
     "duplicate group-version \"apps/v1\" (first defined at line 3)"},
    {"missing_api_version", 3, "apis[0] (group \"apps\"): version is required"},
    {"duplicate_resource", 7,
     "duplicate resource \"deployments\" in apps/v1 (first defined at line 6)"},
    {"uppercase_resource", 6,
     "resource \"Deployments\" must be the lowercase plural name"},
    {"missing_kind", 6, "apps/v1 deployments: kind is required"},
    {"bad_lifecycle_version", 6,
     "apps/v1 deployments: introduced \"1.9.1\" is not a version"},
    {"lifecycle_out_of_order", 6, "deprecated 1.8 is before introduced 1.16"},
    {"removed_before_introduced", 6, "removed 1.9 is before introduced 1.16"},
    {"unknown_replacement", 6,
     "replacement \"apps/v1\" is not a group-version of apis"},
    // Storage overrides.
    {"storage_override_unknown_resource", 8,
     "storage override for storagemigration.k8s.io/storagemigrations: no "
     "group-version in apis has resource \"storagemigrations\""},
    {"storage_override_version_without_resource", 11,
     "version \"v1beta2\" does not have that resource; accepted: v1"},
    {"duplicate_storage_override", 9,
     "duplicate storage override for apps/deployments (first at line 8)"},
    // Skew policy.
    {"skew_bad_base", 4,
     "skewPolicy[0].min.of \"minCompat\" is not a base version; accepted: "
     "minCompatibility, emulation, binary"},
    {"skew_missing_bound", 3, "skewPolicy[0]: max is required"},
    {"skew_without_components", 3, "skewPolicy[0]: components is required"},
    {"skew_repeated_component", 8,
     "component \"kubelet\" is already covered by the skew rule at line 3"},
    // CRD histories.
    {"crd_duplicate_name", 4,
     "duplicate CRD \"clusters.cluster.x-k8s.io\" (first defined at line 3)"},
    {"crd_bad_release", 5, "release could not parse \"next\" as version"},
    {"crd_releases_out_of_order", 6,
     "release v1.9 is not after release v1.10 (line 5)"},
    {"crd_two_storage_versions", 5,
     "2 versions are marked storage; a CRD has exactly one storage version"},
    {"crd_bad_upgrade_span", 4, "upgradeSpan 0 must be at least 1"},
    // API history.
    {"history_missing_kind", 3, "apiHistory[0]: version and kind are required"},
    {"history_duplicate", 5,
     "duplicate apiHistory batch/v1beta1 CronJob (first defined at line 3)"},
    {"history_bad_version", 7,
     "apiHistory extensions/v1beta1 Ingress: removed \"v1.22\" is not a "
     "version: expected \"major.minor\""},
    {"history_out_of_order", 5,
     "apiHistory policy/v1beta1 PodSecurityPolicy: removed 1.21 is before "
     "deprecated 1.25"},
    {"history_types_deleted_before_introduced", 4,
     "typesDeleted 1.26 is not after introduced 1.27"},
    {"history_unknown_replacement", 5,
     "replacement \"networking.k8s.io/v2\" is not a group-version of "
     "apiHistory or apis"},
    {"history_enabled_by_default_not_beta", 7,
     "enabledByDefault applies to beta versions only"},
    {"api_replacement_kind_without_replacement", 6,
     "v1 endpoints: replacementKind \"EndpointSlice\" needs replacement"},
    // Patch changes.
    {"patch_change_unknown_feature", 10,
     "patchChanges[0]: feature \"NoSuchGate\" is not a gate of this catalog's "
     "features"},
    {"patch_change_bad_version", 10,
     "patchChanges[0]: since \"1.31\" is not a patch release: expected "
     "\"major.minor.patch\""},
    {"patch_change_other_line", 10,
     "patchChanges[0]: since 1.32.1 is not a patch of this catalog's line "
     "1.31"},
    {"patch_change_after_binary", 10,
     "patchChanges[0]: since 1.31.9 is after the catalog's binaryVersion "
     "1.31.8"},
    {"patch_change_missing_before", 10, "patchChanges[0]: before is required"},
    {"patch_change_duplicate", 11,
     "patchChanges[1]: feature \"OrderedNamespaceDeletion\" has an entry since "
     "1.31.7 already; entries of one gate are listed with since ascending"},
    {"patch_change_specs_and_unregistered", 11,
     "patchChanges[0]: specsBefore with registeredBefore: false; give one of "
     "them"},
    {"exactness_level", 3,
     "exactness.level \"BETA\" is not accepted; accepted: EXACT, PROVISIONAL"},
    {"exactness_no_reason", 3,
     "exactness: a PROVISIONAL catalog needs a reason"},
    {"patches_known_through_before", 3,
     "patchesKnownThrough 1.35.2 is not a patch of the line 1.35 at or after "
     "its binaryVersion 1.35.4"},
};

INSTANTIATE_TEST_SUITE_P(BadCatalogs, RejectionTest,
                         ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           return std::string(info.param.file);
                         });

// ---------------------------------------------------------------------------
// Every error, not just the first, sorted by line.

TEST(CatalogLoaderTest, ReportsEveryErrorSortedByLine) {
  CatalogErrors errors;
  absl::StatusOr<std::unique_ptr<Catalog>> catalog =
      Load("bad/multiple_errors.yaml", &errors);
  ASSERT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("multiple_errors.yaml:5: ")));
  std::vector<int> lines;
  for (const CatalogError& error : errors.errors) lines.push_back(error.line);
  EXPECT_THAT(lines, ElementsAre(5, 6, 10, 12, 15));
  EXPECT_THAT(errors.errors[0].message, HasSubstr("preRelease \"BETA\""));
  EXPECT_THAT(errors.errors[1].message, HasSubstr("duplicate feature \"Foo\""));
  EXPECT_THAT(errors.errors[2].message, HasSubstr("version is required"));
  EXPECT_THAT(errors.errors[3].message,
              HasSubstr("unknown key \"unknownKey\""));
  EXPECT_THAT(errors.errors[4].message, HasSubstr("of \"x\""));
}

TEST(CatalogLoaderTest, StatusMessageIsOneLinePerError) {
  CatalogErrors errors;
  absl::StatusOr<std::unique_ptr<Catalog>> catalog =
      Load("bad/multiple_errors.yaml", &errors);
  ASSERT_FALSE(catalog.ok());
  EXPECT_EQ(std::string(catalog.status().message()),
            errors.Format("bad/multiple_errors.yaml"));
  std::vector<std::string> status_lines;
  std::stringstream in{std::string(catalog.status().message())};
  for (std::string line; std::getline(in, line);) status_lines.push_back(line);
  ASSERT_THAT(status_lines, SizeIs(5));
  EXPECT_THAT(status_lines[3],
              StartsWith("bad/multiple_errors.yaml:12: unknown key"));
}

TEST(CatalogLoaderTest, FormatOmitsLineZero) {
  CatalogErrors errors;
  errors.errors.push_back(CatalogError{0, "whole file"});
  errors.errors.push_back(CatalogError{7, "one line"});
  EXPECT_EQ(errors.Format("c.yaml"), "c.yaml: whole file\nc.yaml:7: one line");
}

TEST(CatalogLoaderTest, RejectsCatalogLargerThanTheLimit) {
  std::string bytes = "binaryVersion: \"1.36\"\n";
  bytes.resize(kMaxCatalogBytes + 1, '#');
  CatalogErrors errors;
  EXPECT_THAT(ParseCatalog(bytes, "big.yaml", &errors),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("big.yaml: catalog is 16777217 bytes; the "
                                 "limit is 16777216 bytes")));
  ASSERT_THAT(errors.errors, SizeIs(1));
  EXPECT_EQ(errors.errors[0].line, 0);
}

TEST(CatalogLoaderTest, AcceptsCatalogOfExactlyTheLimit) {
  std::string bytes = "binaryVersion: \"1.36\"\n";
  bytes.resize(kMaxCatalogBytes, '#');
  EXPECT_OK(ParseCatalog(bytes, "big.yaml"));
}

TEST(CatalogLoaderTest, BinaryGarbageIsAnErrorNotACrash) {
  const std::string bytes("\0\xff\xfe{[\"\x01:", 9);
  EXPECT_THAT(
      ParseCatalog(bytes, "garbage"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("garbage")));
}

TEST(CatalogLoaderTest, TextThatIsNotUtf8IsRefusedWithItsLineAndByte) {
  // Catalog strings become proto3 strings, which must be UTF-8; the YAML
  // reader refuses other bytes and says where, without quoting them.
  EXPECT_THAT(
      ParseCatalog(
          "binaryVersion: \"1.36\"\nfeatures:\n  - name: \"Fo\xffo\"\n",
          "latin1.yaml"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("latin1.yaml:3: invalid YAML: invalid leading UTF-8 "
                         "octet (byte 0xff at offset 45)")));
}

TEST(CatalogLoaderTest, ControlCharactersAreRefused) {
  EXPECT_THAT(ParseCatalog("binaryVersion: \"1.36\"\x01\n", "ctl.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ctl.yaml:1: invalid YAML: control characters "
                                 "are not allowed (byte 0x01 at offset 21)")));
}

TEST(CatalogLoaderTest, NestedUnknownValueIsSkipped) {
  // Unknown keys are not descended into, however deep their value.
  std::string bytes = "binaryVersion: \"1.36\"\nextra: ";
  for (int i = 0; i < 200; ++i) bytes += "[{a: ";
  for (int i = 0; i < 200; ++i) bytes += "}]";
  bytes += "\n";
  CatalogErrors errors;
  EXPECT_FALSE(ParseCatalog(bytes, "deep.yaml", &errors).ok());
  ASSERT_THAT(errors.errors, SizeIs(1));
  EXPECT_THAT(errors.errors[0].message, HasSubstr("unknown key \"extra\""));
}

TEST(CatalogLoaderTest, ExtremelyDeepNestingIsAnErrorNotACrash) {
  // Nesting is bounded (1000 levels), before any frame is built for it.
  std::string bytes = "binaryVersion: \"1.36\"\nextra: ";
  bytes.append(100000, '[');
  bytes.append(100000, ']');
  EXPECT_THAT(ParseCatalog(bytes, "deep.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("deep.yaml:2: invalid YAML")));
}

TEST(CatalogLoaderTest, EveryPrefixOfACatalogLoadsOrIsRejected) {
  // A catalog cut anywhere (a half-written ConfigMap) is valid or rejected
  // with INVALID_ARGUMENT; never a crash, never another code.
  const std::string full = ReadTestdata("good/small.yaml");
  for (size_t n = 0; n <= full.size(); ++n) {
    absl::StatusOr<std::unique_ptr<Catalog>> catalog =
        ParseCatalog(absl::string_view(full).substr(0, n), "cut.yaml");
    if (!catalog.ok()) {
      ASSERT_EQ(catalog.status().code(), absl::StatusCode::kInvalidArgument)
          << n << ": " << catalog.status();
    }
  }
}

TEST(CatalogLoaderTest, FeatureSpecRulesFollowTheBinaryReleaseLine) {
  // Two entries at the same version differing only in minCompatibilityVersion
  // are valid from Kubernetes 1.35 and rejected before (versions must strictly
  // increase; no min-compatibility versions).
  const std::string specs =
      "features:\n"
      "  - name: Foo\n"
      "    versionedSpecs:\n"
      "      - {version: \"1.34\", default: false, lockToDefault: false, "
      "preRelease: Beta}\n"
      "      - {version: \"1.34\", default: true, lockToDefault: false, "
      "preRelease: Beta, minCompatibilityVersion: \"1.34\"}\n";
  EXPECT_OK(ParseCatalog("binaryVersion: \"1.35\"\n" + specs, "a.yaml"));
  CatalogErrors errors;
  EXPECT_FALSE(
      ParseCatalog("binaryVersion: \"1.34\"\n" + specs, "b.yaml", &errors)
          .ok());
  ASSERT_THAT(errors.errors, SizeIs(1));
  EXPECT_EQ(errors.errors[0].line, 6);
}

TEST(CatalogLoaderTest, SpecMinCompatibilityOnALineWithoutTheRuleIsRefused) {
  // component-base's FeatureSpec has no MinCompatibilityVersion at v0.34.0;
  // v0.35.0 added it with featureSpecAtEmulationAndMinCompatVersion, which
  // honours it (commit 0b47e99, first tagged kubernetes-1.35.0-alpha.3). The
  // gate is DRAFractionalCapacityRange of pkg/features/kube_features.go at
  // the 1.37 code freeze (ae5d4d35), written in block style so that the
  // field has a line of its own.
  const std::string specs =
      "features:\n"                                   // 2
      "  - name: DRAFractionalCapacityRange\n"        // 3
      "    versionedSpecs:\n"                         // 4
      "      - version: \"1.37\"\n"                   // 5
      "        default: false\n"                      // 6
      "        preRelease: Beta\n"                    // 7
      "      - version: \"1.37\"\n"                   // 8
      "        default: true\n"                       // 9
      "        preRelease: Beta\n"                    // 10
      "        minCompatibilityVersion: \"1.37\"\n";  // 11
  for (const char* binary : {"1.31", "1.32", "1.33", "1.34"}) {
    SCOPED_TRACE(binary);
    CatalogErrors errors;
    const absl::Status status =
        ParseCatalog(absl::StrCat("binaryVersion: \"", binary, "\"\n", specs),
                     "old.yaml", &errors)
            .status();
    EXPECT_THAT(status,
                StatusIs(absl::StatusCode::kInvalidArgument,
                         StartsWith("old.yaml:11: feature "
                                    "\"DRAFractionalCapacityRange\" "
                                    "versionedSpecs[1]: "
                                    "minCompatibilityVersion is not a feature "
                                    "spec field of kube-apiserver")));
    EXPECT_THAT(
        status.message(),
        HasSubstr(absl::StrCat("kube-apiserver ", binary, " (binaryVersion)")));
    EXPECT_THAT(status.message(), HasSubstr("from Kubernetes 1.35"));
    ASSERT_THAT(errors.errors, SizeIs(1));
    EXPECT_EQ(errors.errors[0].line, 11);
  }
  for (const char* binary : {"1.35", "1.36", "1.37"}) {
    SCOPED_TRACE(binary);
    EXPECT_OK(ParseCatalog(
        absl::StrCat("binaryVersion: \"", binary, "\"\n", specs), "new.yaml"));
  }
}

}  // namespace
// A rejected catalog's errors are bounded (issue 36: a 7 MB file of unknown
// keys gave 400,000 errors, and the kept message made GetCatalog's answer
// 124 MB): the first kMaxReportedErrors by line, a count of the rest, and
// each quote cut.
TEST(CatalogLoaderTest, ErrorsOfARejectedCatalogAreBounded) {
  std::string yaml = "binaryVersion: \"1.36\"\n";
  for (int i = 0; i < 1000; ++i) absl::StrAppend(&yaml, "unknown", i, ": 1\n");
  CatalogErrors errors;
  const auto catalog = ParseCatalog(yaml, "big.yaml", &errors);
  ASSERT_FALSE(catalog.ok());
  ASSERT_THAT(errors.errors, SizeIs(kMaxReportedErrors));
  EXPECT_EQ(errors.omitted, 900u);
  EXPECT_EQ(errors.Total(), 1000u);
  EXPECT_EQ(errors.errors.front().line, 2);
  EXPECT_THAT(errors.errors.front().message, HasSubstr("unknown0"));
  EXPECT_EQ(errors.errors.back().line, 101);
  EXPECT_TRUE(std::is_sorted(errors.errors.begin(), errors.errors.end(),
                             [](const CatalogError& a, const CatalogError& b) {
                               return a.line < b.line;
                             }));
  EXPECT_THAT(
      catalog.status().message(),
      HasSubstr("big.yaml: and 900 more errors (the first 100 by line"));
  EXPECT_LT(catalog.status().message().size(), 64u << 10);
  for (const CatalogError& error : errors.errors) {
    EXPECT_LE(error.message.size(), 2100u);
  }
}

TEST(CatalogLoaderTest, AnErrorQuotingAHugeValueIsCut) {
  // (A key cannot be that long: YAML bounds implicit keys at 1024 chars.)
  const std::string yaml =
      absl::StrCat("binaryVersion: \"1.", std::string(5000, 'k'), "\"\n");
  CatalogErrors errors;
  ASSERT_FALSE(ParseCatalog(yaml, "key.yaml", &errors).ok());
  ASSERT_THAT(errors.errors, SizeIs(1));
  EXPECT_THAT(errors.errors[0].message, HasSubstr("more bytes)"));
  EXPECT_LE(errors.errors[0].message.size(), 2100u);
}

}  // namespace compatd::catalog
