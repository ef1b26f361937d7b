// DecideStorageVersion (apiserver
// pkg/server/storage/resource_encoding_config.go emulatedStorageVersion, by
// release line) and StorageVersionHash (apiserver
// pkg/endpoints/discovery/storageversionhash.go).

#include "engine/storage_version.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Version V(absl::string_view text) { return Version::Parse(text).value(); }

struct ResSpec {
  std::string version;
  std::string introduced;  // "" = absent
  std::string replacement;
};

APIGroupVersion GV(std::string group, std::string version,
                   std::vector<APIResource> resources) {
  APIGroupVersion gv;
  gv.group = std::move(group);
  gv.version = std::move(version);
  gv.resources = std::move(resources);
  return gv;
}

APIResource R(std::string resource, std::string kind,
              absl::string_view introduced = "", std::string replacement = "") {
  APIResource r;
  r.resource = std::move(resource);
  r.kind = std::move(kind);
  if (!introduced.empty()) r.introduced = V(introduced);
  r.replacement = std::move(replacement);
  return r;
}

// One resource, "widgets" (kind Widget) in group example.k8s.io, in the given
// versions (priority order).
Catalog Widgets(const std::vector<ResSpec>& versions) {
  Catalog c;
  for (const ResSpec& v : versions) {
    c.apis.push_back(GV("example.k8s.io", v.version,
                        {R("widgets", "Widget", v.introduced, v.replacement)}));
  }
  return c;
}

EffectiveVersions EV(absl::string_view binary, absl::string_view emulation,
                     absl::string_view min_compatibility) {
  EffectiveVersions v;
  v.binary = V(binary);
  v.emulation = V(emulation).ToMajorMinor();
  v.min_compatibility = V(min_compatibility).ToMajorMinor();
  return v;
}

// ---------------------------------------------------------------------------
// StorageVersionHash: values from public discovery documents
// (docs/kubernetes-rules.md#storage-version-hash).

struct HashCase {
  const char* group;
  const char* version;
  const char* kind;
  const char* hash;
};

class StorageVersionHashTest : public ::testing::TestWithParam<HashCase> {};

TEST_P(StorageVersionHashTest, MatchesDiscovery) {
  const HashCase& c = GetParam();
  EXPECT_EQ(StorageVersionHash(c.group, c.version, c.kind), c.hash);
}

INSTANTIATE_TEST_SUITE_P(
    Discovery, StorageVersionHashTest,
    ::testing::Values(
        HashCase{"", "v1", "Pod", "xPOwRZ+Yhw8="},
        HashCase{"apps", "v1", "Deployment", "8aSe+NMegvE="},
        HashCase{"batch", "v1", "Job", "mudhfqk/qZY="},
        HashCase{"autoscaling", "v1", "HorizontalPodAutoscaler",
                 "oQlkt7f5j/A="},
        HashCase{"networking.k8s.io", "v1", "Ingress", "39NQlfNR+bo="},
        HashCase{"", "v1", "ConfigMap", "qFsyl6wFWjQ="},
        HashCase{"", "v1", "Secret", "S6u1pOWzb84="},
        HashCase{"", "v1", "Service", "0/CO1lhkEBI="},
        HashCase{"", "v1", "Namespace", "Q3oi5N2YM8M="},
        HashCase{"", "v1", "Node", "XwShjMxG9Fs="},
        HashCase{"", "v1", "Endpoints", "fWeeMqaN/OA="},
        HashCase{"", "v1", "Event", "r2yiGXH7wu8="},
        HashCase{"", "v1", "ServiceAccount", "pbx9ZvyFpBE="},
        HashCase{"", "v1", "PersistentVolume", "HN/zwEC+JgM="},
        HashCase{"", "v1", "PersistentVolumeClaim", "QWTyNDq0dC4="},
        HashCase{"", "v1", "ReplicationController", "Jond2If31h0="},
        HashCase{"", "v1", "ResourceQuota", "8uhSgffRX6w="},
        HashCase{"", "v1", "LimitRange", "EBKMFVe6cwo="},
        HashCase{"", "v1", "PodTemplate", "LIXB2x4IFpk="},
        HashCase{"batch", "v1", "CronJob", "sd5LIXh4Fjs="}));

