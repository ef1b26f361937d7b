// Every embedded release-line catalog (catalog/kubernetes-1.31.yaml ...
// kubernetes-1.37.yaml): each loads, and holds facts read from Kubernetes'
// sources at that line's tag (the file and tag are named at each expectation;
// 1.37's are pre-release commits, catalog/README.md "1.37").

#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/api_availability.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/query.h"
#include "engine/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::catalog {
namespace {

using engine::PreRelease;
using engine::Version;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const engine::Catalog& Line(absl::string_view line) {
  // Parsed once per line for the whole binary.
  static auto* const cache = new std::vector<
      std::pair<std::string, std::unique_ptr<engine::Catalog>>>();
  for (const auto& [name, catalog] : *cache) {
    if (name == line) return *catalog;
  }
  const EmbeddedCatalog* embedded = FindEmbeddedCatalog(line);
  std::unique_ptr<engine::Catalog> catalog;
  if (embedded == nullptr) {
    ADD_FAILURE() << "no embedded catalog of line " << line;
    catalog = std::make_unique<engine::Catalog>();
  } else {
    absl::StatusOr<std::unique_ptr<engine::Catalog>> parsed =
        ParseCatalog(embedded->bytes, embedded->name);
    if (!parsed.ok()) {
      ADD_FAILURE() << parsed.status();
      catalog = std::make_unique<engine::Catalog>();
    } else {
      catalog = *std::move(parsed);
    }
  }
  cache->emplace_back(std::string(line), std::move(catalog));
  return *cache->back().second;
}

const std::vector<std::string> kLines = {"1.31", "1.32", "1.33", "1.34",
                                         "1.35", "1.36", "1.37"};

TEST(EmbeddedLinesTest, OneCatalogPerLineOldestFirstWith136TheDefault) {
  std::vector<std::string> names;
  for (const EmbeddedCatalog& catalog : EmbeddedCatalogs()) {
    names.emplace_back(catalog.name);
    EXPECT_FALSE(catalog.bytes.empty()) << catalog.name;
  }
  EXPECT_THAT(
      names, ElementsAre("embedded:kubernetes-1.31", "embedded:kubernetes-1.32",
                         "embedded:kubernetes-1.33", "embedded:kubernetes-1.34",
                         "embedded:kubernetes-1.35", "embedded:kubernetes-1.36",
                         "embedded:kubernetes-1.37"));
  ASSERT_NE(FindEmbeddedCatalog("1.36"), nullptr);
  EXPECT_EQ(FindEmbeddedCatalog("1.36")->bytes, EmbeddedCatalogYaml());
  EXPECT_EQ(EmbeddedCatalogSource(), "embedded:kubernetes-1.36");
  EXPECT_EQ(FindEmbeddedCatalog("1.30"), nullptr);
  EXPECT_EQ(FindEmbeddedCatalog("1.38"), nullptr);
}

TEST(EmbeddedLinesTest, EachLineLoadsAndNamesItsPatch) {
  const std::vector<std::pair<std::string, std::string>> patches = {
      {"1.31", "1.31.8"}, {"1.32", "1.32.5"}, {"1.33", "1.33.3"},
      {"1.34", "1.34.7"}, {"1.35", "1.35.4"}, {"1.36", "1.36"},
      {"1.37", "1.37"}};
  for (const auto& [line, patch] : patches) {
    const engine::Catalog& catalog = Line(line);
    EXPECT_EQ(catalog.binary_version, *Version::Parse(patch)) << line;
    EXPECT_EQ(catalog.source, absl::StrCat("embedded:kubernetes-", line));
    EXPECT_FALSE(catalog.apis.empty()) << line;
    EXPECT_FALSE(catalog.api_history.empty()) << line;
    EXPECT_EQ(catalog.exactness, line == "1.37"
                                     ? engine::Exactness::kProvisional
                                     : engine::Exactness::kExact)
        << line;
  }
  EXPECT_THAT(Line("1.37").exactness_reason,
              ::testing::AllOf(::testing::HasSubstr("pre-release sources"),
                               ::testing::HasSubstr("draft to 2026-08-13")));
}

// How many gates each binary registers: every key of the feature maps of
// kube's pkg/features and the staging feature files at the line's tag
// (the release-lines data: 165, 177, 189, 206, 216; 1.36: 240). 1.37: 248 in
// kube_features.go at ae5d4d35 and the staging feature files of 2026-07-21..24,
// plus the 3 gates the 1.37 release-notes draft adds later and
// DRADerivedAttributes, which Kubernetes' generated feature list at 2a5a1c06
// (after ae5d4d35) has.
TEST(EmbeddedLinesTest, GateCountsPerLine) {
  const std::vector<std::pair<std::string, size_t>> counts = {
      {"1.31", 165}, {"1.32", 177}, {"1.33", 189}, {"1.34", 206},
      {"1.35", 216}, {"1.36", 240}, {"1.37", 252}};
  for (const auto& [line, count] : counts) {
    EXPECT_EQ(Line(line).features.size(), count) << line;
  }
}

// kube_features.go: `CPUCFSQuotaPeriod featuregate.Feature =
// "CustomCPUCFSQuotaPeriod"`, `RuntimeClassInImageCriAPI featuregate.Feature =
// "RuntimeClassInImageCriApi"` in every line: --feature-gates takes the
// strings.
TEST(EmbeddedLinesTest, GatesAreNamedByTheirFeatureGatesString) {
  for (const std::string& line : kLines) {
    const engine::Catalog& catalog = Line(line);
    EXPECT_NE(catalog.FindFeature("CustomCPUCFSQuotaPeriod"), nullptr) << line;
    EXPECT_NE(catalog.FindFeature("RuntimeClassInImageCriApi"), nullptr)
        << line;
    EXPECT_EQ(catalog.FindFeature("CPUCFSQuotaPeriod"), nullptr) << line;
    EXPECT_EQ(catalog.FindFeature("RuntimeClassInImageCriAPI"), nullptr)
        << line;
  }
}

absl::StatusOr<engine::FeatureDecision> Decide(const engine::Catalog& catalog,
                                               absl::string_view name) {
  absl::StatusOr<engine::EffectiveVersions> versions =
      engine::ResolveEffectiveVersions(catalog, engine::VersionQuery{});
  if (!versions.ok()) return versions.status();
  return engine::DecideFeature(catalog, *versions, engine::VersionQuery{},
                               name);
}

// k8s.io/kubernetes v1.32.5 pkg/features/versioned_kube_features.go:
// WindowsHostNetwork {1.26, Default: true, Alpha}; v1.33.3
// kube_features.go: {1.26, false, Alpha}, {1.33, false, Deprecated}.
TEST(EmbeddedLinesTest, WindowsHostNetworkAsEachBinaryHasIt) {
  const engine::Feature* on132 = Line("1.32").FindFeature("WindowsHostNetwork");
  ASSERT_NE(on132, nullptr);
  ASSERT_EQ(on132->specs.size(), 1u);
  EXPECT_EQ(on132->specs[0].version, Version::MajorMinor(1, 26));
  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision at132,
                       Decide(Line("1.32"), "WindowsHostNetwork"));
  EXPECT_EQ(at132.stage, PreRelease::kAlpha) << at132.Reason();
  EXPECT_TRUE(at132.enabled) << at132.Reason();

  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision at133,
                       Decide(Line("1.33"), "WindowsHostNetwork"));
  EXPECT_EQ(at133.stage, PreRelease::kDeprecated) << at133.Reason();
  EXPECT_FALSE(at133.enabled) << at133.Reason();
  EXPECT_EQ(Line("1.33").FindFeature("WindowsHostNetwork")->specs.size(), 2u);
}

