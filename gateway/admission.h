#pragma once

// POST /admission/v1/validate: a Kubernetes validating admission webhook.
// Takes an admission.k8s.io/v1 AdmissionReview (read with simdjson's
// On-Demand API: the object, which can be megabytes, is never built into a
// DOM) and answers one with response.uid echoed.
//
// - Any object: its group/version/kind (request.requestKind, else
//   request.kind, else the object's apiVersion/kind) at the versions of the
//   catalog's cluster section, overridable per webhook with query parameters
//   (emulationVersion, binaryVersion, minCompatibilityVersion, runtimeConfig,
//   featureGates). Deprecated: allowed with a warning naming the replacement
//   and the removal release. Not served: denied with ?mode=enforce, a warning
//   with ?mode=warn (the default). Unknown to the catalog (custom resources):
//   allowed without a word.
// - A CustomResourceDefinition UPDATE that drops a version still listed in
//   the old object's status.storedVersions is denied, as kube-apiserver does.
// - dryRun requests are answered the same way. Another apiVersion, a missing
//   request.uid, a repeated key or an unparseable document: HTTP 400.

#include "http/server.h"
#include "runtime/serving_snapshot.h"

namespace compatd::gateway {

// `snapshot` null: 503 (no catalog yet; failurePolicy decides).
void ServeAdmission(const runtime::ServingSnapshot* snapshot,
                    const http::Request& request, http::Response* response);

}  // namespace compatd::gateway