TEST(StorageVersionHashTest, IsTwelveBase64Characters) {
  const std::string hash = StorageVersionHash("x", "v9", "Y");
  EXPECT_EQ(hash.size(), 12u);
  EXPECT_EQ(hash.back(), '=');
}

TEST(StorageVersionDecisionTest, CarriesTheHashOfTheStorageVersion) {
  Catalog c;
  c.apis.push_back(GV("", "v1", {R("pods", "Pod", "1.0")}));
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(c, EV("1.36", "1.36", "1.35"), "", "pods"));
  EXPECT_EQ(d.version, "v1");
  EXPECT_EQ(d.kind, "Pod");
  EXPECT_EQ(d.storage_version_hash, "xPOwRZ+Yhw8=");
}

// ---------------------------------------------------------------------------
// The release lines on the same catalogs
// (docs/kubernetes-rules.md#storage-version-selection).

struct EraCase {
  const char* name;
  std::vector<ResSpec> versions;  // priority order
  const char* binary;
  const char* emulation;
  const char* min_compatibility;
  const char* expected_version;
  bool expected_fallback;
};

class StorageVersionEraTest : public ::testing::TestWithParam<EraCase> {};

TEST_P(StorageVersionEraTest, PicksWhatThatKubeApiserverPicks) {
  const EraCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(Widgets(c.versions),
                           EV(c.binary, c.emulation, c.min_compatibility),
                           "example.k8s.io", "widgets"));
  EXPECT_EQ(d.version, c.expected_version) << d.reason;
  EXPECT_EQ(d.fallback, c.expected_fallback) << d.reason;
  EXPECT_FALSE(d.overridden);
}

// Alpha -> beta: v1beta1 introduced at the emulation version, v1alpha1 two
// releases earlier (the MutatingAdmissionPolicy shape of kubernetes#137375).
const std::vector<ResSpec> kAlphaToBeta133 = {{"v1beta1", "1.33", ""},
                                              {"v1alpha1", "1.31", ""}};
const std::vector<ResSpec> kAlphaToBeta136 = {{"v1beta1", "1.36", ""},
                                              {"v1alpha1", "1.34", ""}};
const std::vector<ResSpec> kAlphaToBeta137 = {{"v1beta1", "1.37", ""},
                                              {"v1alpha1", "1.35", ""}};
// The same with the alpha declaring a replacement.
const std::vector<ResSpec> kReplacedAlpha133 = {
    {"v1beta1", "1.33", ""}, {"v1alpha1", "1.31", "example.k8s.io/v1beta1"}};
const std::vector<ResSpec> kReplacedAlpha136 = {
    {"v1beta1", "1.36", ""}, {"v1alpha1", "1.34", "example.k8s.io/v1beta1"}};
// Only one version, introduced at the emulation version.
const std::vector<ResSpec> kNew133 = {{"v1", "1.33", ""}};
const std::vector<ResSpec> kNew136 = {{"v1", "1.36", ""}};
const std::vector<ResSpec> kNew137 = {{"v1", "1.37", ""}};
// Beta to GA, beta rollback-safe.
const std::vector<ResSpec> kBetaToGA = {{"v1", "1.33", ""},
                                        {"v1beta1", "1.30", ""}};

