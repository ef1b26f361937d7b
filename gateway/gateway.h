#pragma once

// The HTTPS/JSON front door: compatd for callers that do not speak gRPC
// (kube-apiserver's admission webhooks, OPA Gatekeeper's external data,
// Kyverno's apiCall, curl). A second adapter over the same transport-free
// handlers as gRPC and `compatd eval`, with the same snapshot per call, the
// same client recording and metrics for every request.
//
//   POST /v1/<RPC>                the RPC's request as proto3 JSON (what
//                                 grpcurl and `compatd eval` take); answers
//                                 its response as proto3 JSON with defaults
//   GET  /v1/<RPC>?a=1&b.c=2      the same, for requests of scalar fields
//   POST /admission/v1/validate   admission.k8s.io/v1 AdmissionReview
//   POST /gatekeeper/v1           externaldata.gatekeeper.sh/v1beta1
//                                 ProviderRequest
//   POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/...
//                                 Cluster API's Runtime SDK: discovery and
//                                 the upgrade hooks (gateway/capi_extension.h)
//   POST /audit/v1/events         kube-apiserver's audit webhook
//                                 (audit.k8s.io/v1 EventList;
//                                 gateway/audit.h), when one is given
//   GET  /healthz                 200 "ok" once a catalog is served, else 503
//   GET  /, /ui/...               the status page (ui/status_page.h), when
//                                 one is given (--ui)
//
// Heavy requests (api/lanes.h: /v1/ScanObjects, /v1/PlanUpgrade, ...) run
// on the heavy lane's pool when one is given; a full pool is 429 with
// Retry-After at once.
//
// Errors are grpc-gateway's: the HTTP status its runtime maps each gRPC code
// to, with a google.rpc.Status JSON body ({"code","message","details"}).
// Unknown paths 404, wrong methods 405 with Allow.

#include <cstddef>
#include <memory>

#include "absl/time/time.h"
#include "api/handlers.h"
#include "api/lanes.h"
#include "base/work_pool.h"
#include "gateway/audit.h"
#include "gateway/capi_extension.h"
#include "gateway/provider_cache.h"
#include "http/server.h"
#include "runtime/capi_verdicts.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"
#include "ui/status_page.h"

namespace compatd::gateway {

// --gatekeeper-cache-bytes' default: a few thousand answers.
inline constexpr size_t kDefaultGatekeeperCacheBytes = 4 << 20;

// Where the gateway runs heavy requests (api/lanes.h). No pool: every
// request runs on the HTTP server's threads.
struct HeavyLane {
  base::WorkPool* pool = nullptr;  // must outlive the gateway
  // Each heavy request's budget (--max-heavy-work-time; base/work_budget.h).
  absl::Duration work_time = absl::Seconds(10);
};

class Gateway final {
 public:
  // Everything must outlive the gateway; `clients`, `metrics` and `ui` may
  // be null (no status page: its paths are 404). Requests for the status
  // page are not recorded as clients: its readers are people in browsers.
  // `gatekeeper_cache_bytes` bounds the answers kept for /gatekeeper/v1
  // (gateway/provider_cache.h; --gatekeeper-cache-bytes); 0 keeps none.
  // `audit` (may be null: the route is 404) reads /audit/v1/events; its
  // posts are not recorded as a client call of their own (kube-apiserver is
  // the sender, the events name the clients). `capi_verdicts` (may be null)
  // keeps the last Cluster API hook verdict per cluster for the status page;
  // Cluster API's calls are not recorded as clients either.
  Gateway(const api::PolicyHandlers* handlers,
          const runtime::SnapshotStore* store, runtime::ClientTracker* clients,
          const runtime::ServiceMetrics* metrics,
          const ui::StatusPage* ui = nullptr,
          size_t gatekeeper_cache_bytes = kDefaultGatekeeperCacheBytes,
          HeavyLane heavy = HeavyLane(), AuditIngest* audit = nullptr,
          runtime::CapiVerdicts* capi_verdicts = nullptr);

  // Answers on the calling thread, whatever the request's lane.
  // Thread-safe; never blocks.
  void Handle(const http::Request& request, http::Response* response) const;

  // The request's lane: its route's row in api::kLaneRules (/v1/<RPC> by the
  // RPC), /v1/Evaluate by its items when its body is small enough to read.
  // Static: compatd-soak classifies its own requests with it.
  static api::Lane LaneOf(const http::Request& request);

  // The handler for http::Server: light requests answered on the server's
  // thread, heavy ones on the heavy lane's pool, or 429 when it is full.
  // Audit batches take turns (AuditIngest::Schedule) on the server's
  // threads.
  http::AsyncHandler AsHandler() const;

 private:
  // POST /audit/v1/events through AsHandler: now, queued for its turn, or
  // 429 when the queue is full.
  void ServeAuditTurn(http::Request request, http::Reply reply) const;

  const api::PolicyHandlers* handlers_;
  const runtime::SnapshotStore* store_;
  runtime::ClientTracker* clients_;
  const runtime::ServiceMetrics* metrics_;
  const ui::StatusPage* ui_;
  AuditIngest* audit_;
  CapiExtension capi_;
  mutable ProviderCache gatekeeper_cache_;
  const HeavyLane heavy_;
};

}  // namespace compatd::gateway
