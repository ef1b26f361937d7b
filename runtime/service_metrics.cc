#include "runtime/service_metrics.h"

#include <mutex>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace compatd::runtime {

struct ServiceMetrics::SourceState {
  std::mutex mu;
  OutOfAllowanceSource source ABSL_GUARDED_BY(mu);
  OutOfAllowanceSource at_target ABSL_GUARDED_BY(mu);
  OutOfAllowanceSource blockers ABSL_GUARDED_BY(mu);
  ClientSeenSource seen ABSL_GUARDED_BY(mu);
};

namespace {

constexpr absl::string_view kUnknown = "unknown";

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
  SetClientSeenSource(nullptr);
}

// The families ServiceMetrics registers, before their children are added.
struct ServiceMetricFamilies {
  metrics::Family<metrics::Counter>* started = nullptr;
  metrics::Family<metrics::Counter>* handled = nullptr;
  metrics::Family<metrics::Histogram>* handling = nullptr;
  metrics::Family<metrics::Counter>* reloads = nullptr;
  metrics::Family<metrics::Gauge>* generation = nullptr;
  metrics::Family<metrics::Gauge>* last_success = nullptr;
  metrics::Family<metrics::Gauge>* build_info = nullptr;
  metrics::Family<metrics::Counter>* client_requests = nullptr;
  metrics::Family<metrics::Counter>* at_risk = nullptr;
  metrics::Family<metrics::Counter>* audit_events = nullptr;
  metrics::Family<metrics::Counter>* audit_batches = nullptr;
  metrics::Family<metrics::Counter>* mismatch = nullptr;
  metrics::Family<metrics::Counter>* http_requests = nullptr;
  metrics::Family<metrics::Histogram>* http_seconds = nullptr;
  metrics::Family<metrics::Counter>* capi_hook_calls = nullptr;
};

