#pragma once

// KEP-2339 StorageVersion status: the common encoding version of several API
// servers and the AllEncodingVersionsEqual condition. Follows
// kubernetes/apiserver pkg/storageversion (updater.go, manager.go) at v0.36.0
// (docs/kubernetes-rules.md#storage-version-agreement).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace compatd::engine {

struct ServerStorageVersion {
  std::string apiserver_id;
  std::string encoding_version;
  std::vector<std::string> decodable_versions;
  std::vector<std::string> served_versions;
};

// Owns everything it holds (engine/catalog.h, "Lifetimes").
struct StorageVersionAgreement {
  std::string common_encoding_version;  // empty: none
  std::string condition_type;           // "AllEncodingVersionsEqual"
  std::string condition_status;         // "True" / "False"
  std::string condition_reason;
  std::string condition_message;
  // The reports after updates and participant filtering.
  std::vector<ServerStorageVersion> counted;
  std::vector<std::string> ignored_apiserver_ids;
  // "<group>.<resource>", group "core" for ""; empty without a resource.
  std::string object_name;
  std::string reason;
};

// Applies the reports in order (a repeated apiserver_id replaces the earlier
// report, as the updater does), drops servers not in `participants` (when
// given), and computes the common encoding version and condition.
// INVALID_ARGUMENT for an empty apiserver_id or encoding_version.
absl::StatusOr<StorageVersionAgreement> ComputeStorageVersionAgreement(
    absl::Span<const ServerStorageVersion> reports,
    absl::Span<const std::string> participants, absl::string_view group,
    absl::string_view resource);

}  // namespace compatd::engine
