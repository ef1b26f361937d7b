#pragma once

// The manifest scan behind `compatd scan`, the ScanObjects RPC and its
// Evaluate item: every object of some YAML/JSON manifests checked against a
// target Kubernetes release. One implementation for the CLI, CI and the
// admission webhook's callers.
//
// Per object (manifest/manifest_reader.h reads them), the first that applies:
//   1. A target inside the binary's emulation window (ResolveEffectiveVersions
//      accepts it as --emulated-version): the catalog's own API start-up at
//      that emulation version (api/object_check.h, as the admission webhook
//      decides), for the kinds the catalog serves.
//   2. A group/version/kind of the catalog's apiHistory:
//      engine::DecideFromHistory at the target.
//   3. Another kind of a built-in group (one the catalog's apis or
//      apiHistory has): unknown.
//   4. A custom resource whose CRD is in the scanned set: unknown when the
//      CRD does not list its version, not served when it lists it unserved.
//   5. Otherwise (an aggregated API, a CRD not scanned): not checked.
// CustomResourceDefinitions are also checked by engine::CheckCRDManifest.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/query.h"
#include "runtime/serving_snapshot.h"

namespace compatd::api {

// Scans before 1.16 are refused: the API history's removals start there.
inline constexpr int kScanOldestMinor = 16;

struct ScanText {
  std::string name;        // "chart/templates/deploy.yaml", "-", "objects"
  absl::string_view text;  // must outlive the call
};

// Fills everything of `response` (common fields included). `target` empty:
// the binary version (the query's, else the catalog's). INVALID_ARGUMENT for
// a malformed or too old target, or versions/flags the catalog refuses.
// Bad documents are problems in the response, not errors. Pure and
// thread-safe.
// `line`: the release line the query's binary version picked.
absl::Status ScanManifests(const runtime::ServingLine& line,
                           const engine::VersionQuery& query,
                           absl::string_view target,
                           absl::Span<const ScanText> texts,
                           v1::ScanObjectsResponse* response);

// "DEPRECATED", "REMOVED", "NOT-SERVED", "NOT-YET-INTRODUCED", "UNKNOWN",
// "CRD-VIOLATION": how the table of `compatd scan` names a status.
absl::string_view ScanStatusLabel(v1::ScanStatus status);

// Deprecated findings weigh less than the others (Pluto's exit code 2 vs 3).
bool IsBlocking(v1::ScanStatus status);

}  // namespace compatd::api
