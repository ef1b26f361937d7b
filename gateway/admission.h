#pragma once

// POST /admission/v1/validate[/OPTION...]: a Kubernetes validating
// admission webhook. Takes an admission.k8s.io/v1 AdmissionReview (read with
// simdjson's On-Demand API: the object, which can be megabytes, is never
// built into a DOM) and answers one with response.uid echoed.
//
// - The object's group/version/kind (request.requestKind, else
//   request.kind, else the object's apiVersion/kind; for a subresource, the
//   resource it was made to: requestResource, else resource) at the
//   catalog's cluster versions, overridable per webhook with path segments
//   (gateway/url_query.h, ParseUrlPath) or query parameters. kube-apiserver
//   sent it, so it serves it:
//   - deprecated: allowed with a warning naming the replacement kind first;
//   - not served at the catalog's cluster.upgradeTarget: a warning (warn,
//     the default), denied (enforce);
//   - not served at the cluster's versions by the catalog: the catalog does
//     not match the cluster: a warning and
//     compatd_admission_catalog_mismatch_total, never a denial;
//   - unknown to the catalog (custom resources): allowed without a word.
//   Every warning is at most 256 characters (kube-apiserver's bound).
// - A CustomResourceDefinition UPDATE that drops a version still listed in
//   the old object's status.storedVersions is denied, as kube-apiserver does
//   (before any webhook, so on a cluster it never gets here).
// - dryRun requests are answered the same way; nulls Go's decoder accepts
//   read as absent. Another apiVersion, a missing request.uid, a repeated
//   key, a bad option or an unparseable document: HTTP 400.

#include "http/server.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"

namespace compatd::gateway {

// The webhook's path; options may follow as segments (gateway/url_query.h,
// ParseUrlPath).
inline constexpr char kAdmissionPath[] = "/admission/v1/validate";

// `snapshot` null: 503 (no catalog yet; failurePolicy decides).
// `metrics` may be null (nothing counted).
void ServeAdmission(const runtime::ServingSnapshot* snapshot,
                    const runtime::ServiceMetrics* metrics,
                    const http::Request& request, http::Response* response);

}  // namespace compatd::gateway
