#pragma once

// The --feature-gates flag syntax, parsed exactly as featureGate.Set does in
// kubernetes/component-base featuregate/feature_gate.go at v0.36.0
// (docs/kubernetes-rules.md#feature-gate-flags):
//
//   ParseFeatureGates("A=true, B=0,,A=f") -> {A=false, B=false}
//
// split on ',' (only empty items are skipped: " " is an item and fails), split
// each item on its first '=', trim key and value, value by strconv.ParseBool;
// a repeated key: the later value wins.

#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::engine {

// Borrows from the parsed text (engine/catalog.h, "Lifetimes").
struct FeatureGateFlag {
  absl::string_view name;  // points into the parsed text
  bool value = false;
};

// Go's strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False.
// INVALID_ARGUMENT worded like Go's ("strconv.ParseBool: parsing \"yes\":
// invalid syntax") otherwise.
absl::StatusOr<bool> ParseGoBool(absl::string_view text);

// One entry per distinct key (the last value given for it), sorted by name.
// INVALID_ARGUMENT with Kubernetes' messages: "missing bool value for K",
// "invalid value of K=V, err: strconv.ParseBool: parsing \"V\": invalid
// syntax". Keys are not checked against any catalog here.
absl::StatusOr<std::vector<FeatureGateFlag>> ParseFeatureGates(
    absl::string_view value ABSL_ATTRIBUTE_LIFETIME_BOUND);

}  // namespace compatd::engine