INSTANTIATE_TEST_SUITE_P(
    ReleaseLines, StorageVersionEraTest,
    ::testing::Values(
        // Alpha -> beta.
        EraCase{"AlphaToBeta_134_PicksRollbackSafeAlpha", kAlphaToBeta133,
                "1.34", "1.33", "1.32", "v1alpha1", false},
        EraCase{"AlphaToBeta_136_PicksRollbackSafeAlpha", kAlphaToBeta136,
                "1.36", "1.36", "1.35", "v1alpha1", false},
        EraCase{"AlphaToBeta_137_PicksBetaIntroducedByEmulation",
                kAlphaToBeta137, "1.37", "1.37", "1.36", "v1beta1", false},
        EraCase{"AlphaToBeta_131_PicksRollbackSafeAlpha",
                {{"v1beta1", "1.31", ""}, {"v1alpha1", "1.29", ""}},
                "1.31",
                "1.31",
                "1.30",
                "v1alpha1",
                false},
        // A replacement only matters in 1.32-1.34.
        EraCase{"ReplacedAlpha_134_SkippedThenGroupFallback", kReplacedAlpha133,
                "1.34", "1.33", "1.32", "v1beta1", true},
        EraCase{"ReplacedAlpha_133_SkippedThenGroupFallback", kReplacedAlpha133,
                "1.33", "1.33", "1.32", "v1beta1", true},
        EraCase{"ReplacedAlpha_135_NotSkipped", kReplacedAlpha133, "1.35",
                "1.33", "1.32", "v1alpha1", false},
        EraCase{"ReplacedAlpha_136_NotSkipped", kReplacedAlpha136, "1.36",
                "1.36", "1.35", "v1alpha1", false},
        EraCase{"ReplacedAlpha_131_NotSkipped",
                {{"v1beta1", "1.31", ""},
                 {"v1alpha1", "1.29", "example.k8s.io/v1beta1"}},
                "1.31",
                "1.31",
                "1.30",
                "v1alpha1",
                false},
        EraCase{"ReplacedVersionWithoutIntroduced_134_NotSkipped",
                {{"v1beta1", "1.33", ""},
                 {"v1alpha1", "", "example.k8s.io/v1beta1"}},
                "1.34",
                "1.33",
                "1.32",
                "v1alpha1",
                false},
        EraCase{"ReplacedAlpha_134_MinCompatZero_NotSkipped",
                {{"v1alpha1", "1.31", "example.k8s.io/v1beta1"},
                 {"v1alpha2", "1.30", ""}},
                "1.34",
                "1.33",
                "0.0",
                "v1alpha1",
                false},
        // Nothing introduced by min-compatibility.
        EraCase{"NothingByMinCompat_134_GroupFallback", kNew133, "1.34", "1.33",
                "1.32", "v1", true},
        EraCase{"NothingByMinCompat_136_GroupFallback", kNew136, "1.36", "1.36",
                "1.35", "v1", true},
        EraCase{"NothingByMinCompat_137_IntroducedByEmulation", kNew137, "1.37",
                "1.37", "1.36", "v1", false},
        EraCase{"NothingByEmulation_137_Fallback", kNew137, "1.38", "1.36",
                "1.35", "v1", true},
        // Beta -> GA (the KEP integration grid's "API Storage version
        // changed" row: v1beta1 at N-1, v1 at N).
        EraCase{"BetaToGA_NMinus1_StoresBeta", kBetaToGA, "1.34", "1.33",
                "1.32", "v1beta1", false},
        EraCase{"BetaToGA_N_StoresGA", kBetaToGA, "1.34", "1.34", "1.33", "v1",
                false},
        EraCase{"BetaToGA_137_N_StoresGA", kBetaToGA, "1.37", "1.37", "1.36",
                "v1", false},
        // No introduced version: always eligible.
        EraCase{"NoIntroduced_136_FirstVersion",
                {{"v2", "", ""}, {"v1", "1.20", ""}},
                "1.36",
                "1.36",
                "1.35",
                "v2",
                false},
        // min-compatibility 0.0 skips the lifecycle checks.
        EraCase{"MinCompatZero_136_FirstVersion", kNew136, "1.36", "1.36",
                "0.0", "v1", false},
        EraCase{"MinCompatZero_137_FirstNonAlpha",
                {{"v1alpha2", "1.40", ""}, {"v1beta1", "1.40", ""}},
                "1.37",
                "1.37",
                "0.0",
                "v1beta1",
                false},
        EraCase{"MinCompatZero_137_OnlyAlpha",
                {{"v1alpha2", "1.40", ""}, {"v1alpha1", "1.40", ""}},
                "1.37",
                "1.37",
                "0.0",
                "v1alpha2",
                false},
        // 1.37 pass 1 skips alpha versions even when rollback-safe (here the
        // catalog lists the alpha first, as a scheme priority may).
        EraCase{"AlphaListedFirst_136_PicksAlpha",
                {{"v1alpha1", "1.30", ""}, {"v1beta1", "1.35", ""}},
                "1.36",
                "1.36",
                "1.35",
                "v1alpha1",
                false},
        EraCase{"AlphaListedFirst_137_SkipsAlphaInPassOne",
                {{"v1alpha1", "1.30", ""}, {"v1beta1", "1.36", ""}},
                "1.37",
                "1.37",
                "1.36",
                "v1beta1",
                false},
        EraCase{"OnlyAlpha_137_PassTwo",
                {{"v1alpha2", "1.37", ""}, {"v1alpha1", "1.35", ""}},
                "1.37",
                "1.37",
                "1.36",
                "v1alpha2",
                false},
        // Before 1.31: the group's preferred version, no lifecycle.
        EraCase{"PreCompatibility_130_GroupPreferred", kNew136, "1.30", "1.30",
                "1.29", "v1", false}),
    [](const ::testing::TestParamInfo<EraCase>& info) {
      return std::string(info.param.name);
    });

