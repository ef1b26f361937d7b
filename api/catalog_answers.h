#pragma once

// What the API layer derives from a catalog once per snapshot
// (DeriveAnswers in api/handlers.h): the answers of the requests that depend
// on the catalog alone. Internal to api/.

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/effective_version.h"
#include "runtime/serving_snapshot.h"

namespace compatd::api {

// "group/version/resource" ("" group: "/v1/pods").
inline std::string ServedKey(absl::string_view group, absl::string_view version,
                             absl::string_view resource) {
  return absl::StrCat(group, "/", version, "/", resource);
}

struct CatalogAnswers final : runtime::DerivedAnswers {
  absl::Status list_api_versions_status;
  v1::ListAPIVersionsResponse list_api_versions;
  absl::Status list_features_status;
  v1::ListFeaturesResponse list_features;
  // The resources served at the cluster section's versions (an empty query).
  absl::Status served_status;
  engine::EffectiveVersions versions;
  absl::flat_hash_set<std::string> served;
};

}  // namespace compatd::api
