#pragma once

// compatd's metric families, behind intent-named calls. Every handle the hot
// path needs is resolved in Create(), so recording a request is a few relaxed
// atomic adds: no lock, no allocation, no map insert.
//
//   grpc_server_started_total{grpc_type,grpc_service,grpc_method}
//   grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}
//   grpc_server_handling_seconds{grpc_type,grpc_service,grpc_method}  histogram
//       (the names, labels and code spellings of go-grpc-prometheus, so its
//       dashboards and alerts work unchanged; every code is pre-created for
//       every method, as its InitializeMetrics does)
//   compatd_catalog_reloads_total{result="loaded|unchanged|rejected"}
//   compatd_catalog_generation
//   compatd_catalog_last_reload_success_timestamp_seconds
//   compatd_build_info{version,revision} 1
//   compatd_client_requests_total{component,version,verdict}
//       (version "major.minor" or "unknown"; at most max_client_label_sets
//       series, overflow component="other",version="other")
//   compatd_clients_out_of_allowance{component}
//       (computed at scrape time by the source set with
//       SetClientsOutOfAllowanceSource, i.e. the client tracker)
//   compatd_client_first_seen_timestamp_seconds{component,version}
//   compatd_client_last_seen_timestamp_seconds{component,version}
//       (this replica's live clients, at scrape time, from the source set
//       with SetClientSeenSource; what the fleet view sums)
//   compatd_api_requests_at_risk_total{component,group_version,resource,
//       verdict}  (audited calls to APIs at risk, runtime/api_usage.h; at
//       most max_api_usage_label_sets series, overflow "other" but the
//       verdict)
//   compatd_audit_events_total{result}  (audit events read: "recorded",
//       "skipped_stage", "unauthenticated", "malformed")
//   compatd_audit_batches_total{result}  ("accepted", "malformed",
//       "too_large", "busy")
//   compatd_capi_hook_calls_total{hook,verdict}  (Cluster API Runtime
//       Extension calls, gateway/capi_extension.h)
//
// Thread-safe.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/api_use.h"
#include "engine/skew.h"
#include "metrics/bounded_label_table.h"
#include "metrics/registry.h"
#include "runtime/reload_result.h"

namespace compatd::runtime {

struct ServiceMetricFamilies;  // service_metrics.cc

// go-grpc-prometheus' grpc_type values.
enum class RpcType { kUnary, kClientStream, kServerStream, kBidiStream };
absl::string_view RpcTypeName(RpcType type);  // "unary", "server_stream", ...

// grpc-go's codes.Code.String() spelling, as go-grpc-prometheus prints
// grpc_code: "OK", "Canceled", "InvalidArgument", ... ("Unknown" for a value
// outside 0..16). absl and gRPC share the numbering.
absl::string_view GrpcCodeName(absl::StatusCode code);

// grpc_server_handling_seconds' buckets: 50µs .. 1s (the service answers in
// microseconds; go-grpc-prometheus' defaults start at 5ms).
const std::vector<double>& HandlingSecondsBuckets();

// A client's skew verdict as compatd_client_requests_total{verdict} spells
// it: "allowed", "too_old", "too_new", or "unknown" (nullopt: the component
// or its version is not one the skew policy can judge).
absl::string_view ClientVerdictName(std::optional<engine::SkewVerdict> verdict);

// What became of one audit event (POST /audit/v1/events).
enum class AuditEventResult {
  kRecorded,
  kSkippedStage,
  kUnauthenticated,
  kMalformed
};
inline constexpr size_t kAuditEventResultCount = 4;
// What became of one audit batch.
enum class AuditBatchResult { kAccepted, kMalformed, kTooLarge, kBusy };
inline constexpr size_t kAuditBatchResultCount = 4;

struct RpcMethod {
  std::string service;  // "compatd.v1.CompatibilityPolicy"
  std::string method;   // "CheckSkew"
  RpcType type = RpcType::kUnary;
};

// The pre-resolved handles of one method.
class MethodMetrics final {
 public:
  // Call when the RPC starts (grpc_server_started_total).
  void Started() const { started_->Increment(); }
  // Call when it finishes (grpc_server_handled_total and the histogram).
  void Handled(absl::StatusCode code, absl::Duration latency) const;

