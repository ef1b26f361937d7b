#pragma once

// Checks a CustomResourceDefinition as a manifest carries it against the
// rules of CRD version removal (engine/crd_removal.h, the Cluster API model)
// and apiextensions-apiserver's own validation. Findings:
//
//   stored-version-not-listed  status.storedVersions names a version that
//       spec.versions no longer lists: kube-apiserver rejects the update
//       ("must appear in spec.versions", apiextensions-apiserver
//       pkg/apis/apiextensions/validation/validation.go
//       ValidateCustomResourceDefinitionStoredVersions); objects stored in
//       that version were not migrated.
//   storage-versions  spec.versions has no storage version, or several
//       ("must have exactly one version marked as storage version").
//   the rules of PlanCRDVersionRemoval (unserved-during-deprecation,
//       removed-while-storage, removed-before-cleanup, ...)  when the catalog
//       has the CRD's history (`crds`): the manifest is taken as the release
//       of the history with exactly the same versions (name, served,
//       storage), else as the release after the history's last one (with its
//       migration and cleanup); every version the history knows is planned
//       with the manifest in place and the violations of that release are
//       the manifest's.
//
// Pure and thread-safe.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/catalog.h"

namespace compatd::engine {

struct CRDManifestFinding {
  std::string rule;
  std::string version;  // the CRD version it is about; may be empty
  // The project release the manifest was taken as ("v1.14"); empty for the
  // rules that need no history.
  std::string release;
  std::string message;
};

// `name` is the CRD's metadata.name ("clusters.cluster.x-k8s.io").
std::vector<CRDManifestFinding> CheckCRDManifest(
    const Catalog& catalog, absl::string_view name,
    const std::vector<CRDVersion>& versions,
    const std::vector<std::string>& stored_versions);

}  // namespace compatd::engine