TEST(StorageVersionEraTest, FallbackReasonSaysRollbackIsNotSafe) {
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(Widgets(kNew136), EV("1.36", "1.36", "1.35"),
                           "example.k8s.io", "widgets"));
  EXPECT_TRUE(d.fallback);
  EXPECT_THAT(d.reason, HasSubstr("falls back to the group's preferred "
                                  "version v1"));
  EXPECT_THAT(d.reason, HasSubstr("rolling back to 1.35 is not safe"));
}

TEST(StorageVersionEraTest, GroupFallbackMayBeAVersionWithoutTheResource) {
  // Up to 1.36 the fallback is PrioritizedVersionsForGroup(group)[0], even
  // when the kind is not in it.
  Catalog c;
  c.apis.push_back(GV("example.k8s.io", "v2", {R("gadgets", "Gadget")}));
  c.apis.push_back(
      GV("example.k8s.io", "v1", {R("widgets", "Widget", "1.36")}));
  ASSERT_OK_AND_ASSIGN(StorageVersionDecision d,
                       DecideStorageVersion(c, EV("1.36", "1.36", "1.35"),
                                            "example.k8s.io", "widgets"));
  EXPECT_EQ(d.version, "v2");
  EXPECT_TRUE(d.fallback);
  EXPECT_EQ(d.kind, "Widget");
  EXPECT_EQ(d.storage_version_hash,
            StorageVersionHash("example.k8s.io", "v2", "Widget"));
  EXPECT_THAT(d.decodable_versions, ElementsAre("v1"));
}

TEST(StorageVersionEraTest, From137FallbackIsStillTheGroupsPreferredVersion) {
  // apiserver v0.37.0-beta.0 (and master) resource_encoding_config.go:
  // BackwardCompatibileStorageEncodingFor passes
  // PrioritizedVersionsForGroup(resource.Group)[0] (lines 102-106) and
  // emulatedStorageVersion returns it when neither pass finds a version (line
  // 215). kubernetes#137375 changed the passes, not this fallback.
  Catalog c;
  c.apis.push_back(GV("example.k8s.io", "v2", {R("gadgets", "Gadget")}));
  c.apis.push_back(
      GV("example.k8s.io", "v1", {R("widgets", "Widget", "1.38")}));
  for (const char* binary : {"1.37", "1.38.0-alpha.1"}) {
    ASSERT_OK_AND_ASSIGN(StorageVersionDecision d,
                         DecideStorageVersion(c, EV(binary, "1.37", "1.36"),
                                              "example.k8s.io", "widgets"));
    EXPECT_EQ(d.version, "v2") << binary;
    EXPECT_TRUE(d.fallback);
    EXPECT_EQ(d.kind, "Widget");
    EXPECT_EQ(d.storage_version_hash,
              StorageVersionHash("example.k8s.io", "v2", "Widget"));
    EXPECT_THAT(d.reason, HasSubstr("falls back to the group's preferred "
                                    "version v2"));
    EXPECT_THAT(d.reason, HasSubstr("rolling back to 1.36 is not safe"));
  }
}

TEST(StorageVersionEraTest, PassTwoReasonWarnsWhenRollbackIsUnsafe) {
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(Widgets(kAlphaToBeta137), EV("1.37", "1.37", "1.36"),
                           "example.k8s.io", "widgets"));
  EXPECT_THAT(d.reason, HasSubstr("introduced by emulation 1.37"));
  EXPECT_THAT(d.reason, HasSubstr("rolling back to 1.36 is not safe"));
}