 private:
  friend class ServiceMetrics;
  static constexpr size_t kCodes = 17;
  metrics::Counter* started_ = nullptr;
  std::array<metrics::Counter*, kCodes> handled_{};
  metrics::Histogram* handling_seconds_ = nullptr;
};

class ServiceMetrics final {
 public:
  struct Options {
    // Every method the server serves. The first entry's service is the
    // primary one: RecordRequest(method, ...) looks a bare method name up
    // there first.
    std::vector<RpcMethod> methods;
    std::string version;   // compatd_build_info{version}
    std::string revision;  // compatd_build_info{revision}
    size_t max_client_label_sets = metrics::kDefaultMaxLabelSets;
    size_t max_api_usage_label_sets = metrics::kDefaultMaxLabelSets;
  };

  // Registers the families in `registry` (which must outlive this) and
  // resolves every handle. Errors are the registry's (ALREADY_EXISTS when
  // called twice on one registry, INVALID_ARGUMENT for a bad label value).
  static absl::StatusOr<std::unique_ptr<ServiceMetrics>> Create(
      metrics::Registry* registry, Options options);

  ServiceMetrics(const ServiceMetrics&) = delete;
  ServiceMetrics& operator=(const ServiceMetrics&) = delete;
  ~ServiceMetrics();

  // Handles of a (service, method) registered in Create(); a method never
  // registered gets the grpc_service="unknown",grpc_method="unknown" handles.
  // Never null. Lock-free (the map is read-only after Create()).
  const MethodMetrics* Method(absl::string_view service,
                              absl::string_view method) const;
  // A bare method name: the primary service's, else the first service that
  // has it.
  const MethodMetrics* Method(absl::string_view method) const;

  // Started() + Handled() for a call that is over.
  void RecordRequest(absl::string_view method, absl::StatusCode code,
                     absl::Duration latency) const;
  void RecordRequest(absl::string_view service, absl::string_view method,
                     absl::StatusCode code, absl::Duration latency) const;

  // One reload attempt. kLoaded and kUnchanged count as a success (the
  // catalog in force is the file's): they set the success timestamp to `now`.
  void RecordReload(ReloadResult result, absl::Time now) const;
  // A catalog was published (at startup or by a reload).
  void RecordCatalogPublished(uint64_t generation, absl::Time now) const;

  // compatd_client_requests_total's handle for one label set, through the
  // bounded table. Slow path (lock, maybe allocation): cache the handle.
  // `version` is "major.minor" or "unknown". Never null.
  metrics::Counter* ClientRequests(
      absl::string_view component, absl::string_view version,
      std::optional<engine::SkewVerdict> verdict) const;
  // ClientRequests(...)->Increment().
  void RecordClient(absl::string_view component, absl::string_view version,
                    std::optional<engine::SkewVerdict> verdict) const;

  // compatd_api_requests_at_risk_total's handle for one label set, through
  // the bounded table (component, group_version and resource become "other"
  // past the bound). Slow path: cache the handle. Never null.
  metrics::Counter* ApiRequestsAtRisk(absl::string_view component,
                                      absl::string_view group_version,
                                      absl::string_view resource,
                                      engine::ApiUseVerdict verdict) const;
  // Adds `count` to compatd_audit_events_total{result} / one to
  // compatd_audit_batches_total{result}. Lock-free.
  void RecordAuditEvents(AuditEventResult result, uint64_t count) const;
  void RecordAuditBatch(AuditBatchResult result) const;

  // One request on the HTTP front door: compatd_http_requests_total{route,
  // code} and compatd_http_request_duration_seconds{route}. `route` must come
  // from a fixed set (the gateway's routes and "other"); `status` is the HTTP
  // status. Thread-safe.
  void RecordHttpRequest(absl::string_view route, int status,
                         absl::Duration latency) const;

  // An admission review of an API the catalog says the cluster does not
  // serve (kube-apiserver served it, so the catalog or its cluster section
  // does not match the cluster): compatd_admission_catalog_mismatch_total
  // {reason}, reason one of kAdmissionMismatchReasons. Lock-free.
  static constexpr std::array<absl::string_view, 3> kAdmissionMismatchReasons =
      {"removed", "not_introduced", "not_enabled"};
  void RecordAdmissionMismatch(absl::string_view reason) const;

