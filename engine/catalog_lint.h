#pragma once

// Checks a catalog against the API change rules Kubernetes documents and
// enforces, and reports every entry that breaks one (`compatd lint`, the
// LintCatalog RPC). The rules:
//
// error   storage-version-new-in-release
//           A release stores a resource in a version that release introduces,
//           although an older non-alpha version was served in the release
//           before ("do not add a new API version of an existing resource and
//           make it ... the storage version": a rollback of the apiserver
//           could not decode what it wrote; api-changes guide, "Backward
//           compatibility gotchas").
// error   storage-version-not-decodable
//           A release stores a resource in a version the release before does
//           not have yet (introduced later still), although a non-alpha version
//           was served there: the same rollback breaks.
// error   ga-version-removed
//           A GA version (v1, v2) of a resource is removed: "GA API versions
//           ... must not be removed within a major version" (Kubernetes
//           deprecation policy, rule #4a; api-changes guide: v1 stays
//           backward-compatible).
// error   beta-removed-too-soon
//           A beta version is removed without a deprecation, or fewer than 3
//           releases after it: "no longer served 9 months or 3 minor releases
//           after deprecation (whichever is longer)" (rule #4a). The catalog
//           has no release dates, so the 9 months are not checked; since 1.22
//           Kubernetes ships 3 minors a year, so 3 releases are the longer.
// error   feature-removed-in-emulation-window
//           A gate's planned removal (`removed`) breaks Kubernetes'
//           verifyFeatureRemoval (kubernetes/kubernetes
//           test/compatibility_lifecycle/cmd/feature_gates.go): a Beta gate,
//           a GA or Deprecated gate not locked to its default, or one locked
//           (after 1.31) fewer than 3 releases before: binaries emulate 3
//           releases back, where the gate still acts (KEP-4330 "Feature Gate
//           Lifecycles").
// warning ga-feature-not-locked
//           A gate GA for every release the binary can emulate (since the
//           emulation floor or earlier) and still not locked to its default:
//           it can only be removed 3 releases after it is locked (same
//           sources; feature-gates.md: "GA ... LockToDefault is set to true").
//
// error   api-history-missing-kind
//           apis serves a kind that apiHistory (when the catalog has one) does
//           not list: a manifest scan outside the emulation window would call
//           it unknown.
// error   api-history-removed-but-served
//           apiHistory ends a kind (removed, or its types deleted) in a
//           release the binary can emulate, but apis still serves it there:
//           a scan inside and one outside the window would disagree.
//
// The storage rules look at the releases the catalog's binary can emulate
// (binary-3, not below 1.31, to binary), each at the rollback target a release
// has by default: min-compatibility = release - 1. Data of resources that had
// only alpha versions has no rollback guarantee ("Alpha ... without any
// provision for preserving objects"), so those are not checked.
//
// A finding that matches LintExceptions() is a documented real-world exception:
// it carries the reason and counts as neither error nor warning.
//
// Pure and thread-safe; a loaded catalog is always lintable. Rules:
// docs/kubernetes-rules.md#catalog-lint-rules.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/catalog.h"
#include "engine/version.h"

namespace compatd::engine {

enum class LintSeverity { kError, kWarning };

// "error", "warning".
absl::string_view LintSeverityName(LintSeverity severity);

struct LintFinding {
  LintSeverity severity = LintSeverity::kError;
  std::string rule;     // "beta-removed-too-soon"
  std::string subject;  // "apps/v1beta1 deployments", "feature WatchList",
                        // "leasecandidates.coordination.k8s.io"
  std::string release;  // "1.16"
  std::string message;
  std::string exception;  // non-empty: a documented real-world exception
  int line = 0;           // of the catalog entry; 0 when unknown
};

// Owns everything it holds (engine/catalog.h, "Lifetimes").
struct LintReport {
  // Errors, then warnings, then exceptions; each by release, then subject.
  std::vector<LintFinding> findings;
  int errors = 0;
  int warnings = 0;
  int exceptions = 0;
};

// A known real-world exception: findings of `rule` about `subject` are
// expected, for `reason`.
struct LintException {
  absl::string_view rule;
  absl::string_view subject;
  absl::string_view reason;
};

absl::Span<const LintException> LintExceptions();

LintReport LintCatalog(const Catalog& catalog);

// Gates locked to their default at or before this version may be removed at
// any time (verifyFeatureRemoval's thresholdVersion: 1.31 introduced
// emulation versions).
inline Version FeatureRemovalThreshold() { return Version::MajorMinor(1, 31); }

// verifyFeatureRemoval for one gate whose binaries stop registering it in
// `removed`: the reason it may not go then, or nullopt. Uses the gate's last
// spec before `removed`.
std::optional<std::string> CheckFeatureRemoval(const Feature& feature,
                                               const Version& removed,
                                               const Version& threshold);

}  // namespace compatd::engine