// kubernetes#128454 resource_encoding_config_test.go TestEmulatedStorageVersion
// (binary 1.32, NewEffectiveVersion("1.32"): min-compatibility 1.31).
TEST(EmulatedStorageVersionTest, PickCompatible) {
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(
          Widgets({{"v1beta1", "1.32", ""}, {"v1alpha1", "1.31", ""}}),
          EV("1.32", "1.32", "1.31"), "example.k8s.io", "widgets"));
  EXPECT_EQ(d.version, "v1alpha1");
}

TEST(EmulatedStorageVersionTest, AlphaHasBeenReplacedPickBinaryVersion) {
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(
          Widgets({{"v1beta1", "1.32", ""},
                   {"v1alpha1", "1.31", "rbac.authorization.k8s.io/v1"}}),
          EV("1.32", "1.32", "1.31"), "example.k8s.io", "widgets"));
  EXPECT_EQ(d.version, "v1beta1");
  EXPECT_TRUE(d.fallback);
}

// ---------------------------------------------------------------------------
// Real 1.36 data: /work/shared/catalog-data/storage_versions.json
// notableChanges computed by the 1.36 rule (min-compatibility =
// emulation - 1).

struct RealCase {
  const char* group;
  const char* resource;
  const char* kind;
  std::vector<ResSpec> versions;
  const char* emulation;
  const char* min_compatibility;
  const char* expected;
};

class Real136StorageVersionTest : public ::testing::TestWithParam<RealCase> {};

TEST_P(Real136StorageVersionTest, MatchesCatalogData) {
  const RealCase& c = GetParam();
  Catalog catalog;
  for (const ResSpec& v : c.versions) {
    catalog.apis.push_back(
        GV(c.group, v.version, {R(c.resource, c.kind, v.introduced)}));
  }
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(catalog,
                           EV("1.36", c.emulation, c.min_compatibility),
                           c.group, c.resource));
  EXPECT_EQ(d.version, c.expected) << d.reason;
}

const std::vector<ResSpec> kIPAddresses = {{"v1", "1.33", ""},
                                           {"v1beta1", "1.31", ""}};
const std::vector<ResSpec> kDeviceClasses = {
    {"v1", "1.34", ""}, {"v1beta2", "1.33", ""}, {"v1beta1", "1.32", ""}};
const std::vector<ResSpec> kVolumeAttributesClasses = {
    {"v1", "1.34", ""}, {"v1beta1", "1.31", ""}, {"v1alpha1", "1.29", ""}};

INSTANTIATE_TEST_SUITE_P(
    CatalogData, Real136StorageVersionTest,
    ::testing::Values(
        RealCase{"networking.k8s.io", "ipaddresses", "IPAddress", kIPAddresses,
                 "1.33", "1.32", "v1beta1"},
        RealCase{"networking.k8s.io", "ipaddresses", "IPAddress", kIPAddresses,
                 "1.34", "1.33", "v1"},
        RealCase{"networking.k8s.io", "servicecidrs", "ServiceCIDR",
                 kIPAddresses, "1.36", "1.35", "v1"},
        RealCase{"resource.k8s.io", "deviceclasses", "DeviceClass",
                 kDeviceClasses, "1.33", "1.32", "v1beta1"},
        RealCase{"resource.k8s.io", "deviceclasses", "DeviceClass",
                 kDeviceClasses, "1.34", "1.33", "v1beta2"},
        RealCase{"resource.k8s.io", "resourceclaims", "ResourceClaim",
                 kDeviceClasses, "1.35", "1.34", "v1"},
        RealCase{"storage.k8s.io", "volumeattributesclasses",
                 "VolumeAttributesClass", kVolumeAttributesClasses, "1.34",
                 "1.33", "v1beta1"},
        RealCase{"storage.k8s.io", "volumeattributesclasses",
                 "VolumeAttributesClass", kVolumeAttributesClasses, "1.35",
                 "1.34", "v1"}));

