#pragma once

// When may a CRD version stop being served, and when may it be removed from
// the CRD, without breaking an upgrade that skips releases (Cluster API's and
// Kubernetes' n-3)? The model is Cluster API's (kubernetes-sigs/cluster-api
// issue #11894, "Removal of old apiVersions in CRDs";
// docs/kubernetes-rules.md#crd-version-removal):
//
// * Stop serving V: only once its replacement W has been served for the
//   history's deprecationReleases (and as long after a release marks V
//   deprecated). W is the version that took over as the storage version after
//   V's last release as storage (the last release's storage version).
// * Remove V: an upgrade to release N may start from any of N-span .. N-1.
//   Each of those must already have rewritten every object to its storage
//   version (storage version migration, so that no object is left in V and
//   status.storedVersions can drop V: apiextensions rejects storedVersions
//   that name a version the CRD no longer lists) and removed V's managedFields
//   entries (managedFields cleanup: kube-apiserver has none, and an entry of a
//   removed version breaks server-side apply, kubernetes/kubernetes#111937).
//   The cleanup only holds if V is no longer served there (or users write new
//   entries), and V must not be that release's storage version. The first
//   revertBufferReleases releases after V stops being served do not count: the
//   project may serve V again in a patch release (Cluster API keeps 1).
//
// Releases are counted by minor version (v1.9 -> v1.12 is three releases), so
// a history must stay within one major version. What the history does not
// show is assumed as follows:
// * A version already unserved in the first release listed stopped being
//   served before the history: its deprecation period and revert buffer are
//   over. A replacement already listed in the first release counts as added
//   there (the deprecation clock may start earlier in reality).
// * A minor release missing inside the history is unknown: it never counts as
//   a cleanup release, and the unserved run after it starts anew (it may have
//   served the version again).
// * Releases after the last one listed follow the plan: the last release's
//   storage version, V unserved from the earliest allowed release, migration
//   and cleanup in each.
//
// Worked example (both tables of the issue, examples/cluster-api.yaml, span 3,
// deprecationReleases 3, revertBufferReleases 1): v1beta2 is added as the
// storage version in v1.11, so v1beta1 may stop being served in v1.14; it is
// unserved there, v1.14 is the revert buffer, and migration plus cleanup run
// in v1.15-v1.17, so v1beta1 may be removed in v1.18.
//
// Pure and thread-safe.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"

namespace compatd::engine {

// One thing removing the version takes, in order.
struct CRDRemovalStep {
  // "stop-serving", "storage-version-migration", "managed-fields-cleanup",
  // "remove".
  std::string name;
  // The earliest release it may happen in ("v1.14").
  std::string release;
  std::string why;
};

// A release of the history that breaks a rule.
struct CRDRemovalViolation {
  std::string release;  // as the history writes it
  // "unserved-during-deprecation", "removed-while-storage",
  // "removed-while-served", "removed-before-cleanup",
  // "removed-during-revert-buffer", "removed-before-deprecation-ended",
  // "removed-with-unknown-release".
  std::string rule;
  std::string message;
};

// Owns everything it holds (engine/catalog.h, "Lifetimes").
struct CRDRemovalPlan {
  std::string crd;
  std::string version;
  // The history's last storage version (empty when it is `version` itself).
  std::string replacement;
  // Empty when `version` is still the last release's storage version: nothing
  // can be planned until another version takes over.
  std::string earliest_unserve_release;
  std::string earliest_removal_release;
  std::vector<CRDRemovalStep> steps;
  std::vector<CRDRemovalViolation> violations;
  std::string reason;
};

// Checks a history given inline (the API's CRDVersionHistory) as the catalog
// loader checks a `crds` entry, plus one major version throughout: span >= 1,
// deprecation and buffer >= 0, at least one release, releases strictly
// increasing, version names non-empty and unique per release, exactly one
// storage version per release that lists versions. INVALID_ARGUMENT naming the
// field under `field` ("history.releases[2].versions").
absl::Status ValidateCRDHistory(const CRDHistory& history,
                                absl::string_view field);

// The plan for retiring `version` of `history`. NOT_FOUND when no release lists
// the version (the message lists those that do); FAILED_PRECONDITION when the
// history has no releases or spans several major versions.
absl::StatusOr<CRDRemovalPlan> PlanCRDVersionRemoval(const CRDHistory& history,
                                                     absl::string_view version);

}  // namespace compatd::engine
