#include "runtime/service_metrics.h"

#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace compatd::runtime {

struct ServiceMetrics::SourceState {
  std::mutex mu;
  OutOfAllowanceSource source ABSL_GUARDED_BY(mu);
  OutOfAllowanceSource at_target ABSL_GUARDED_BY(mu);
  OutOfAllowanceSource blockers ABSL_GUARDED_BY(mu);
};

namespace {

constexpr absl::string_view kUnknown = "unknown";

// go-grpc-prometheus' label names.
const std::vector<std::string>& MethodLabels() {
  static const auto* labels =
      new std::vector<std::string>{"grpc_type", "grpc_service", "grpc_method"};
  return *labels;
}

}  // namespace

absl::string_view RpcTypeName(RpcType type) {
  switch (type) {
    case RpcType::kUnary:
      return "unary";
    case RpcType::kClientStream:
      return "client_stream";
    case RpcType::kServerStream:
      return "server_stream";
    case RpcType::kBidiStream:
      return "bidi_stream";
  }
  return "unary";
}

absl::string_view GrpcCodeName(absl::StatusCode code) {
  // grpc-go codes/code_string.go, Code.String().
  switch (code) {
    case absl::StatusCode::kOk:
      return "OK";
    case absl::StatusCode::kCancelled:
      return "Canceled";
    case absl::StatusCode::kUnknown:
      return "Unknown";
    case absl::StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case absl::StatusCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case absl::StatusCode::kNotFound:
      return "NotFound";
    case absl::StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case absl::StatusCode::kPermissionDenied:
      return "PermissionDenied";
    case absl::StatusCode::kResourceExhausted:
      return "ResourceExhausted";
    case absl::StatusCode::kFailedPrecondition:
      return "FailedPrecondition";
    case absl::StatusCode::kAborted:
      return "Aborted";
    case absl::StatusCode::kOutOfRange:
      return "OutOfRange";
    case absl::StatusCode::kUnimplemented:
      return "Unimplemented";
    case absl::StatusCode::kInternal:
      return "Internal";
    case absl::StatusCode::kUnavailable:
      return "Unavailable";
    case absl::StatusCode::kDataLoss:
      return "DataLoss";
    case absl::StatusCode::kUnauthenticated:
      return "Unauthenticated";
    default:
      return "Unknown";
  }
}

const std::vector<double>& HandlingSecondsBuckets() {
  static const auto* buckets = new std::vector<double>{
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
      0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1};
  return *buckets;
}

absl::string_view ClientVerdictName(
    std::optional<engine::SkewVerdict> verdict) {
  if (!verdict.has_value()) return "unknown";
  switch (*verdict) {
    case engine::SkewVerdict::kAllowed:
      return "allowed";
    case engine::SkewVerdict::kTooOld:
      return "too_old";
    case engine::SkewVerdict::kTooNew:
      return "too_new";
  }
  return "unknown";
}

void MethodMetrics::Handled(absl::StatusCode code,
                            absl::Duration latency) const {
  size_t index = static_cast<size_t>(code);
  if (index >= kCodes) index = static_cast<size_t>(absl::StatusCode::kUnknown);
  handled_[index]->Increment();
  handling_seconds_->Observe(absl::ToDoubleSeconds(latency));
}

ServiceMetrics::ServiceMetrics() : source_(std::make_shared<SourceState>()) {}

ServiceMetrics::~ServiceMetrics() {
  // The registry keeps the callback (and so source_) alive; make it empty.
  SetClientsOutOfAllowanceSource(nullptr);
  SetUpgradeTargetSources(nullptr, nullptr);
}

