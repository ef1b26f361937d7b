#pragma once

// What the API layer derives from a catalog once per snapshot
// (DeriveAnswers in api/handlers.h): the answers of the requests that depend
// on the catalog alone. Internal to api/.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/api_verdict.h"
#include "engine/catalog.h"
#include "engine/catalog_set.h"
#include "engine/effective_version.h"
#include "runtime/serving_snapshot.h"

namespace compatd::api {

// "group/version/resource" ("" group: "/v1/pods"): engine::ServedApiKey,
// the key engine::JudgeApi looks served resources up by.
inline std::string ServedKey(absl::string_view group, absl::string_view version,
                             absl::string_view resource) {
  return engine::ServedApiKey(group, version, resource);
}

// The catalog's cluster.upgradeTarget, derived once per snapshot.
struct UpgradeTargetAnswers {
  bool present = false;
  // Not OK: the target's served APIs could not be listed (the plan and the
  // loader say why); objects are then not checked against it.
  absl::Status status;
  engine::EffectiveVersions versions;
  // The resources served at the target, as ServedKey.
  absl::flat_hash_set<std::string> served;
  // Blocking plan items by kind: "flags", "apis" (both always present).
  std::vector<std::pair<std::string, int64_t>> blockers;
  // The target's line: an index into the set's lines, and its catalog
  // (owned by the set, which the snapshot holds).
  size_t line = 0;
  const engine::Catalog* catalog = nullptr;
};

// The target of `catalog` (present = false when it has none). Runs
// engine::PlanUpgrade from the cluster section to the target, and
// ListServedAPIs at the target with its flags, on the catalog of the line
// the target's binary version selects in `set`.
UpgradeTargetAnswers DeriveUpgradeTarget(const engine::CatalogSet& set,
                                         const engine::Catalog& catalog);

struct CatalogAnswers final : runtime::DerivedAnswers {
  absl::Status list_api_versions_status;
  v1::ListAPIVersionsResponse list_api_versions;
  absl::Status list_features_status;
  v1::ListFeaturesResponse list_features;
  // The resources served at the cluster section's versions (an empty query).
  absl::Status served_status;
  engine::EffectiveVersions versions;
  absl::flat_hash_set<std::string> served;
  UpgradeTargetAnswers target;

  const engine::EffectiveVersions* UpgradeTargetVersions() const override {
    return target.present ? &target.versions : nullptr;
  }
  std::vector<std::pair<std::string, int64_t>> UpgradeBlockers()
      const override {
    return target.blockers;
  }
  size_t UpgradeTargetLine() const override { return target.line; }
};

}  // namespace compatd::api