namespace {

template <typename T>
using FamilyField = metrics::Family<T>* ServiceMetricFamilies::*;

// One family of the exposition: its name, help, label names (in order) and,
// for a histogram, its buckets; `field` says where its handle goes (and so
// its type: counter, gauge or histogram).
// Label names in order; the first empty one ends them.
using Labels = std::array<absl::string_view, 4>;

std::vector<std::string> LabelNames(const Labels& labels) {
  std::vector<std::string> names;
  for (absl::string_view label : labels) {
    if (label.empty()) break;
    names.emplace_back(label);
  }
  return names;
}

struct FamilySpec {
  absl::string_view name;
  absl::string_view help;
  Labels labels;
  std::variant<FamilyField<metrics::Counter>, FamilyField<metrics::Gauge>,
               FamilyField<metrics::Histogram>>
      field;
  const std::vector<double>& (*buckets)() = nullptr;
};

using F = ServiceMetricFamilies;
// go-grpc-prometheus' families and label names, then compatd's own.
constexpr FamilySpec kFamilySpecs[] = {
    {"grpc_server_started_total",
     "Total number of RPCs started on the server.",
     {"grpc_type", "grpc_service", "grpc_method"},
     &F::started},
    {"grpc_server_handled_total",
     "Total number of RPCs completed on the server, regardless of success or "
     "failure.",
     {"grpc_type", "grpc_service", "grpc_method", "grpc_code"},
     &F::handled},
    {"grpc_server_handling_seconds",
     "Histogram of response latency (seconds) of gRPC that had been "
     "application-level handled by the server.",
     {"grpc_type", "grpc_service", "grpc_method"},
     &F::handling,
     HandlingSecondsBuckets},
    {"compatd_catalog_reloads_total",
     "Catalog reload attempts, by result: loaded (a new catalog was "
     "published), unchanged (same bytes), rejected (failed to read, parse or "
     "validate; the previous catalog keeps serving).",
     {"result"},
     &F::reloads},
    {"compatd_catalog_generation",
     "Generation of the catalog now serving (increases by one on each "
     "published catalog).",
     {},
     &F::generation},
    {"compatd_catalog_last_reload_success_timestamp_seconds",
     "Unix time of the last successful catalog load or reload check (loaded "
     "or unchanged).",
     {},
     &F::last_success},
    {"compatd_build_info",
     "Always 1; the labels give the compatd version and git revision.",
     {"version", "revision"},
     &F::build_info},
    {"compatd_client_requests_total",
     "Requests by calling client component, its version (major.minor, or "
     "unknown) and its skew verdict against the cluster's current versions. "
     "Bounded: past the bound, component and version are \"other\".",
     {"component", "version", "verdict"},
     &F::client_requests},
    {"compatd_api_requests_at_risk_total",
     "API requests seen through kube-apiserver's audit webhook whose API is "
     "at risk, by calling component, group/version, resource and verdict "
     "(not_served, removed_at_target, not_served_at_target, "
     "not_served_at_rollback, deprecated). Bounded: past the bound, "
     "component, group_version and resource are \"other\".",
     {"component", "group_version", "resource", "verdict"},
     &F::at_risk},
    {"compatd_audit_events_total",
     "Audit events read from kube-apiserver's audit webhook, by what became "
     "of them: recorded (a completed request: its client and, if at risk, "
     "its API use), skipped_stage (RequestReceived or ResponseStarted: the "
     "request is counted once, at completion), unauthenticated (401: its "
     "User-Agent is anyone's), malformed (skipped; the rest of the batch is "
     "read).",
     {"result"},
     &F::audit_events},
    {"compatd_audit_batches_total",
     "Batches posted to /audit/v1/events, by result: accepted (200), "
     "malformed (400), too_large (413), busy (429). kube-apiserver retries "
     "every refused batch, then drops it.",
     {"result"},
     &F::audit_batches},
    {"compatd_admission_catalog_mismatch_total",
     "Admission reviews of an API that the catalog says the cluster does not "
     "serve at its versions: kube-apiserver served it, so the catalog or its "
     "cluster section does not match the cluster. By the catalog's reason.",
     {"reason"},
     &F::mismatch},
    {"compatd_capi_hook_calls_total",
     "Cluster API Runtime Extension calls by hook and verdict: success, "
     "retry (Success with retryAfterSeconds: the hook blocks), blocked "
     "(Failure for what compatd found), invalid (Failure for the request).",
     {"hook", "verdict"},
     &F::capi_hook_calls},
    {"compatd_http_requests_total",
     "Requests on the HTTP front door (--http-listen) by route and HTTP "
     "status.",
     {"route", "code"},
     &F::http_requests},
    {"compatd_http_request_duration_seconds",
     "Time from a request's last byte to its answer on the HTTP front door, "
     "by route.",
     {"route"},
     &F::http_seconds,
     HandlingSecondsBuckets},
};

absl::StatusOr<ServiceMetricFamilies> AddFamilies(metrics::Registry* registry) {
  ServiceMetricFamilies families;
  for (const FamilySpec& spec : kFamilySpecs) {
    const std::vector<std::string> labels = LabelNames(spec.labels);
    if (const auto* counter =
            std::get_if<FamilyField<metrics::Counter>>(&spec.field)) {
      COMPATD_ASSIGN_OR_RETURN(
          families.*(*counter),
          registry->AddCounterFamily(spec.name, spec.help, labels));
    } else if (const auto* gauge =
                   std::get_if<FamilyField<metrics::Gauge>>(&spec.field)) {
      COMPATD_ASSIGN_OR_RETURN(
          families.*(*gauge),
          registry->AddGaugeFamily(spec.name, spec.help, labels));
    } else {
      COMPATD_ASSIGN_OR_RETURN(
          families.*std::get<FamilyField<metrics::Histogram>>(spec.field),
          registry->AddHistogramFamily(spec.name, spec.help, labels,
                                       spec.buckets()));
    }
  }
  return families;
}

// The gauges computed at scrape time from the sources the owner sets.
enum class Source {
  kOutOfAllowance,
  kAtTarget,
  kBlockers,
  kFirstSeen,
  kLastSeen
};

struct CallbackSpec {
  absl::string_view name;
  absl::string_view help;
  Labels labels;
  Source source;
};

constexpr CallbackSpec kCallbackSpecs[] = {
    {"compatd_clients_out_of_allowance",
     "Client versions seen within the idle TTL whose skew against the "
     "cluster's current versions is outside the allowance (too old or too "
     "new), by component.",
     {"component"},
     Source::kOutOfAllowance},
    {"compatd_clients_out_of_allowance_at_target",
     "Client versions seen within the idle TTL whose skew against the "
     "catalog's cluster.upgradeTarget is outside the allowance, by "
     "component (no samples without a target).",
     {"component"},
     Source::kAtTarget},
    {"compatd_upgrade_blockers",
     "What blocks the upgrade to the catalog's cluster.upgradeTarget, by "
     "kind: flags kube-apiserver would refuse (flags), APIs that stop being "
     "served (apis), clients out of allowance at the target (clients); no "
     "samples without a target.",
     {"kind"},
     Source::kBlockers},
    {"compatd_client_first_seen_timestamp_seconds",
     "When this replica first saw each client component and version still "
     "seen within the client TTL (Unix time).",
     {"component", "version"},
     Source::kFirstSeen},
    {"compatd_client_last_seen_timestamp_seconds",
     "When this replica last saw each client component and version (Unix "
     "time; version major.minor, unknown or other), for the pairs seen "
     "within the client TTL. Prometheus' max by (component, version) over "
     "the replicas is the fleet's (--prometheus-url).",
     {"component", "version"},
     Source::kLastSeen},
};

std::vector<metrics::CallbackSample> CountSamples(
    const ServiceMetrics::OutOfAllowanceSource& source) {
  std::vector<metrics::CallbackSample> samples;
  if (source == nullptr) return samples;
  for (auto& [label, count] : source()) {
    samples.push_back(metrics::CallbackSample{{std::move(label)},
                                              static_cast<double>(count)});
  }
  return samples;
}

std::vector<metrics::CallbackSample> SeenSamples(
    const ServiceMetrics::ClientSeenSource& source, bool last) {
  std::vector<metrics::CallbackSample> samples;
  if (source == nullptr) return samples;
  for (ServiceMetrics::ClientSeen& seen : source()) {
    const absl::Time at = last ? seen.last_seen : seen.first_seen;
    samples.push_back(metrics::CallbackSample{
        {std::move(seen.component), std::move(seen.version)},
        absl::ToDoubleSeconds(at - absl::UnixEpoch())});
  }
  return samples;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServiceMetrics>> ServiceMetrics::Create(
    metrics::Registry* registry, Options options) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError("service metrics need a registry");
  }
  std::unique_ptr<ServiceMetrics> metrics(new ServiceMetrics());
  COMPATD_ASSIGN_OR_RETURN(const ServiceMetricFamilies families,
                           AddFamilies(registry));
  COMPATD_RETURN_IF_ERROR(metrics->AddMethods(families, options.methods));
  COMPATD_RETURN_IF_ERROR(metrics->AddCatalogChildren(families, options));
  COMPATD_RETURN_IF_ERROR(metrics->AddRequestChildren(families, options));
  COMPATD_RETURN_IF_ERROR(metrics->AddSourceFamilies(registry));
  return metrics;
}

