#pragma once

// Which API group-versions and resources kube-apiserver serves at an emulation
// version with
// --runtime-config and the forward-compatibility flags (apiserver
// resourceconfig helpers, deleted_kinds.go; apimachinery
// pkg/version/helpers.go; KUBERNETES-SEMANTICS.md 4 and 5).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/query.h"

namespace compatd::engine {

// apimachinery's CompareKubeAwareVersionStrings: > 0 when a has higher priority
// than b (v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > non-kube strings).
int CompareKubeAwareVersionStrings(absl::string_view a, absl::string_view b);

struct ServedGroupVersion {
  std::string group;
  std::string version;
  std::vector<std::string> resources;  // sorted
  std::string reason;
};

// The group-versions serving at least one resource, by group then priority.
// INVALID_ARGUMENT for what kube-apiserver refuses at start-up (bad
// --runtime-config keys or values, forward- compatible flags at emulation ==
// binary, explicitly enabling something not yet introduced).
//
// The runtime config is the catalog's cluster section with the query's
// --runtime-config on top (a query key wins), after kube-apiserver's rewrite
// of the legacy core keys ("v1", "api/v1", ... -> "/v1"; "api/legacy"
// dropped). The forward-compatibility flags are the query's, else the
// cluster section's, else false. The emulation version is checked against
// kube-apiserver's range for the binary (1.31 floor, N-3 from 1.33). Pure and
// thread-safe; the catalog must outlive the call only.
absl::StatusOr<std::vector<ServedGroupVersion>> ListServedAPIs(
    const Catalog& catalog, const EffectiveVersions& versions,
    const VersionQuery& query);

}  // namespace compatd::engine