// AppArmor: `AppArmor: {Default: true, PreRelease: featuregate.GA,
// LockToDefault: true}, // remove in 1.33` (v1.31.8); versioned in v1.32.5;
// gone from v1.33.3's kube_features.go.
TEST(EmbeddedLinesTest, AppArmorUntil132) {
  for (absl::string_view line : {"1.31", "1.32"}) {
    ASSERT_OK_AND_ASSIGN(engine::FeatureDecision decision,
                         Decide(Line(line), "AppArmor"));
    EXPECT_EQ(decision.stage, PreRelease::kGA) << line;
    EXPECT_TRUE(decision.enabled) << line;
    EXPECT_TRUE(decision.locked_to_default) << line;
  }
  for (absl::string_view line : {"1.33", "1.34", "1.35", "1.36"}) {
    EXPECT_EQ(Line(line).FindFeature("AppArmor"), nullptr) << line;
  }
}

// 1.31's feature maps are all map[Feature]FeatureSpec: component-base
// v0.31.8 featureGate.Add gives each spec version 0.0 "so that it can be
// enabled/disabled regardless of emulation version".
TEST(EmbeddedLinesTest, Line131HasOneUnversionedSpecPerGate) {
  for (const engine::Feature& feature : Line("1.31").features) {
    ASSERT_EQ(feature.specs.size(), 1u) << feature.name;
    EXPECT_EQ(feature.specs[0].version, Version::MajorMinor(0, 0))
        << feature.name;
  }
  // `PodHostIPs: {Default: true, PreRelease: featuregate.GA, LockToDefault:
  // true}, // remove in 1.32` (v1.31.8).
  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision decision,
                       Decide(Line("1.31"), "PodHostIPs"));
  EXPECT_EQ(decision.stage, PreRelease::kGA) << decision.Reason();
  EXPECT_TRUE(decision.enabled);
  EXPECT_TRUE(decision.locked_to_default);
  EXPECT_EQ(Line("1.32").FindFeature("PodHostIPs"), nullptr);
}