absl::Status ServiceMetrics::AddMethods(const ServiceMetricFamilies& families,
                                        const std::vector<RpcMethod>& methods) {
  auto resolve = [&](absl::string_view type, absl::string_view service,
                     absl::string_view method,
                     MethodMetrics* out) -> absl::Status {
    std::vector<std::string> labels = {std::string(type), std::string(service),
                                       std::string(method)};
    COMPATD_ASSIGN_OR_RETURN(out->started_, families.started->Add(labels));
    COMPATD_ASSIGN_OR_RETURN(out->handling_seconds_,
                             families.handling->Add(labels));
    labels.emplace_back();
    for (size_t code = 0; code < MethodMetrics::kCodes; ++code) {
      labels.back() =
          std::string(GrpcCodeName(static_cast<absl::StatusCode>(code)));
      COMPATD_ASSIGN_OR_RETURN(out->handled_[code],
                               families.handled->Add(labels));
    }
    return absl::OkStatus();
  };
  for (const RpcMethod& method : methods) {
    const std::string full_name =
        absl::StrCat(method.service, "/", method.method);
    if (by_full_name_.contains(full_name)) continue;
    auto handles = std::make_unique<MethodMetrics>();
    COMPATD_RETURN_IF_ERROR(resolve(RpcTypeName(method.type), method.service,
                                    method.method, handles.get()));
    by_method_.emplace(method.method, handles.get());  // first wins
    by_full_name_.emplace(full_name, std::move(handles));
  }
  // go-grpc-prometheus' splitMethodName gives "unknown" when it cannot tell.
  return resolve(RpcTypeName(RpcType::kUnary), kUnknown, kUnknown,
                 &unknown_method_);
}

