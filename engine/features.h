#pragma once

// Feature gates: spec validation per release line, the spec in force at the
// effective versions, and applying --feature-gates (parsed by
// engine/feature_gate_flags.h). Follows kubernetes/component-base
// featuregate/feature_gate.go at v0.31.0 through v0.36.0, by release line
// (docs/kubernetes-rules.md#feature-spec-validation,
// docs/kubernetes-rules.md#feature-gate-at-version,
// docs/kubernetes-rules.md#feature-gate-flags).

#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/query.h"

namespace compatd::engine {

// Checks one gate's spec list as AddVersioned does for the given binary
// version's release line: before 1.33 nothing is checked and the list is
// sorted by version (stable); 1.33-1.34 check versions, stages and
// Deprecated; 1.35+ add the equal-version, min-compatibility,
// no-stability-change and unlock rules and fill each spec's inherited
// min_compatibility_version. A min_compatibility_version before 1.35 is
// refused (the field did not exist). INVALID_ARGUMENT naming the gate, the
// offending spec and the rule.
absl::Status ValidateFeatureSpecs(absl::string_view name,
                                  std::vector<FeatureSpec>& specs,
                                  const Version& binary_version);

// component-base featureSpecAtEmulationAndMinCompatVersion: scanning from the
// last spec, the first whose version <= emulation and, when
// `use_min_compatibility` (Kubernetes 1.35+), whose min_compatibility_version
// (if any) <= min_compatibility. nullptr when none: the gate is PreAlpha (not
// yet introduced), default off.
const FeatureSpec* SelectFeatureSpec(const std::vector<FeatureSpec>& specs,
                                     const Version& emulation,
                                     const Version& min_compatibility,
                                     bool use_min_compatibility);

// Whether feature specs carry min-compatibility versions (and AddVersioned has
// the 1.35 rules) in the given binary version's release line.
bool FeatureGatesUseMinCompatibility(const Version& binary_version);

// Borrows from the catalog (engine/catalog.h, "Lifetimes"): `feature` and
// `spec` point into it, or into a static for AllAlpha/AllBeta.
struct FeatureDecision {
  const Feature* feature = nullptr;
  // Null when not yet introduced (pre-alpha).
  const FeatureSpec* spec = nullptr;
  PreRelease stage = PreRelease::kPreAlpha;
  bool enabled = false;
  bool default_enabled = false;
  bool locked_to_default = false;
  // Set by --feature-gates (the request's or the cluster section's).
  bool overridden = false;

  // What the reason sentence is made of; the sentence itself is written only
  // on demand (Reason / AppendReason), so that a decision allocates nothing.
  Version emulation;                     // major.minor the spec was chosen at
  bool min_compatibility_rules = false;  // 1.35+ specs (see SelectFeatureSpec)
  absl::string_view overridden_via;      // "AllAlpha" / "AllBeta" or empty
  bool overridden_in_cluster = false;    // cluster.featureGates, not the query
  // With overridden_in_cluster: a cluster profile's origin of the flag
  // (points into the catalog); empty for a catalog's cluster section.
  absl::string_view cluster_origin;

  // One sentence: "BETA since 1.29, default on; overridden off by
  // feature_gates", "not yet introduced at emulation version 1.31 (first
  // spec: ALPHA in 1.33)". AppendReason grows `out` at most once.
  std::string Reason() const;
  void AppendReason(std::string* out) const;
};

// One gate at the effective versions, with the cluster section's gates then the
// query's feature_gates applied (the whole flag set is validated, as
// kube-apiserver would at start-up: unknown gate, locked gate set to a
// non-default value, gate not yet introduced, bad value -> INVALID_ARGUMENT).
// Unknown `name` -> NOT_FOUND ("unknown feature gate \"X\"; did you mean
// ..."). "AllAlpha" and "AllBeta" are gates too (ALPHA/BETA since 0.0, default
// off), as in component-base. The decision borrows from the catalog: keep it
// alive. Without feature_gates, allocates nothing.
absl::StatusOr<FeatureDecision> DecideFeature(
    const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND,
    const EffectiveVersions& versions, const VersionQuery& query,
    absl::string_view name);

// Every gate (of `component`, if not empty), sorted by name; same rules as
// DecideFeature, and the decisions borrow from the catalog the same way.
absl::StatusOr<std::vector<FeatureDecision>> DecideFeatures(
    const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND,
    const EffectiveVersions& versions, const VersionQuery& query,
    absl::string_view component);

// Why kube-apiserver refuses one --feature-gates entry at the effective
// versions (unsafeSetFromMap, docs/kubernetes-rules.md#feature-gate-flags).
enum class GateFlagProblem {
  kNone,
  kUnknown,        // no such gate in this binary
  kLocked,         // locked to the other value
  kNotIntroduced,  // PreAlpha: may not be set, not even to false
};

struct GateFlagCheck {
  GateFlagProblem problem = GateFlagProblem::kNone;
  // Kubernetes' message for the entry ("cannot set feature gate X to false,
  // feature is locked to true"); empty when kNone.
  std::string message;
};

// One --feature-gates entry `name=value` as unsafeSetFromMap judges it at
// `versions`: the checks DecideFeature runs on every entry of the merged flag,
// for one entry. AllAlpha and AllBeta are gates.
GateFlagCheck CheckFeatureGateFlag(const Catalog& catalog,
                                   const EffectiveVersions& versions,
                                   absl::string_view name, bool value);

// DecideFeatures with the whole --feature-gates map given (sorted by name, one
// entry per gate; the catalog's cluster section is not read): for callers that
// merge flags of their own (PlanUpgrade's from and to). Same validation and
// errors; the decisions borrow from the catalog and from `flags`' names.
absl::StatusOr<std::vector<FeatureDecision>> DecideFeaturesWithFlags(
    const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND,
    const EffectiveVersions& versions,
    const std::vector<std::pair<std::string, bool>>& flags
        ABSL_ATTRIBUTE_LIFETIME_BOUND);

}  // namespace compatd::engine
