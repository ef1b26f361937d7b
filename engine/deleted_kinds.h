#pragma once

// Which enabled resources kube-apiserver actually installs at the emulation
// version: those removed by then are dropped, and those not yet introduced are
// dropped unless forward compatibility keeps them.
//
// Follows kubernetes/apiserver pkg/server/deleted_kinds.go
// (resourceExpirationEvaluator: ShouldServeForVersion, removeDeletedKinds,
// removeUnintroducedKinds, shouldServeBasedOnVersionIntroduced) at v0.36.0
// (unchanged since v0.33.0), and the same file at v0.32.0 (shouldServe,
// RemoveDeletedKinds; also v0.31.0) and v0.30.0 for the older release lines.
// Rules: docs/kubernetes-rules.md#deleted-kinds and
// docs/kubernetes-rules.md#unintroduced-kinds.

#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/resource_config.h"
#include "engine/version.h"

namespace compatd::engine {

// One resource with storage (APIGroupInfo.VersionedResourcesStorageMap's
// entry) and the notes that explain why it is still served. Points into the
// catalog.
struct StoredResource {
  const APIResource* resource = nullptr;
  std::vector<std::string> notes;
};

// The storage map, by catalog.apis index; each list sorted by resource name.
using StorageMap = std::vector<std::vector<StoredResource>>;

// What deleted_kinds.go does, by the binary's release line.
enum class DeletedKindsRule {
  // Before 1.31 (v0.30.0): only removed kinds are dropped; "introduced" is
  // not looked at (there is no emulation version).
  kRemovedOnly,
  // 1.31-1.32 (v0.31.0, v0.32.0): shouldServe drops a kind not yet introduced
  // at the emulation version or removed by it, in one pass and silently, even
  // when --runtime-config enables it explicitly; no forward compatibility.
  kShouldServe,
  // 1.33+ (v0.33.0 to master): removeDeletedKinds, then
  // removeUnintroducedKinds with the forward-compatibility flags and the
  // errors for explicitly enabled kinds.
  kRemovedThenUnintroduced,
};

// resourceExpirationEvaluator at the emulation version (major.minor) of
// `versions`; "alpha" is read from the binary's pre-release, as
// EmulationVersion() carries it. The two environment variables
// (KUBE_APISERVER_STRICT_REMOVED_API_HANDLING_IN_ALPHA,
// KUBE_APISERVER_SERVE_REMOVED_APIS_FOR_ONE_RELEASE) are taken as unset.
// Borrows the registry and the versions, which must outlive it.
class ResourceExpirationEvaluator {
 public:
  ResourceExpirationEvaluator(
      const GroupVersionRegistry& registry ABSL_ATTRIBUTE_LIFETIME_BOUND,
      const EffectiveVersions& versions ABSL_ATTRIBUTE_LIFETIME_BOUND,
      bool emulation_forward_compatible,
      bool runtime_config_emulation_forward_compatible);

  // ShouldServeForVersion: a resource removed at `removed` is served while
  // removed > current; when removed == current only by an alpha pre-release
  // binary (then `note` says so).
  bool ShouldServeForVersion(const Version& removed, std::string* note) const;

  // What InstallAPIs runs on one group, by the binary's release line (see
  // DeletedKindsRule). From 1.33: INVALID_ARGUMENT (Kubernetes' message) when
  // a resource or a whole version explicitly enabled in --runtime-config is
  // dropped as not yet introduced.
  absl::Status RemoveUnavailableKinds(absl::string_view group,
                                      const ResourceConfig& config,
                                      StorageMap* storage) const;

  static DeletedKindsRule RuleFor(const Version& binary);

 private:
  // removeDeletedKinds (RemoveDeletedKinds before 1.33, which also drops kinds
  // not yet introduced when `check_introduced`).
  void RemoveDeletedKinds(absl::string_view group, StorageMap* storage,
                          bool check_introduced) const;
  absl::Status RemoveUnintroducedKinds(absl::string_view group,
                                       const ResourceConfig& config,
                                       StorageMap* storage) const;
  absl::StatusOr<bool> ShouldServeBasedOnVersionIntroduced(
      const APIGroupVersion& api, size_t gv, const APIResource& resource,
      const ResourceConfig& config, bool lower_priority_enabled,
      StoredResource* stored) const;

  const GroupVersionRegistry& registry_;
  const EffectiveVersions& versions_;
  Version current_;  // emulation major.minor
  bool is_alpha_ = false;
  bool efc_ = false;
  bool rcfc_ = false;
};

}  // namespace compatd::engine
