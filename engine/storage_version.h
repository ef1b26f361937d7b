#pragma once

// Storage (encoding) version selection as kube-apiserver emulates it, and the
// StorageVersionHash discovery shows. Follows kubernetes/apiserver
// pkg/server/storage/resource_encoding_config.go at the tag of each release
// line (v0.30.0, v0.31.0, v0.32.0, v0.35.0, v0.37.0-beta.0) and
// pkg/endpoints/discovery/storageversionhash.go at v0.36.0
// (docs/kubernetes-rules.md#storage-version-selection,
// docs/kubernetes-rules.md#storage-version-hash).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"

namespace compatd::engine {

// Owns everything it holds (engine/catalog.h, "Lifetimes").
struct StorageVersionDecision {
  std::string group;
  std::string resource;
  std::string kind;
  std::string version;
  std::string storage_version_hash;
  std::vector<std::string> decodable_versions;  // priority order
  bool fallback = false;  // no version qualified: the group's preferred version
  bool overridden = false;  // a storageOverrides entry decided
  std::string reason;
};

// The storage version of group/resource at the effective versions, by the rule
// of the binary version's release line. NOT_FOUND for an unknown
// group-resource; FAILED_PRECONDITION for a resource the catalog marks
// persisted: false (review kinds have no etcd storage). Never fails otherwise:
// where nothing qualifies it falls back (fallback = true, saying rollback to
// min-compatibility is not safe) to the group's preferred version, in every
// release line (also from 1.37: kubernetes#137375 changed the selection
// passes only), even when that version does not have the resource.
//
//   before 1.31  the group's preferred version (no compatibility version)
//   1.31         first version (priority order) with no introduced version
//                or introduced <= min-compatibility
//   1.32 - 1.34  the same, skipping versions that declare a replacement
//   1.35 - 1.36  as 1.31
//   1.37+        first non-alpha version introduced <= min-compatibility,
//                else first version introduced <= emulation
// A storageOverrides entry wins in every line; min-compatibility 0.0 skips
// the introduced checks.
absl::StatusOr<StorageVersionDecision> DecideStorageVersion(
    const Catalog& catalog, const EffectiveVersions& versions,
    absl::string_view group, absl::string_view resource);

// base64(sha256("<group>/<version>/<kind>")[0:8]); "" group is core
// ("/v1/Pod").
std::string StorageVersionHash(absl::string_view group,
                               absl::string_view version,
                               absl::string_view kind);

}  // namespace compatd::engine