absl::StatusOr<std::unique_ptr<ServiceMetrics>> ServiceMetrics::Create(
    metrics::Registry* registry, Options options) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError("service metrics need a registry");
  }
  std::unique_ptr<ServiceMetrics> metrics(new ServiceMetrics());

  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Counter> * started,
      registry->AddCounterFamily("grpc_server_started_total",
                                 "Total number of RPCs started on the server.",
                                 MethodLabels()));
  std::vector<std::string> handled_labels = MethodLabels();
  handled_labels.push_back("grpc_code");
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Counter> * handled,
      registry->AddCounterFamily("grpc_server_handled_total",
                                 "Total number of RPCs completed on the "
                                 "server, regardless of success or failure.",
                                 handled_labels));
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Histogram> * handling,
      registry->AddHistogramFamily("grpc_server_handling_seconds",
                                   "metrics::Histogram of response latency "
                                   "(seconds) of gRPC that had been "
                                   "application-level handled by the server.",
                                   MethodLabels(), HandlingSecondsBuckets()));

  auto resolve = [&](absl::string_view type, absl::string_view service,
                     absl::string_view method,
                     MethodMetrics* out) -> absl::Status {
    std::vector<std::string> labels = {std::string(type), std::string(service),
                                       std::string(method)};
    COMPATD_ASSIGN_OR_RETURN(out->started_, started->Add(labels));
    COMPATD_ASSIGN_OR_RETURN(out->handling_seconds_, handling->Add(labels));
    labels.emplace_back();
    for (size_t code = 0; code < MethodMetrics::kCodes; ++code) {
      labels.back() =
          std::string(GrpcCodeName(static_cast<absl::StatusCode>(code)));
      COMPATD_ASSIGN_OR_RETURN(out->handled_[code], handled->Add(labels));
    }
    return absl::OkStatus();
  };
  for (const RpcMethod& method : options.methods) {
    const std::string full_name =
        absl::StrCat(method.service, "/", method.method);
    if (metrics->by_full_name_.contains(full_name)) continue;
    auto handles = std::make_unique<MethodMetrics>();
    COMPATD_RETURN_IF_ERROR(resolve(RpcTypeName(method.type), method.service,
                                    method.method, handles.get()));
    metrics->by_method_.emplace(method.method, handles.get());  // first wins
    metrics->by_full_name_.emplace(full_name, std::move(handles));
  }
  // go-grpc-prometheus' splitMethodName gives "unknown" when it cannot tell.
  COMPATD_RETURN_IF_ERROR(resolve(RpcTypeName(RpcType::kUnary), kUnknown,
                                  kUnknown, &metrics->unknown_method_));

  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Counter> * reloads,
      registry->AddCounterFamily(
          "compatd_catalog_reloads_total",
          "Catalog reload attempts, by result: loaded (a new catalog was "
          "published), unchanged (same bytes), rejected (failed to read, "
          "parse or validate; the previous catalog keeps serving).",
          {"result"}));
  for (ReloadResult result : {ReloadResult::kLoaded, ReloadResult::kUnchanged,
                              ReloadResult::kRejected}) {
    COMPATD_ASSIGN_OR_RETURN(
        metrics->reloads_[static_cast<size_t>(result)],
        reloads->Add({std::string(ReloadResultName(result))}));
  }
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Gauge> * generation,
      registry->AddGaugeFamily(
          "compatd_catalog_generation",
          "Generation of the catalog now serving (increases by one on each "
          "published catalog).",
          {}));
  COMPATD_ASSIGN_OR_RETURN(metrics->catalog_generation_, generation->Add({}));
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Gauge> * last_success,
      registry->AddGaugeFamily(
          "compatd_catalog_last_reload_success_timestamp_seconds",
          "Unix time of the last successful catalog load or reload check "
          "(loaded or unchanged).",
          {}));
  COMPATD_ASSIGN_OR_RETURN(metrics->last_success_, last_success->Add({}));
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Gauge> * build_info,
      registry->AddGaugeFamily(
          "compatd_build_info",
          "Always 1; the labels give the compatd version and git revision.",
          {"version", "revision"}));
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Gauge * info,
      build_info->Add({options.version, options.revision}));
  info->Set(1);

  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Counter> * client_requests,
      registry->AddCounterFamily(
          "compatd_client_requests_total",
          "Requests by calling client component, its version (major.minor, "
          "or unknown) and its skew verdict against the cluster's current "
          "versions. Bounded: past the bound, component and version are "
          "\"other\".",
          {"component", "version", "verdict"}));
  metrics->client_requests_ =
      std::make_unique<metrics::BoundedLabelTable<metrics::Counter>>(
          client_requests, metrics::BoundedLabelTableOptions{
                               .max_label_sets = options.max_client_label_sets,
                               .overflow_labels = {0, 1},
                               .overflow_reserve = 4});
  COMPATD_ASSIGN_OR_RETURN(
      metrics->client_requests_fallback_,
      client_requests->Add({std::string(metrics::kOverflowLabelValue),
                            std::string(metrics::kOverflowLabelValue),
                            std::string(ClientVerdictName(std::nullopt))}));

  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Counter>* const mismatch,
      registry->AddCounterFamily(
          "compatd_admission_catalog_mismatch_total",
          "Admission reviews of an API that the catalog says the cluster does "
          "not serve at its versions: kube-apiserver served it, so the "
          "catalog or its cluster section does not match the cluster. By the "
          "catalog's reason.",
          {"reason"}));
  for (size_t i = 0; i < kAdmissionMismatchReasons.size(); ++i) {
    COMPATD_ASSIGN_OR_RETURN(
        metrics->admission_mismatch_[i],
        mismatch->Add({std::string(kAdmissionMismatchReasons[i])}));
  }

  COMPATD_ASSIGN_OR_RETURN(
      metrics->http_requests_,
      registry->AddCounterFamily(
          "compatd_http_requests_total",
          "Requests on the HTTP front door (--http-listen) by route and HTTP "
          "status.",
          {"route", "code"}));
  COMPATD_ASSIGN_OR_RETURN(
      metrics->http_seconds_,
      registry->AddHistogramFamily(
          "compatd_http_request_duration_seconds",
          "Time from a request's last byte to its answer on the HTTP front "
          "door, by route.",
          {"route"}, HandlingSecondsBuckets()));

  std::shared_ptr<SourceState> state = metrics->source_;
  COMPATD_RETURN_IF_ERROR(registry->AddCallbackFamily(
      "compatd_clients_out_of_allowance",
      "Client versions seen within the idle TTL whose skew against the "
      "cluster's current versions is outside the allowance (too old or too "
      "new), by component.",
      metrics::MetricType::kGauge, {"component"},
      [state]() -> std::vector<metrics::CallbackSample> {
        // Called under the lock, so that resetting the source (e.g. in the
        // source owner's destructor) waits for a scrape that is using it.
        std::lock_guard<std::mutex> lock(state->mu);
        std::vector<metrics::CallbackSample> samples;
        if (state->source == nullptr) return samples;
        for (auto& [component, count] : state->source()) {
          samples.push_back(metrics::CallbackSample{
              {std::move(component)}, static_cast<double>(count)});
        }
        return samples;
      }));
  COMPATD_RETURN_IF_ERROR(registry->AddCallbackFamily(
      "compatd_clients_out_of_allowance_at_target",
      "Client versions seen within the idle TTL whose skew against the "
      "catalog's cluster.upgradeTarget is outside the allowance, by "
      "component (no samples without a target).",
      metrics::MetricType::kGauge, {"component"},
      [state]() -> std::vector<metrics::CallbackSample> {
        std::lock_guard<std::mutex> lock(state->mu);
        std::vector<metrics::CallbackSample> samples;
        if (state->at_target == nullptr) return samples;
        for (auto& [component, count] : state->at_target()) {
          samples.push_back(metrics::CallbackSample{
              {std::move(component)}, static_cast<double>(count)});
        }
        return samples;
      }));
  COMPATD_RETURN_IF_ERROR(registry->AddCallbackFamily(
      "compatd_upgrade_blockers",
      "What blocks the upgrade to the catalog's cluster.upgradeTarget, by "
      "kind: flags kube-apiserver would refuse (flags), APIs that stop "
      "being served (apis), clients out of allowance at the target "
      "(clients); no samples without a target.",
      metrics::MetricType::kGauge, {"kind"},
      [state]() -> std::vector<metrics::CallbackSample> {
        std::lock_guard<std::mutex> lock(state->mu);
        std::vector<metrics::CallbackSample> samples;
        if (state->blockers == nullptr) return samples;
        for (auto& [kind, count] : state->blockers()) {
          samples.push_back(metrics::CallbackSample{
              {std::move(kind)}, static_cast<double>(count)});
        }
        return samples;
      }));
  return metrics;
}