// ---------------------------------------------------------------------------
// apiserver pkg/server/storage/storage_factory_test.go
// TestStorageFactoryCompatibilityVersion, transcribed: its scheme (kinds,
// versions in priority order, introduced versions; the removed versions play
// no part in the selection) and its cases. Each case runs
// NewEffectiveVersionFromString(v, "", ""): emulation v, min-compatibility
// v - 1. At v0.36.0 the test has the first 15 cases (one pass, the 1.35-1.36
// rule); v0.37.0-beta.0 (commit 41600f5ed, "skip alpha versions when
// auto-calculating storage version") keeps them and adds the last 7. The
// Kubernetes test runs the code of its tag whatever the version string, so
// compatd answers each case with a binary of that tag's line (1.36 or 1.37)
// and the case's emulation and min-compatibility versions.

struct KindSpec {
  const char* group;
  const char* resource;
  const char* kind;
  std::vector<ResSpec> versions;  // registration (priority) order
};

// registerFakeLifecycle's calls, in the order the test makes them.
Catalog StorageFactoryScheme() {
  const std::vector<KindSpec> kinds = {
      {"flowcontrol.apiserver.k8s.io",
       "flowschemas",
       "FlowSchema",
       {{"v1", "1.29", ""},
        {"v1beta3", "1.26", ""},
        {"v1beta2", "1.23", ""},
        {"v1beta1", "1.20", ""}}},
      {"batch",
       "cronjobs",
       "CronJob",
       {{"v1", "1.21", ""}, {"v1beta1", "1.8", ""}}},
      {"admissionregistration.k8s.io",
       "validatingadmissionpolicies",
       "ValidatingAdmisisonPolicy",
       {{"v1", "1.30", ""}, {"v1beta1", "1.28", ""}}},
      {"", "pods", "Pod", {{"v1", "1.31", ""}}},
      {"coordination.k8s.io",
       "leasecandidates",
       "LeaseCandidate",
       {{"v1beta1", "1.33", ""}, {"v1alpha2", "1.31", ""}}},
      {"resource.k8s.io",
       "devicetaintrules",
       "DeviceTaintRule",
       {{"v1alpha3", "1.31", ""}}},
      {"certificates.k8s.io",
       "podcertificaterequests",
       "PodCertificateRequest",
       {{"v1beta1", "1.33", ""}}},
      {"storagemigration.k8s.io",
       "storageversionmigrations",
       "StorageVersionMigration",
       {{"v1beta1", "1.30", ""}}},
      {"scheduling.k8s.io",
       "workloads",
       "Workload",
       {{"v1alpha1", "1.33", ""}}},
  };
  Catalog c;
  for (const KindSpec& k : kinds) {
    for (const ResSpec& v : k.versions) {
      c.apis.push_back(
          GV(k.group, v.version, {R(k.resource, k.kind, v.introduced)}));
    }
  }
  return c;
}

struct StorageFactoryCase {
  const char* effective_version;  // emulation; min-compatibility is one less
  const char* group;
  const char* resource;
  const char* expected_version;
  // Which line's code returns the fallback (binaryVersionOfResource, the
  // group's preferred version) rather than a version found by its passes: not
  // observable in the Kubernetes test, read from emulatedStorageVersion.
  bool fallback_136 = false;
  bool fallback_137 = false;
};

// The cases of v0.36.0 (also in v0.37.0-beta.0, same expectations).
const std::vector<StorageFactoryCase> kStorageFactoryCases136 = {
    {"1.14", "batch", "cronjobs", "v1beta1"},
    {"1.20", "batch", "cronjobs", "v1beta1"},
    {"1.28", "batch", "cronjobs", "v1"},
    // v1 introduced at 1.31, after min-compatibility 1.30: 1.36 falls back
    // to the group's v1, 1.37's second pass finds v1.
    {"1.31", "", "pods", "v1", true, false},
    // "1.1.0 has no flowcontrol ... use the latest version".
    {"1.1", "flowcontrol.apiserver.k8s.io", "flowschemas", "v1", true, true},
    {"1.21", "flowcontrol.apiserver.k8s.io", "flowschemas", "v1beta1"},
    {"1.23", "flowcontrol.apiserver.k8s.io", "flowschemas", "v1beta1"},
    {"1.24", "flowcontrol.apiserver.k8s.io", "flowschemas", "v1beta2"},
    {"1.26", "flowcontrol.apiserver.k8s.io", "flowschemas", "v1beta2"},
    {"1.27", "flowcontrol.apiserver.k8s.io", "flowschemas", "v1beta3"},
    {"1.29", "flowcontrol.apiserver.k8s.io", "flowschemas", "v1beta3"},
    {"1.30", "flowcontrol.apiserver.k8s.io", "flowschemas", "v1"},
    {"1.30", "admissionregistration.k8s.io", "validatingadmissionpolicies",
     "v1beta1"},
    {"1.31", "admissionregistration.k8s.io", "validatingadmissionpolicies",
     "v1"},
    {"1.29", "admissionregistration.k8s.io", "validatingadmissionpolicies",
     "v1beta1"},
};

