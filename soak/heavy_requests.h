#pragma once

// What compatd-soak's heavy classes (heavy-grpc, heavy-http) send: realistic
// requests of compatd's heavy lane (api/lanes.h), each with a check of its
// answer. A ScanObjects of a large bundle of rendered manifests
// (Deployments, Services, CronJobs, Ingresses, HPAs, PodSecurityPolicies, a
// CRD with CEL rules and its custom resources; some of them APIs the target
// no longer serves), a PlanUpgrade over three minors with clients, a
// LintCatalog and large Evaluate batches. Plain functions, like
// soak/requests.h.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "soak/requests.h"

namespace compatd::soak {

// Rendered manifests of many small services, as a CI job scans them before
// an upgrade: a CRD with CEL validation rules, then per service a chart's
// documents. Some use APIs removed before 1.36 (extensions/v1beta1 Ingress,
// policy/v1beta1 PodSecurityPolicy, batch/v1beta1 CronJob,
// autoscaling/v2beta2 HorizontalPodAutoscaler) and some custom resources a
// version the CRD does not list.
struct ManifestBundle {
  std::string text;
  uint32_t objects = 0;  // documents, each one object
  uint32_t removed = 0;  // objects of an API removed by 1.36
  uint32_t unknown = 0;  // custom resources of a version the CRD lacks
};
// As many services as fit in `max_bytes`.
ManifestBundle MakeManifestBundle(size_t max_bytes);

// One heavy request: the gRPC message, the same as the JSON body of
// POST /v1/<RPC>, and its check.
struct HeavyCase {
  SoakRequest request;
  std::string json;
  int weight = 1;
};

// The heavy requests, each at most `max_recv_message_bytes` as a message
// and `max_json_bytes` as JSON (the scan's bundle is sized to fit both,
// near the smaller). Built once per thread (see MakeValidCases).
std::vector<HeavyCase> MakeHeavyCases(const CatalogFacts& facts,
                                      size_t max_recv_message_bytes,
                                      size_t max_json_bytes);

}  // namespace compatd::soak