const engine::APIResource* FindResource(const engine::Catalog& catalog,
                                        absl::string_view group,
                                        absl::string_view version,
                                        absl::string_view resource) {
  for (const engine::APIGroupVersion& gv : catalog.apis) {
    if (gv.group != group || gv.version != version) continue;
    for (const engine::APIResource& r : gv.resources) {
      if (r.resource == resource) return &r;
    }
  }
  return nullptr;
}

// kubernetes/api core/v1 lifecycle.go (hand-written APILifecycle* methods):
// ComponentStatus deprecated 1.19 at every tag; Endpoints deprecated 1.33,
// replaced by discovery.k8s.io/v1 EndpointSlice, from v0.33.0.
TEST(EmbeddedLinesTest, HandWrittenCoreLifecycles) {
  for (const std::string& line : kLines) {
    const engine::APIResource* componentstatuses =
        FindResource(Line(line), "", "v1", "componentstatuses");
    ASSERT_NE(componentstatuses, nullptr) << line;
    EXPECT_EQ(componentstatuses->deprecated, Version::MajorMinor(1, 19))
        << line;
    const engine::APIResource* endpoints =
        FindResource(Line(line), "", "v1", "endpoints");
    ASSERT_NE(endpoints, nullptr) << line;
    if (line == "1.31" || line == "1.32") {
      EXPECT_FALSE(endpoints->deprecated.has_value()) << line;
      EXPECT_EQ(endpoints->replacement, "") << line;
    } else {
      EXPECT_EQ(endpoints->deprecated, Version::MajorMinor(1, 33)) << line;
      EXPECT_EQ(endpoints->replacement, "discovery.k8s.io/v1") << line;
      EXPECT_EQ(endpoints->replacement_kind, "EndpointSlice") << line;
    }
  }
}

using Override = std::tuple<std::string, std::string, std::string>;

std::set<Override> OverridesOf(const engine::Catalog& catalog) {
  std::set<Override> out;
  for (const engine::StorageOverride& o : catalog.storage_overrides) {
    out.emplace(o.group, o.resource, o.version);
  }
  return out;
}

