#pragma once

// The priority order of API version strings that kube-apiserver sorts a
// group's versions by: v10 > v2 > v1 > v2beta1 > v1beta2 > v1alpha1 > any
// string that is not a Kubernetes version.
//
// Follows kubernetes/apimachinery pkg/version/helpers.go
// (CompareKubeAwareVersionStrings) at v0.36.0 (the file is unchanged from
// v0.31.0 to master). Rule: docs/kubernetes-rules.md#kube-aware-version-order.

#include "absl/strings/string_view.h"

namespace compatd::engine {

// > 0 when `a` has the higher priority, < 0 when `b` has, 0 when equal.
// Strings matching ^v(\d+)(?:(alpha|beta)(\d+))?$ rank by type (GA > beta >
// alpha), then major, then minor; every such string outranks every other
// string; two other strings compare reverse-alphabetically (so a descending
// sort lists them alphabetically). A number too large for int64 makes the
// string "other", as Go's strconv.Atoi failing does.
int CompareKubeAwareVersionStrings(absl::string_view a, absl::string_view b);

}  // namespace compatd::engine