absl::Status ServiceMetrics::AddCatalogChildren(
    const ServiceMetricFamilies& families, const Options& options) {
  for (ReloadResult result : {ReloadResult::kLoaded, ReloadResult::kUnchanged,
                              ReloadResult::kRejected}) {
    COMPATD_ASSIGN_OR_RETURN(
        reloads_[static_cast<size_t>(result)],
        families.reloads->Add({std::string(ReloadResultName(result))}));
  }
  COMPATD_ASSIGN_OR_RETURN(catalog_generation_, families.generation->Add({}));
  COMPATD_ASSIGN_OR_RETURN(last_success_, families.last_success->Add({}));
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Gauge * info,
      families.build_info->Add({options.version, options.revision}));
  info->Set(1);
  for (size_t i = 0; i < kAdmissionMismatchReasons.size(); ++i) {
    COMPATD_ASSIGN_OR_RETURN(
        admission_mismatch_[i],
        families.mismatch->Add({std::string(kAdmissionMismatchReasons[i])}));
  }
  for (size_t h = 0; h < kCapiHooks.size(); ++h) {
    for (size_t v = 0; v < kCapiVerdicts.size(); ++v) {
      COMPATD_ASSIGN_OR_RETURN(
          capi_hook_calls_[h * kCapiVerdicts.size() + v],
          families.capi_hook_calls->Add(
              {std::string(kCapiHooks[h]), std::string(kCapiVerdicts[v])}));
    }
  }
  http_requests_ = families.http_requests;
  http_seconds_ = families.http_seconds;
  return absl::OkStatus();
}

absl::Status ServiceMetrics::AddRequestChildren(
    const ServiceMetricFamilies& families, const Options& options) {
  const std::string other(metrics::kOverflowLabelValue);
  client_requests_ =
      std::make_unique<metrics::BoundedLabelTable<metrics::Counter>>(
          families.client_requests,
          metrics::BoundedLabelTableOptions{
              .max_label_sets = options.max_client_label_sets,
              .overflow_labels = {0, 1},
              .overflow_reserve = 4});
  COMPATD_ASSIGN_OR_RETURN(
      client_requests_fallback_,
      families.client_requests->Add(
          {other, other, std::string(ClientVerdictName(std::nullopt))}));
  api_requests_at_risk_ =
      std::make_unique<metrics::BoundedLabelTable<metrics::Counter>>(
          families.at_risk,
          metrics::BoundedLabelTableOptions{
              .max_label_sets = options.max_api_usage_label_sets,
              .overflow_labels = {0, 1, 2},
              .overflow_reserve = engine::kApiUseVerdictCount});
  COMPATD_ASSIGN_OR_RETURN(
      api_requests_at_risk_fallback_,
      families.at_risk->Add({other, other, other,
                             std::string(engine::ApiUseVerdictName(
                                 engine::ApiUseVerdict::kDeprecated))}));
  constexpr std::array<const char*, kAuditEventResultCount> kEventResults = {
      "recorded", "skipped_stage", "unauthenticated", "malformed"};
  for (size_t i = 0; i < kAuditEventResultCount; ++i) {
    COMPATD_ASSIGN_OR_RETURN(audit_events_[i],
                             families.audit_events->Add({kEventResults[i]}));
  }
  constexpr std::array<const char*, kAuditBatchResultCount> kBatchResults = {
      "accepted", "malformed", "too_large", "busy"};
  for (size_t i = 0; i < kAuditBatchResultCount; ++i) {
    COMPATD_ASSIGN_OR_RETURN(audit_batches_[i],
                             families.audit_batches->Add({kBatchResults[i]}));
  }
  return absl::OkStatus();
}