const MethodMetrics* ServiceMetrics::Method(absl::string_view service,
                                            absl::string_view method) const {
  auto it = by_full_name_.find(absl::StrCat(service, "/", method));
  return it == by_full_name_.end() ? &unknown_method_ : it->second.get();
}

const MethodMetrics* ServiceMetrics::Method(absl::string_view method) const {
  auto it = by_method_.find(method);
  return it == by_method_.end() ? &unknown_method_ : it->second;
}

void ServiceMetrics::RecordRequest(absl::string_view method,
                                   absl::StatusCode code,
                                   absl::Duration latency) const {
  const MethodMetrics* handles = Method(method);
  handles->Started();
  handles->Handled(code, latency);
}

void ServiceMetrics::RecordRequest(absl::string_view service,
                                   absl::string_view method,
                                   absl::StatusCode code,
                                   absl::Duration latency) const {
  const MethodMetrics* handles = Method(service, method);
  handles->Started();
  handles->Handled(code, latency);
}

void ServiceMetrics::RecordReload(ReloadResult result, absl::Time now) const {
  reloads_[static_cast<size_t>(result)]->Increment();
  if (result != ReloadResult::kRejected) {
    last_success_->Set(absl::ToDoubleSeconds(now - absl::UnixEpoch()));
  }
}