// pkg/kubeapiserver/default_storage_factory_builder.go
// NewStorageFactoryConfig at each line. Its storagemigrations entry names no
// resource (the resource is storageversionmigrations) and matches nothing,
// so it is not in any catalog.
TEST(EmbeddedLinesTest, StorageOverridesPerLine) {
  const std::string coordination = "coordination.k8s.io";
  const std::string networking = "networking.k8s.io";
  const std::string certificates = "certificates.k8s.io";
  const std::string storage = "storage.k8s.io";
  const std::string admission = "admissionregistration.k8s.io";
  const std::string resource = "resource.k8s.io";
  EXPECT_EQ(
      OverridesOf(Line("1.31")),
      (std::set<Override>{{coordination, "leasecandidates", "v1alpha1"},
                          {networking, "ipaddresses", "v1beta1"},
                          {networking, "servicecidrs", "v1beta1"},
                          {certificates, "clustertrustbundles", "v1alpha1"},
                          {storage, "volumeattributesclasses", "v1beta1"}}));
  EXPECT_EQ(OverridesOf(Line("1.32")),
            (std::set<Override>{
                {coordination, "leasecandidates", "v1alpha2"},
                {networking, "ipaddresses", "v1beta1"},
                {networking, "servicecidrs", "v1beta1"},
                {admission, "mutatingadmissionpolicies", "v1alpha1"},
                {admission, "mutatingadmissionpolicybindings", "v1alpha1"},
                {certificates, "clustertrustbundles", "v1alpha1"},
                {storage, "volumeattributesclasses", "v1beta1"}}));
  EXPECT_EQ(OverridesOf(Line("1.33")),
            (std::set<Override>{
                {coordination, "leasecandidates", "v1beta1"},
                {networking, "ipaddresses", "v1beta1"},
                {networking, "servicecidrs", "v1beta1"},
                {admission, "mutatingadmissionpolicies", "v1alpha1"},
                {admission, "mutatingadmissionpolicybindings", "v1alpha1"},
                {certificates, "clustertrustbundles", "v1beta1"},
                {storage, "volumeattributesclasses", "v1beta1"},
                {resource, "devicetaintrules", "v1alpha3"}}));
  EXPECT_EQ(OverridesOf(Line("1.34")),
            (std::set<Override>{
                {coordination, "leasecandidates", "v1beta1"},
                {admission, "mutatingadmissionpolicies", "v1alpha1"},
                {admission, "mutatingadmissionpolicybindings", "v1alpha1"},
                {certificates, "clustertrustbundles", "v1beta1"},
                {certificates, "podcertificaterequests", "v1alpha1"},
                {storage, "volumeattributesclasses", "v1beta1"},
                {resource, "devicetaintrules", "v1alpha3"}}));
  EXPECT_EQ(OverridesOf(Line("1.35")),
            (std::set<Override>{
                {coordination, "leasecandidates", "v1beta1"},
                {admission, "mutatingadmissionpolicies", "v1beta1"},
                {admission, "mutatingadmissionpolicybindings", "v1beta1"},
                {certificates, "clustertrustbundles", "v1beta1"},
                {certificates, "podcertificaterequests", "v1beta1"},
                {storage, "volumeattributesclasses", "v1beta1"},
                {resource, "devicetaintrules", "v1alpha3"},
                {"scheduling.k8s.io", "workloads", "v1alpha1"}}));
}

bool EnabledByDefault(const engine::APIGroupVersion& gv) {
  if (gv.enabled_by_default.has_value()) return *gv.enabled_by_default;
  return gv.version.find("alpha") == std::string::npos &&
         gv.version.find("beta") == std::string::npos;
}

// pkg/controlplane/instance.go: stableAPIGroupVersionsEnabledByDefault has
// 19 group-versions in 1.31-1.33 and 20 (resource.k8s.io/v1 added) in 1.34
// and 1.35; in 1.31 legacyBetaEnabledByDefaultResources also turns on
// flowcontrol v1beta3 (both of its resources).
TEST(EmbeddedLinesTest, DefaultEnabledGroupVersions) {
  const std::vector<std::pair<std::string, size_t>> enabled = {
      {"1.31", 20}, {"1.32", 19}, {"1.33", 19}, {"1.34", 20}, {"1.35", 20}};
  for (const auto& [line, count] : enabled) {
    size_t on = 0;
    for (const engine::APIGroupVersion& gv : Line(line).apis) {
      on += EnabledByDefault(gv) ? 1 : 0;
    }
    EXPECT_EQ(on, count) << line;
  }
  auto find = [](const engine::Catalog& catalog, absl::string_view group,
                 absl::string_view version) -> const engine::APIGroupVersion* {
    for (const engine::APIGroupVersion& gv : catalog.apis) {
      if (gv.group == group && gv.version == version) return &gv;
    }
    return nullptr;
  };
  const engine::APIGroupVersion* v1beta3 =
      find(Line("1.31"), "flowcontrol.apiserver.k8s.io", "v1beta3");
  ASSERT_NE(v1beta3, nullptr);
  EXPECT_EQ(v1beta3->enabled_by_default, true);
  v1beta3 = find(Line("1.32"), "flowcontrol.apiserver.k8s.io", "v1beta3");
  ASSERT_NE(v1beta3, nullptr);
  EXPECT_FALSE(EnabledByDefault(*v1beta3));
  // resource.k8s.io/v1 is GA from 1.34 (instance.go's stable list).
  EXPECT_EQ(find(Line("1.33"), "resource.k8s.io", "v1"), nullptr);
  ASSERT_NE(find(Line("1.34"), "resource.k8s.io", "v1"), nullptr);
  EXPECT_TRUE(EnabledByDefault(*find(Line("1.34"), "resource.k8s.io", "v1")));
}

