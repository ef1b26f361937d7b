#pragma once

// The manifest scan behind `compatd scan`, the ScanObjects RPC and its
// Evaluate item: every object of some YAML/JSON manifests checked against a
// target Kubernetes release. One implementation for the CLI, CI and the
// admission webhook's callers.
//
// Per object (manifest/manifest_reader.h reads them), the first that applies:
//   1-2. engine::JudgeApi (engine/api_verdict.h, the verdict of every
//      surface) at the target: a target inside the binary's emulation window
//      (ResolveEffectiveVersions accepts it as --emulated-version) by the
//      line's own API start-up at that emulation version for the kinds it
//      installs, then by the line's API history.
//   3. Another kind of a built-in group (one the catalog's apis or
//      apiHistory has): unknown.
//   4. A custom resource whose CRD is in the scanned set: unknown when the
//      CRD does not list its version, not served when it lists it unserved.
//   5. Otherwise (an aggregated API, a CRD not scanned): not checked.
// CustomResourceDefinitions are also checked by engine::CheckCRDManifest.
// The CEL expressions of the kinds that carry one are checked by api/scan_cel.h
// at `cel_min_compatibility` (empty: its default for the target).

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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

// What bounds a scan (docs/limits.md).
struct ScanLimits {
  // Bytes of findings and problems in the answer: past it, the rest are
  // counted (omitted_findings, omitted_problems; the tallies still count
  // them) and the answer is marked partial. The server's
  // --max-send-message-bytes, less room for the rest of the answer.
  size_t max_answer_bytes = 4 * 1024 * 1024;
  // Bytes of one message; a longer one is cut (at a UTF-8 boundary) and
  // ends with "...".
  size_t max_message_bytes = 1024;
  // Names listed in one message (a CRD's versions); the rest are counted.
  int max_listed_names = 8;
};

// Told after each text is read: texts read so far and the objects in them
// (`compatd scan`'s progress line). Called on the scanning thread.
using ScanProgress = std::function<void(size_t texts, size_t objects)>;

// Fills everything of `response` (common fields included). `target` empty:
// the binary version (the query's, else the catalog's). INVALID_ARGUMENT for
// a malformed or too old target, or versions/flags the catalog refuses.
// Bad documents are problems in the response, not errors; documents without
// a kind (not Kubernetes objects) are skipped and counted, or problems when
// `strict`. RBAC Role/ClusterRole rules granting on a group/resource that
// every version of is removed at the target are findings of their own
// (SCAN_STATUS_RBAC_REMOVED_API, counted in `rbac`). The answer is
// bounded by `limits`, and the work by this thread's base::WorkBudget (if
// any): once it is exhausted the scan stops and answers what it found,
// marked partial. Pure and thread-safe.
// `line`: the release line the query's binary version picked.
absl::Status ScanManifests(
    const runtime::ServingLine& line, const engine::VersionQuery& query,
    absl::string_view target, absl::Span<const ScanText> texts,
    v1::ScanObjectsResponse* response, const ScanLimits& limits = ScanLimits(),
    absl::string_view cel_min_compatibility = "",
    const ScanProgress& progress = nullptr, bool strict = false);

// The line a scan judges by: the query's binary version's line; with none,
// the line of the target's release when the snapshot has one (a target of
// 1.32 is judged by kube-apiserver 1.32's own start-up and history, not the
// default binary's); else the default line. INVALID_ARGUMENT as
// runtime::ServingSnapshot::Line.
absl::StatusOr<const runtime::ServingLine*> ScanLine(
    const runtime::ServingSnapshot& snapshot, absl::string_view binary_version,
    absl::string_view target);

// "DEPRECATED", "REMOVED", "NOT-SERVED", "NOT-YET-INTRODUCED", "UNKNOWN",
// "CRD-VIOLATION", "CEL-NOT-WRITABLE", "CEL-NOT-READABLE": how the table of
// `compatd scan` names a status.
absl::string_view ScanStatusLabel(v1::ScanStatus status);

// An item's (finding's, problem's, warning's) whole source name: the
// answer's sources[source_index] (its `source` is cut to 256 bytes), else
// its `source` (an answer from before the sources list).
template <typename Item>
absl::string_view SourceName(const v1::ScanObjectsResponse& response,
                             const Item& item) {
  if (item.source_index() < static_cast<uint32_t>(response.sources_size())) {
    return response.sources(static_cast<int>(item.source_index()));
  }
  return item.source();
}

// Deprecated findings weigh less than the others (Pluto's exit code 2 vs 3).
bool IsBlocking(v1::ScanStatus status);

}  // namespace compatd::api
