#pragma once

// The CEL part of a scan (api/scan.h): every CEL expression of the scanned
// manifests (manifest/cel_fields.h) checked against the target binary's CEL
// environment (catalog/cel_environments.h): CEL_NOT_WRITABLE when
// NewExpressions at the min-compatibility version lacks a use or the target
// binary does not declare it at all (blocking, like a removed API),
// CEL_NOT_READABLE when a rollback to a release down to that version could not
// read it back (weighs like a deprecation).
// docs/kubernetes-rules.md#cel-libraries.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "api/scan.h"
#include "api/scan_answer.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/version.h"

namespace compatd::api {

// The min-compatibility version the CEL checks assume for `target`: `requested`
// when given (INVALID_ARGUMENT unless between the target's floor, which is
// engine::KubeVersionFloor from 1.33 on and target - 1 before, and the
// target), else target - 1, not below the floor.
absl::StatusOr<engine::Version> CelScanMinCompatibility(
    const engine::Version& target, absl::string_view requested);

// Adds the CEL findings of `texts` at `target` to `answer` (findings,
// deprecated and blocking counts), within its bounds and this thread's work
// budget. Returns how many expressions were checked. The answer names the
// environment used (cel_environment: a line's own, or for a target older than
// every line the oldest line's base.go history); a target without one (before
// CEL's epoch 1.23, after the newest line) checks nothing and sets
// cel_not_checked.
int ScanCelExpressions(absl::Span<const ScanText> texts,
                       const engine::Version& target,
                       const engine::Version& min_compatibility,
                       ScanAnswer& answer);

// The admission webhook's CEL check: the expressions of one object (its
// JSON, as an AdmissionReview carries it) that a rollback of `binary` down to
// `min_compatibility` could not read back (StoredExpressions of that release
// lacks a use). For an UPDATE, `old_object` is the stored object: an
// expression it already has (same field, same text) is not new and is left
// out. One sentence per expression and release, "<Kind> <name> <field> uses
// <name> (<library>, Kubernetes 1.N): kube-apiserver 1.M cannot read it back
// after a rollback", at most `max` of them. Objects of kinds without CEL, and
// binaries without a CEL environment in compatd, give none. With a work
// budget on the thread (base/work_budget.h) the objects' reading and each
// expression look at it, and the check stops once it is spent: `stopped`
// (if not null) says whether it did before its end.
std::vector<std::string> CelNotReadableAfterRollback(
    absl::string_view object, absl::string_view old_object,
    const engine::Version& binary, const engine::Version& min_compatibility,
    size_t max, bool* stopped = nullptr);

}  // namespace compatd::api