void ServiceMetrics::RecordCatalogPublished(uint64_t generation,
                                            absl::Time now) const {
  catalog_generation_->Set(static_cast<double>(generation));
  last_success_->Set(absl::ToDoubleSeconds(now - absl::UnixEpoch()));
}

metrics::Counter* ServiceMetrics::ClientRequests(
    absl::string_view component, absl::string_view version,
    std::optional<engine::SkewVerdict> verdict) const {
  absl::StatusOr<metrics::Counter*> counter =
      client_requests_->Get({std::string(component), std::string(version),
                             std::string(ClientVerdictName(verdict))});
  return counter.ok() ? *counter : client_requests_fallback_;
}

void ServiceMetrics::RecordClient(
    absl::string_view component, absl::string_view version,
    std::optional<engine::SkewVerdict> verdict) const {
  ClientRequests(component, version, verdict)->Increment();
}

void ServiceMetrics::RecordAdmissionMismatch(absl::string_view reason) const {
  for (size_t i = 0; i < kAdmissionMismatchReasons.size(); ++i) {
    if (kAdmissionMismatchReasons[i] == reason) {
      admission_mismatch_[i]->Increment();
      return;
    }
  }
}

void ServiceMetrics::RecordHttpRequest(absl::string_view route, int status,
                                       absl::Duration latency) const {
  metrics::Counter* counter = nullptr;
  metrics::Histogram* histogram = nullptr;
  {
    std::lock_guard<std::mutex> lock(http_mu_);
    auto it = http_routes_.find(route);
    if (it == http_routes_.end()) {
      absl::StatusOr<metrics::Histogram*> added =
          http_seconds_->Add({std::string(route)});
      if (!added.ok()) return;
      it = http_routes_.try_emplace(std::string(route)).first;
      it->second.seconds = *added;
    }
    HttpRoute& series = it->second;
    auto c = series.requests.find(status);
    if (c == series.requests.end()) {
      absl::StatusOr<metrics::Counter*> added =
          http_requests_->Add({std::string(route), absl::StrCat(status)});
      if (!added.ok()) return;
      c = series.requests.emplace(status, *added).first;
    }
    counter = c->second;
    histogram = series.seconds;
  }
  counter->Increment();
  histogram->Observe(absl::ToDoubleSeconds(latency));
}

void ServiceMetrics::SetUpgradeTargetSources(OutOfAllowanceSource at_target,
                                             OutOfAllowanceSource blockers) {
  std::lock_guard<std::mutex> lock(source_->mu);
  source_->at_target = std::move(at_target);
  source_->blockers = std::move(blockers);
}

void ServiceMetrics::SetClientsOutOfAllowanceSource(
    OutOfAllowanceSource source) {
  std::lock_guard<std::mutex> lock(source_->mu);
  source_->source = std::move(source);
}

}  // namespace compatd::runtime
