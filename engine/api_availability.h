#pragma once

// Which API group-versions and resources kube-apiserver serves at an emulation
// version with --runtime-config and the forward-compatibility flags: its
// start-up, step by step.
//
// Follows kubernetes/apiserver pkg/server/options (APIEnablementOptions
// Validate and ApplyTo in api_enablement.go, ServerRunOptions.Validate in
// server_run_options.go) at v0.36.0, in the order kube-apiserver runs them,
// then removes unavailable kinds group by group as InstallAPIs
// (kubernetes/kubernetes pkg/controlplane/apiserver/apis.go) does. The steps
// themselves: engine/resource_config.h (enablement), engine/deleted_kinds.h
// (removed and not-yet-introduced kinds), engine/runtime_config.h (the flag).
// Rule: docs/kubernetes-rules.md#api-availability.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/query.h"

namespace compatd::engine {

// One served group-version. Owns everything it holds (engine/catalog.h,
// "Lifetimes").
struct ServedGroupVersion {
  std::string group;
  std::string version;
  std::vector<std::string> resources;  // sorted
  std::string reason;
};

// The group-versions serving at least one resource, by group then priority.
// INVALID_ARGUMENT for what kube-apiserver refuses at start-up: bad
// --runtime-config keys or values; a forward-compatibility flag set before
// 1.33 (no such flag) or when emulation equals the binary version; from 1.33,
// explicitly enabling something not yet introduced. Each step follows the
// binary's release line.
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