absl::Status ServiceMetrics::AddSourceFamilies(metrics::Registry* registry) {
  std::shared_ptr<SourceState> state = source_;
  for (const CallbackSpec& spec : kCallbackSpecs) {
    // Called under the lock, so that resetting a source (e.g. in the source
    // owner's destructor) waits for a scrape that is using it.
    auto samples = [state, source = spec.source]() {
      std::lock_guard<std::mutex> lock(state->mu);
      switch (source) {
        case Source::kOutOfAllowance:
          return CountSamples(state->source);
        case Source::kAtTarget:
          return CountSamples(state->at_target);
        case Source::kBlockers:
          return CountSamples(state->blockers);
        case Source::kFirstSeen:
          return SeenSamples(state->seen, /*last=*/false);
        case Source::kLastSeen:
          return SeenSamples(state->seen, /*last=*/true);
      }
      return std::vector<metrics::CallbackSample>();
    };
    COMPATD_RETURN_IF_ERROR(registry->AddCallbackFamily(
        spec.name, spec.help, metrics::MetricType::kGauge,
        LabelNames(spec.labels), std::move(samples)));
  }
  return absl::OkStatus();
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

metrics::Counter* ServiceMetrics::ApiRequestsAtRisk(
    absl::string_view component, absl::string_view group_version,
    absl::string_view resource, engine::ApiUseVerdict verdict) const {
  absl::StatusOr<metrics::Counter*> counter = api_requests_at_risk_->Get(
      {std::string(component), std::string(group_version),
       std::string(resource), std::string(engine::ApiUseVerdictName(verdict))});
  return counter.ok() ? *counter : api_requests_at_risk_fallback_;
}

void ServiceMetrics::RecordAuditEvents(AuditEventResult result,
                                       uint64_t count) const {
  if (count == 0) return;
  audit_events_[static_cast<size_t>(result)]->Increment(
      static_cast<double>(count));
}

void ServiceMetrics::RecordAuditBatch(AuditBatchResult result) const {
  audit_batches_[static_cast<size_t>(result)]->Increment();
}

void ServiceMetrics::RecordAdmissionMismatch(absl::string_view reason) const {
  for (size_t i = 0; i < kAdmissionMismatchReasons.size(); ++i) {
    if (kAdmissionMismatchReasons[i] == reason) {
      admission_mismatch_[i]->Increment();
      return;
    }
  }
}

void ServiceMetrics::RecordCapiHook(absl::string_view hook,
                                    absl::string_view verdict) const {
  for (size_t h = 0; h < kCapiHooks.size(); ++h) {
    if (kCapiHooks[h] != hook) continue;
    for (size_t v = 0; v < kCapiVerdicts.size(); ++v) {
      if (kCapiVerdicts[v] == verdict) {
        capi_hook_calls_[h * kCapiVerdicts.size() + v]->Increment();
      }
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

void ServiceMetrics::SetClientSeenSource(ClientSeenSource source) {
  std::lock_guard<std::mutex> lock(source_->mu);
  source_->seen = std::move(source);
}

void ServiceMetrics::SetClientsOutOfAllowanceSource(
    OutOfAllowanceSource source) {
  std::lock_guard<std::mutex> lock(source_->mu);
  source_->source = std::move(source);
}

}  // namespace compatd::runtime