// pkg/apis/flowcontrol/install/install.go SetVersionPriority(v1, v1beta3,
// v1beta2, v1beta1) in 1.31: the catalog lists a group's versions in that
// order.
TEST(EmbeddedLinesTest, VersionPriorityOrder) {
  std::vector<std::string> versions;
  for (const engine::APIGroupVersion& gv : Line("1.31").apis) {
    if (gv.group == "flowcontrol.apiserver.k8s.io") {
      versions.push_back(gv.version);
    }
  }
  EXPECT_THAT(versions, ElementsAre("v1", "v1beta3", "v1beta2", "v1beta1"));
}

// kubernetes CHANGELOG-1.31.md: DisableNodeKubeProxyVersion reverted to
// default-off in v1.31.1 (#126721), OrderedNamespaceDeletion added in
// v1.31.7 (#130509); CHANGELOG-1.34.md v1.34.2: SchedulerAsyncAPICalls
// disabled (#134401), StatefulSetSemanticRevisionComparison added (#135087).
// Every gate change a patch release made (catalog/data/patch_changes.json,
// from catalog/generate_patch_changes.py), with the CHANGELOG entry that names
// it: CHANGELOG-1.31.md v1.31.1 (#126721) and v1.31.7 (#130509);
// CHANGELOG-1.32.md v1.32.2 (#130015) and v1.32.3 (#130508); CHANGELOG-1.34.md
// v1.34.2 (#134401, #135087); CHANGELOG-1.35.md v1.35.1 (#135904) and v1.35.4
// (#137926). Entries of one line are listed by gate, then since.
TEST(EmbeddedLinesTest, PatchChanges) {
  struct Expected {
    std::string line;
    std::string feature;
    std::string since;
    std::string before;
    bool registered_before;
  };
  const std::vector<Expected> expected = {
      {"1.31", "DisableNodeKubeProxyVersion", "1.31.1", "Beta, default true",
       true},
      {"1.31", "OrderedNamespaceDeletion", "1.31.7", "not registered", false},
      {"1.32", "OrderedNamespaceDeletion", "1.32.3", "not registered", false},
      {"1.32", "ServiceAccountNodeAudienceRestriction", "1.32.2",
       "Beta, default true", true},
      {"1.34", "SchedulerAsyncAPICalls", "1.34.2", "Beta, default true", true},
      {"1.34", "StatefulSetSemanticRevisionComparison", "1.34.2",
       "not registered", false},
      {"1.35", "MaxUnavailableStatefulSet", "1.35.4", "Beta, default true",
       true},
      {"1.35", "SchedulerAsyncAPICalls", "1.35.1", "Beta, default true", true},
  };
  for (absl::string_view line : kLines) {
    std::vector<std::tuple<std::string, std::string, std::string, bool>> want;
    for (const Expected& e : expected) {
      if (e.line == line) {
        want.emplace_back(e.feature, e.since, e.before, e.registered_before);
      }
    }
    std::vector<std::tuple<std::string, std::string, std::string, bool>> got;
    for (const engine::PatchChange& change : Line(line).patch_changes) {
      got.emplace_back(change.feature, change.since.ToString(), change.before,
                       change.registered_before);
      // Every entry that was registered before carries the earlier specs.
      EXPECT_EQ(change.before_index >= 0, change.registered_before)
          << line << " " << change.feature;
    }
    EXPECT_EQ(got, want) << line;
  }
  // How far each line's patches were read (staging tags v0.N.0 to the
  // newest, kube pkg/features readings, the CHANGELOG); 1.36's catalog names
  // no patch, so it vouches for none.
  const std::vector<std::pair<std::string, std::string>> known = {
      {"1.31", "1.31.14"}, {"1.32", "1.32.13"}, {"1.33", "1.33.13"},
      {"1.34", "1.34.9"},  {"1.35", "1.35.7"},
  };
  for (const auto& [line, through] : known) {
    ASSERT_TRUE(Line(line).patches_known_through.has_value()) << line;
    EXPECT_EQ(Line(line).patches_known_through->ToString(), through) << line;
  }
  EXPECT_FALSE(Line("1.36").patches_known_through.has_value());
  // What the catalog itself holds is the pinned patch's: SchedulerAsyncAPICalls
  // is default off in 1.34.7.
  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision decision,
                       Decide(Line("1.34"), "SchedulerAsyncAPICalls"));
  EXPECT_FALSE(decision.enabled) << decision.Reason();
}

}  // namespace
}  // namespace compatd::catalog