// The cases commit 41600f5ed added (v0.37.0-beta.0).
const std::vector<StorageFactoryCase> kStorageFactoryCasesAdded137 = {
    // "alpha->beta: beta introduced this release, should use beta
    // immediately".
    {"1.33", "coordination.k8s.io", "leasecandidates", "v1beta1"},
    // "beta not yet introduced at this emulation version, should use alpha".
    {"1.32", "coordination.k8s.io", "leasecandidates", "v1alpha2"},
    {"1.34", "coordination.k8s.io", "leasecandidates", "v1beta1"},
    // "alpha-only: should use the alpha version".
    {"1.33", "resource.k8s.io", "devicetaintrules", "v1alpha3"},
    // "new beta with no alpha predecessor: should use beta immediately".
    {"1.33", "certificates.k8s.io", "podcertificaterequests", "v1beta1"},
    {"1.33", "storagemigration.k8s.io", "storageversionmigrations", "v1beta1"},
    // "alpha-only, newly introduced at emulation version: should use alpha".
    {"1.33", "scheduling.k8s.io", "workloads", "v1alpha1"},
};

void ExpectStorageFactoryCase(absl::string_view binary,
                              const StorageFactoryCase& c) {
  const Version emulation = V(c.effective_version);
  const EffectiveVersions versions{V(binary), emulation,
                                   emulation.SubtractMinor(1)};
  const Catalog catalog = StorageFactoryScheme();
  SCOPED_TRACE(absl::StrCat("binary ", binary, ", ", c.group, "/", c.resource,
                            " at ", c.effective_version));
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(catalog, versions, c.group, c.resource));
  EXPECT_EQ(d.version, c.expected_version) << d.reason;
  EXPECT_EQ(d.fallback, binary == "1.36" ? c.fallback_136 : c.fallback_137)
      << d.reason;
}

TEST(StorageFactoryCompatibilityVersionTest, V0_36_0CasesOnA136Binary) {
  for (const StorageFactoryCase& c : kStorageFactoryCases136) {
    ExpectStorageFactoryCase("1.36", c);
  }
}

TEST(StorageFactoryCompatibilityVersionTest, V0_37_0Beta0CasesOnA137Binary) {
  for (const StorageFactoryCase& c : kStorageFactoryCases136) {
    ExpectStorageFactoryCase("1.37", c);
  }
  for (const StorageFactoryCase& c : kStorageFactoryCasesAdded137) {
    ExpectStorageFactoryCase("1.37", c);
  }
}

// ---------------------------------------------------------------------------
// Overrides, decodable versions, kind, errors.

TEST(StorageOverrideTest, OverrideWinsInEveryReleaseLine) {
  Catalog c = Widgets({{"v1", "1.20", ""}, {"v1beta1", "1.19", ""}});
  c.storage_overrides.push_back(
      StorageOverride{"example.k8s.io", "widgets", "v1beta1", 0});
  for (const char* binary : {"1.30", "1.33", "1.36", "1.37"}) {
    ASSERT_OK_AND_ASSIGN(StorageVersionDecision d,
                         DecideStorageVersion(c, EV(binary, binary, binary),
                                              "example.k8s.io", "widgets"));
    EXPECT_EQ(d.version, "v1beta1") << binary;
    EXPECT_TRUE(d.overridden);
    EXPECT_FALSE(d.fallback);
    EXPECT_THAT(d.reason, HasSubstr("storage override"));
  }
}

