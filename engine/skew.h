#pragma once

// Version skew between kube-apiserver and its clients. Follows KEP-4330
// "Skew" (kubernetes/enhancements
// keps/sig-architecture/4330-compatibility-versions) and kubernetes/website
// content/en/releases/version-skew-policy.md
// (docs/kubernetes-rules.md#skew-policy). Compares major.minor only.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"

namespace compatd::engine {

// The KEP-4330 skew table: kube-controller-manager, kube-scheduler and
// cloud-controller-manager [min-compatibility, emulation]; kubelet and
// kube-proxy [min-compatibility - 2, emulation]; kubectl [min-compatibility,
// emulation + 1].
std::vector<SkewRule> DefaultSkewPolicy();

// The skew rules in force for `catalog`: its skewPolicy, or DefaultSkewPolicy()
// when it has none. The one place the default table is applied; everything
// that reads skew rules reads them through it.
const std::vector<SkewRule>& SkewRulesInForce(
    const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND);

enum class SkewVerdict { kAllowed, kTooOld, kTooNew };

// Borrows from the catalog (engine/catalog.h, "Lifetimes"): `component`
// points into the rules in force (the catalog's, or the static KEP-4330
// table).
struct SkewDecision {
  SkewVerdict verdict = SkewVerdict::kAllowed;
  Version min_version;  // major.minor, inclusive
  Version max_version;  // major.minor, inclusive

  // What the reason sentence is made of; the sentence itself is written only
  // on demand (Reason / AppendReason), so that a decision allocates nothing.
  absl::string_view component;  // the rule's spelling
  uint64_t client_major = 0;
  uint64_t client_minor = 0;
  SkewBound min_bound;  // the rule's bounds and the versions they start from
  SkewBound max_bound;
  Version min_base;
  Version max_base;

  // "kubelet 1.30 is older than the oldest allowed 1.31 (min-compatibility
  // 1.33 - 2)". AppendReason grows `out` once.
  std::string Reason() const;
  void AppendReason(std::string* out) const;
};

// Checks one client version against the catalog's skew policy at the effective
// versions. Pure, thread-safe; the decision borrows from the catalog. "Not
// allowed" is a SkewDecision, not an error. INVALID_ARGUMENT for a malformed
// client version or a component no rule names (the message lists the known
// ones).
//
// The client version is read as Version::Parse does ("1.31", "v1.31.2",
// "1.31.0-alpha.1"); bounds are base (min-compatibility / emulation / binary)
// + offset, minor clamped at 0. The rules are SkewRulesInForce(catalog).
// Allocates nothing on success.
absl::StatusOr<SkewDecision> CheckSkew(
    const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND,
    const EffectiveVersions& versions, absl::string_view component,
    absl::string_view client_version);

}  // namespace compatd::engine
