#pragma once

// Which API group-versions and resources are enabled: kube-apiserver's default
// enablement with --runtime-config merged on top, and the
// --emulation-forward-compatible widening of it.
//
// Follows kubernetes/apiserver pkg/server/resourceconfig/helpers.go
// (MergeAPIResourceConfigs, applyVersionAndResourcePreferences,
// EmulationForwardCompatibleResourceConfig, the version matchers and the
// GroupVersionRegistry it reads) at v0.36.0; ResourceConfig is the
// serverstore.ResourceConfig it fills (pkg/server/storage/resource_config.go,
// with the explicit maps added in v0.33.0). Rules:
// docs/kubernetes-rules.md#runtime-config-merging and
// docs/kubernetes-rules.md#emulation-forward-compatible.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/api_names.h"
#include "engine/catalog.h"
#include "engine/runtime_config.h"

namespace compatd::engine {

// resourceconfig's version matchers (Go's \d is [0-9]): ^v\d+$, ^v\d+beta\d+$,
// ^v\d+alpha\d+$.
bool IsGAVersion(absl::string_view version);
bool IsBetaVersion(absl::string_view version);
bool IsAlphaVersion(absl::string_view version);

// The --runtime-config keys that select versions by stability.
inline constexpr absl::string_view kAPIAll = "api/all";
inline constexpr absl::string_view kAPIGA = "api/ga";
inline constexpr absl::string_view kAPIBeta = "api/beta";
inline constexpr absl::string_view kAPIAlpha = "api/alpha";
bool IsMatcherKey(absl::string_view key);

// The catalog as kube-apiserver's scheme registry
// (resourceconfig.GroupVersionRegistry): group-versions are indexes into
// catalog.apis. Borrows the catalog, which must outlive it.
class GroupVersionRegistry {
 public:
  explicit GroupVersionRegistry(
      const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND);

  const APIGroupVersion& api(size_t i) const { return catalog_.apis[i]; }
  size_t size() const { return catalog_.apis.size(); }

  bool IsGroupRegistered(absl::string_view group) const;
  std::optional<size_t> Find(absl::string_view group,
                             absl::string_view version) const;
  // Group names, sorted.
  std::vector<absl::string_view> Groups() const;
  // The group's versions sorted by CompareKubeAwareVersionStrings, highest
  // first (what EmulationForwardCompatibleResourceConfig and, since 1.33,
  // removeUnintroducedKinds iterate). The group must be registered.
  const std::vector<size_t>& ByPriority(absl::string_view group) const;
  // The group's versions in catalog order, ", "-joined (for messages).
  std::string VersionList(absl::string_view group) const;

 private:
  const Catalog& catalog_;
  std::map<std::string, std::vector<size_t>, std::less<>> groups_;
  std::map<std::string, std::vector<size_t>, std::less<>> by_priority_;
  std::map<std::pair<absl::string_view, absl::string_view>, size_t> index_;
};

// A version's or a resource's enablement and the sentence explaining it.
struct Enablement {
  bool on = false;
  std::string why;
};

using ResourceKey = std::pair<size_t, std::string>;  // (api index, resource)

// serverstore.ResourceConfig (1.31+, with the explicit maps KEP-4330 added).
struct ResourceConfig {
  // GroupVersionConfigs: every catalog version has an entry, as
  // kube-apiserver's DefaultAPIResourceConfigSource lists every version it
  // registers.
  std::vector<Enablement> versions;
  std::map<ResourceKey, Enablement> resources;  // ResourceConfigs
  std::map<size_t, bool> explicit_versions;     // ExplicitGroupVersionConfigs
  std::map<ResourceKey, bool> explicit_resources;  // ExplicitResourceConfigs

  // EnableVersions / DisableVersions: a preference about a version removes
  // the previous preferences about its resources.
  void SetVersion(size_t gv, bool on, std::string why);
  void SetResource(size_t gv, absl::string_view resource, bool on,
                   std::string why);
  // A resource-level preference wins over the version's.
  bool ResourceEnabled(size_t gv, absl::string_view resource) const;
  const Enablement* ResourcePreference(size_t gv,
                                       absl::string_view resource) const;
  bool VersionExplicitlyEnabled(size_t gv) const;
  bool ResourceExplicitlyEnabled(size_t gv, absl::string_view resource) const;
};

// kube-apiserver's DefaultAPIResourceConfigSource as the catalog states it:
// a version's enabledByDefault, else GA versions on, beta and alpha off.
ResourceConfig DefaultResourceConfig(const GroupVersionRegistry& registry);

// MergeAPIResourceConfigs: api/all, api/ga, api/beta, api/alpha (values
// exactly "true" or "false"), then every group/version, then every
// group/version/resource (applyVersionAndResourcePreferences). Keys of
// unregistered groups are skipped (validation reports them).
// INVALID_ARGUMENT with Kubernetes' messages for an unregistered version, a
// bad value or an upper-case resource.
absl::Status MergeAPIResourceConfigs(const GroupVersionRegistry& registry,
                                     const RuntimeConfigMap& runtime_config,
                                     ResourceConfig* config);

// EmulationForwardCompatibleResourceConfig: every enabled non-alpha version
// enables the higher-priority versions of its group, every enabled non-alpha
// resource the same resource in them; then the explicit preferences are
// applied again, so that an explicit `false` still wins. Kubernetes builds the
// result in one loop over a Go map, so a higher version's `false` visited
// after the lower version can undo the enablement at random; compatd copies
// first and enables after, which is the result the KEP describes.
absl::StatusOr<ResourceConfig> EmulationForwardCompatibleResourceConfig(
    const GroupVersionRegistry& registry,
    const RuntimeConfigMap& runtime_config, const ResourceConfig& in);

}  // namespace compatd::engine