  // One Cluster API Runtime Extension call (gateway/capi_extension.h):
  // compatd_capi_hook_calls_total{hook,verdict}, every pair pre-created. A
  // hook or verdict outside these lists is not counted. Lock-free.
  static constexpr std::array<absl::string_view, 8> kCapiHooks = {
      "Discovery",
      "GenerateUpgradePlan",
      "BeforeClusterUpgrade",
      "BeforeControlPlaneUpgrade",
      "AfterControlPlaneUpgrade",
      "BeforeWorkersUpgrade",
      "AfterWorkersUpgrade",
      "AfterClusterUpgrade"};
  // success: Success; retry: Success with retryAfterSeconds (blocking);
  // blocked: Failure for what compatd found; invalid: Failure for the
  // request (bad input, a line compatd has no facts of).
  static constexpr std::array<absl::string_view, 4> kCapiVerdicts = {
      "success", "retry", "blocked", "invalid"};
  void RecordCapiHook(absl::string_view hook, absl::string_view verdict) const;

  // The out-of-allowance gauge's values at scrape time: (component, count).
  // Replaces any previous source; nullptr removes it (the gauge is then
  // empty). Whoever sets a source must reset it before the source dies.
  using OutOfAllowanceSource =
      std::function<std::vector<std::pair<std::string, int64_t>>()>;
  void SetClientsOutOfAllowanceSource(OutOfAllowanceSource source);
  // The same for the catalog's cluster.upgradeTarget, read at scrape time:
  // compatd_clients_out_of_allowance_at_target{component} from `at_target`,
  // and compatd_upgrade_blockers{kind} from `blockers` (each kind the plan
  // blocks on, and "clients": the sum of `at_target`). Empty families when
  // the sources return nothing (no target). nullptr removes them.
  void SetUpgradeTargetSources(OutOfAllowanceSource at_target,
                               OutOfAllowanceSource blockers);
  // compatd_client_{first,last}_seen_timestamp_seconds' values at scrape
  // time (version: the series' label, "major.minor", "unknown" or "other").
  // nullptr removes it.
  struct ClientSeen {
    std::string component;
    std::string version;
    absl::Time first_seen;
    absl::Time last_seen;
  };
  using ClientSeenSource = std::function<std::vector<ClientSeen>()>;
  void SetClientSeenSource(ClientSeenSource source);

 private:
  ServiceMetrics();
  // Create()'s steps: the handles of every RPC method, of the catalog's and
  // the front door's families, of the request tables; the scrape-time gauges.
  absl::Status AddMethods(const ServiceMetricFamilies& families,
                          const std::vector<RpcMethod>& methods);
  absl::Status AddCatalogChildren(const ServiceMetricFamilies& families,
                                  const Options& options);
  absl::Status AddRequestChildren(const ServiceMetricFamilies& families,
                                  const Options& options);
  absl::Status AddSourceFamilies(metrics::Registry* registry);

  // Keyed by "service/method" and by bare method name.
  absl::flat_hash_map<std::string, std::unique_ptr<MethodMetrics>>
      by_full_name_;
  absl::flat_hash_map<std::string, const MethodMetrics*> by_method_;
  MethodMetrics unknown_method_;

  std::array<metrics::Counter*, kReloadResultCount> reloads_{};
  metrics::Gauge* catalog_generation_ = nullptr;
  metrics::Gauge* last_success_ = nullptr;

  std::unique_ptr<metrics::BoundedLabelTable<metrics::Counter>>
      client_requests_;
  // Used when the table cannot give a handle (never expected: values are
  // sanitized); keeps ClientRequests() non-null.
  metrics::Counter* client_requests_fallback_ = nullptr;

  std::unique_ptr<metrics::BoundedLabelTable<metrics::Counter>>
      api_requests_at_risk_;
  metrics::Counter* api_requests_at_risk_fallback_ = nullptr;
  std::array<metrics::Counter*, kAuditEventResultCount> audit_events_{};
  std::array<metrics::Counter*, kAuditBatchResultCount> audit_batches_{};
  std::array<metrics::Counter*, kAdmissionMismatchReasons.size()>
      admission_mismatch_{};
  std::array<metrics::Counter*, kCapiHooks.size() * kCapiVerdicts.size()>
      capi_hook_calls_{};

  metrics::Family<metrics::Counter>* http_requests_ = nullptr;
  metrics::Family<metrics::Histogram>* http_seconds_ = nullptr;
  mutable std::mutex http_mu_;
  // One route's series, found by the route without building a string per
  // request; its counters by HTTP status.
  struct HttpRoute {
    metrics::Histogram* seconds = nullptr;
    absl::flat_hash_map<int, metrics::Counter*> requests;
  };
  mutable absl::flat_hash_map<std::string, HttpRoute> http_routes_
      ABSL_GUARDED_BY(http_mu_);

  // Shared with the registry's callback, which may outlive this object.
  struct SourceState;
  std::shared_ptr<SourceState> source_;
};

}  // namespace compatd::runtime