TEST(StorageOverrideTest, OverrideForAnotherResourceDoesNotApply) {
  Catalog c = Widgets({{"v1", "1.20", ""}});
  c.storage_overrides.push_back(
      StorageOverride{"example.k8s.io", "gadgets", "v1beta1", 0});
  ASSERT_OK_AND_ASSIGN(StorageVersionDecision d,
                       DecideStorageVersion(c, EV("1.36", "1.36", "1.35"),
                                            "example.k8s.io", "widgets"));
  EXPECT_EQ(d.version, "v1");
  EXPECT_FALSE(d.overridden);
}

TEST(StorageVersionDecisionTest, DecodableVersionsAreTheResourcesVersions) {
  Catalog c = Widgets(
      {{"v2", "1.30", ""}, {"v1", "1.20", ""}, {"v1beta1", "1.19", ""}});
  c.apis.push_back(GV("example.k8s.io", "v1alpha1", {R("gadgets", "Gadget")}));
  ASSERT_OK_AND_ASSIGN(StorageVersionDecision d,
                       DecideStorageVersion(c, EV("1.36", "1.36", "1.35"),
                                            "example.k8s.io", "widgets"));
  EXPECT_THAT(d.decodable_versions, ElementsAre("v2", "v1", "v1beta1"));
  EXPECT_EQ(d.group, "example.k8s.io");
  EXPECT_EQ(d.resource, "widgets");
}

TEST(StorageVersionDecisionTest, KindComesFromTheChosenVersion) {
  Catalog c;
  c.apis.push_back(GV("g.io", "v2", {R("things", "ThingV2", "1.36")}));
  c.apis.push_back(GV("g.io", "v1", {R("things", "Thing", "1.20")}));
  ASSERT_OK_AND_ASSIGN(
      StorageVersionDecision d,
      DecideStorageVersion(c, EV("1.36", "1.36", "1.35"), "g.io", "things"));
  EXPECT_EQ(d.version, "v1");
  EXPECT_EQ(d.kind, "Thing");
}

TEST(StorageVersionErrorTest, UnknownGroupIsNotFoundWithCoreHint) {
  Catalog c = Widgets({{"v1", "", ""}});
  c.apis.push_back(GV("", "v1", {R("pods", "Pod")}));
  EXPECT_THAT(
      DecideStorageVersion(c, EV("1.36", "1.36", "1.35"), "core", "pods"),
      StatusIs(
          absl::StatusCode::kNotFound,
          AllOf(HasSubstr("API group \"core\""), HasSubstr("resource \"pods\""),
                HasSubstr("the core group is \"\", not \"core\""))));
}

TEST(StorageVersionErrorTest, UnknownResourceIsNotFound) {
  Catalog c = Widgets({{"v1", "", ""}});
  EXPECT_THAT(
      DecideStorageVersion(c, EV("1.36", "1.36", "1.35"), "example.k8s.io",
                           "Widget"),
      StatusIs(absl::StatusCode::kNotFound,
               AllOf(HasSubstr("resource \"Widget\" is not in API "
                               "group \"example.k8s.io\""),
                     HasSubstr("lowercase plurals"), HasSubstr("widgets"))));
}

TEST(StorageVersionErrorTest, ResourceOfAnotherGroupIsNotFound) {
  Catalog c = Widgets({{"v1", "", ""}});
  c.apis.push_back(GV("", "v1", {R("pods", "Pod")}));
  EXPECT_THAT(
      DecideStorageVersion(c, EV("1.36", "1.36", "1.35"), "", "widgets"),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("(the core group)")));
}

TEST(StorageVersionErrorTest, NonPersistedResourceHasNoStorageVersion) {
  Catalog c;
  APIResource review = R("tokenreviews", "TokenReview", "1.6");
  review.persisted = false;
  c.apis.push_back(GV("authentication.k8s.io", "v1", {review}));
  EXPECT_THAT(DecideStorageVersion(c, EV("1.36", "1.36", "1.35"),
                                   "authentication.k8s.io", "tokenreviews"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("tokenreviews.authentication.k8s.io (kind "
                                 "TokenReview) is not persisted")));
}

}  // namespace
}  // namespace compatd::engine