namespace compatd::catalog {
namespace {

// --runtime-config=G/V names a version of kube-apiserver's scheme, served or
// not. kubernetes/apiserver v0.36.3
// pkg/server/resourceconfig/helpers.go:150-158
// (applyVersionAndResourcePreferences) skips a group the scheme does not
// register and refuses an unregistered version of a registered one ("group
// version %s that has not been registered"); pkg/server/options/
// api_enablement.go:82-90 (Validate) asks only that the group be registered.
// The scheme registers what pkg/apis/<group>/install/install.go adds:
// apps/install/install.go:37-41 adds v1beta1, v1beta2 and v1 (Kubernetes
// 1.36.3, the fork copy in openshift/microshift ab25d11482f8; runtime.Scheme
// IsVersionRegistered, staging apimachinery pkg/runtime/scheme.go:717), while
// pkg/registry/apps/rest serves only v1. So apps/v1beta1=true starts and
// serves nothing of apps/v1beta1; apps/v1beta9=true does not start. 1.37's
// apps install.go is 1.36.3's (catalog/README.md, "1.37").
TEST(EmbeddedLinesTest, RuntimeConfigOfARegisteredButUnservedVersion) {
  for (const char* line : {"1.36", "1.37"}) {
    engine::VersionQuery query;
    query.runtime_config = "apps/v1beta1=true";
    ASSERT_OK_AND_ASSIGN(engine::EffectiveVersions versions,
                         engine::ResolveEffectiveVersions(Line(line), query));
    ASSERT_OK_AND_ASSIGN(std::vector<engine::ServedGroupVersion> served,
                         engine::ListServedAPIs(Line(line), versions, query));
    bool apps_v1 = false;
    for (const engine::ServedGroupVersion& gv : served) {
      EXPECT_FALSE(gv.group == "apps" && gv.version == "v1beta1") << line;
      apps_v1 = apps_v1 || (gv.group == "apps" && gv.version == "v1");
    }
    EXPECT_TRUE(apps_v1) << line;

    query.runtime_config = "apps/v1beta9=true";
    EXPECT_THAT(engine::ListServedAPIs(Line(line), versions, query),
                compatd::testing::StatusIs(
                    absl::StatusCode::kInvalidArgument,
                    HasSubstr("group version apps/v1beta9 that has not been "
                              "registered")))
        << line;
  }
}

// The 25 gates a 1.36 binary registers and 1.37's do not: in kubernetes-1.36
// and absent from kubernetes/kubernetes pkg/features/kube_features.go at
// ae5d4d35 and from the staging feature files of 2026-07-21..24 (the
// release-lines note lists the same 25). A 1.37 binary started with one in
// --feature-gates exits; the catalog answers NOT_FOUND.
TEST(EmbeddedLinesTest, GatesRemovedIn137) {
  for (absl::string_view name : {"APIServerTracing",
                                 "AnonymousAuthConfigurableEndpoints",
                                 "AuthorizeWithSelectors",
                                 "BtreeWatchCache",
                                 "ConsistentListFromCache",
                                 "ResilientWatchCacheInitialization",
                                 "RetryGenerateName",
                                 "StreamingCollectionEncodingToJSON",
                                 "StreamingCollectionEncodingToProtobuf",
                                 "StructuredAuthenticationConfiguration",
                                 "AnyVolumeDataSource",
                                 "AuthorizeNodeWithSelectors",
                                 "GangScheduling",
                                 "WorkloadAwarePreemption",
                                 "JobBackoffLimitPerIndex",
                                 "JobPodReplacementPolicy",
                                 "JobSuccessPolicy",
                                 "LogarithmicScaleDown",
                                 "OrderedNamespaceDeletion",
                                 "PodLifecycleSleepAction",
                                 "PodLifecycleSleepActionAllowZero",
                                 "PreventStaticPodAPIReferences",
                                 "RelaxedDNSSearchValidation",
                                 "SchedulerQueueingHints",
                                 "SidecarContainers"}) {
    EXPECT_NE(Line("1.36").FindFeature(name), nullptr) << name;
    EXPECT_EQ(Line("1.37").FindFeature(name), nullptr) << name;
    EXPECT_EQ(Decide(Line("1.37"), name).status().code(),
              absl::StatusCode::kNotFound)
        << name;
  }
}

// kube_features.go at ae5d4d35: DRAFractionalCapacityRange
// {1.37, Default: false, Beta}, {1.37, Default: true, Beta,
// MinCompatibilityVersion: 1.37}: off at the default min-compatibility (1.36).
TEST(EmbeddedLinesTest, DRAFractionalCapacityRangeIn137) {
  const engine::Feature* gate =
      Line("1.37").FindFeature("DRAFractionalCapacityRange");
  ASSERT_NE(gate, nullptr);
  ASSERT_EQ(gate->specs.size(), 2u);
  EXPECT_EQ(gate->specs[0].version, Version::MajorMinor(1, 37));
  EXPECT_FALSE(gate->specs[0].default_enabled);
  EXPECT_EQ(gate->specs[0].pre_release, PreRelease::kBeta);
  EXPECT_EQ(gate->specs[1].version, Version::MajorMinor(1, 37));
  EXPECT_TRUE(gate->specs[1].default_enabled);
  EXPECT_EQ(gate->specs[1].pre_release, PreRelease::kBeta);
  EXPECT_EQ(gate->specs[1].min_compatibility_version,
            Version::MajorMinor(1, 37));
  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision decision,
                       Decide(Line("1.37"), "DRAFractionalCapacityRange"));
  EXPECT_EQ(decision.stage, PreRelease::kBeta) << decision.Reason();
  EXPECT_FALSE(decision.enabled) << decision.Reason();
  EXPECT_EQ(Line("1.36").FindFeature("DRAFractionalCapacityRange"), nullptr);
}

// kube_features.go at ae5d4d35: MaxUnavailableStatefulSet {1.37, true, Beta}
// (on again, #139466); the release-notes draft: PodLevelResourceManagers' 1.37
// Beta default flipped to off (#141209); SchedulerPreQueueingHints added,
// Alpha, off (#138916).
TEST(EmbeddedLinesTest, GateChangesOf137) {
  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision max_unavailable,
                       Decide(Line("1.37"), "MaxUnavailableStatefulSet"));
  EXPECT_TRUE(max_unavailable.enabled) << max_unavailable.Reason();
  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision managers,
                       Decide(Line("1.37"), "PodLevelResourceManagers"));
  EXPECT_EQ(managers.stage, PreRelease::kBeta) << managers.Reason();
  EXPECT_FALSE(managers.enabled) << managers.Reason();
  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision hints,
                       Decide(Line("1.37"), "SchedulerPreQueueingHints"));
  EXPECT_EQ(hints.stage, PreRelease::kAlpha) << hints.Reason();
  EXPECT_FALSE(hints.enabled) << hints.Reason();
  // versioned_feature_list.yaml at 2a5a1c06: KubeletInUserNamespace
  // {1.22, false, Alpha}, {1.37, true, Beta}.
  ASSERT_OK_AND_ASSIGN(engine::FeatureDecision userns,
                       Decide(Line("1.37"), "KubeletInUserNamespace"));
  EXPECT_EQ(userns.stage, PreRelease::kBeta) << userns.Reason();
  EXPECT_TRUE(userns.enabled) << userns.Reason();
}

// kubernetes/kubernetes pkg/kubeapiserver/default_storage_factory_builder.go
// at 864752076be6 (2026-07-21): NewStorageFactoryConfigEffectiveVersion's
// overrides (the storagemigration one now names storageversionmigrations).
TEST(EmbeddedLinesTest, StorageOverridesOf137) {
  EXPECT_EQ(
      OverridesOf(Line("1.37")),
      (std::set<Override>{
          {"coordination.k8s.io", "leasecandidates", "v1beta1"},
          {"certificates.k8s.io", "clustertrustbundles", "v1beta1"},
          {"certificates.k8s.io", "podcertificaterequests", "v1beta1"},
          {"storagemigration.k8s.io", "storageversionmigrations", "v1beta1"},
          {"resource.k8s.io", "devicetaintrules", "v1beta2"},
          {"resource.k8s.io", "resourcepoolstatusrequests", "v1alpha3"},
          {"scheduling.k8s.io", "workloads", "v1beta1"},
          {"scheduling.k8s.io", "podgroups", "v1beta1"},
          {"scheduling.k8s.io", "compositepodgroups", "v1alpha3"}}));
}

}  // namespace
}  // namespace compatd::catalog
