#include "service/server.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/handlers.h"
#include "api/lanes.h"
#include "base/log.h"
#include "base/work_pool.h"
#include "cluster/cluster_settings.h"
#include "cluster/profile.h"
#include "fleet/prometheus_poller.h"
#include "gateway/admission.h"
#include "gateway/gateway.h"
#include "grpcpp/ext/health_check_service_server_builder_option.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "http/metrics_handler.h"
#include "http/server.h"
#include "http/tls.h"
#include "metrics/process_metrics.h"
#include "metrics/registry.h"
#include "runtime/catalog_events.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/catalog_reloader.h"
#include "runtime/catalog_source.h"
#include "runtime/client_tracker.h"
#include "runtime/fleet_clients.h"
#include "runtime/service_metrics.h"
#include "service/connection_limit.h"
#include "service/drain.h"
#include "service/grpc_credentials.h"
#include "service/grpc_log.h"
#include "service/health_server.h"
#include "service/memory_trim.h"
#include "service/policy_service.h"
#include "service/reflection.h"
#include "service/rpc_observer.h"
#include "service/tls_monitor.h"
#include "ui/status_page.h"

namespace compatd::service {
namespace {

std::string HostOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

// The composition root: builds every part in dependency order, and tears
// them down in reverse (members are declared in that order).
class ServerImpl final : public Server {
 public:
  explicit ServerImpl(const ServerOptions& options) : options_(options) {}
  ~ServerImpl() override { Shutdown(); }

  absl::Status Init() {
    if (absl::Status s = ValidateServerOptions(options_); !s.ok()) return s;
    if (absl::Status s = InitMetrics(); !s.ok()) return s;
    if (absl::Status s = InitGrpcTls(); !s.ok()) return s;
    if (absl::Status s = StartMetricsEndpoint(); !s.ok()) return s;
    if (absl::Status s = StartGrpc(); !s.ok()) return s;
    if (absl::Status s = StartFrontDoor(); !s.ok()) return s;
    StartTlsMonitor();
    SetServing(false);
    if (absl::Status s = LoadCatalog(); !s.ok()) return s;
    SetServing(true);
    if (poller_ != nullptr) {
      poller_->Start();
      base::LogInfo(
          absl::StrCat("the fleet's clients from Prometheus at ",
                       options_.prometheus.client.url, ", refreshed every ",
                       absl::FormatDuration(options_.prometheus.refresh),
                       " (this replica's own when it does not answer)"));
    }
    return absl::OkStatus();
  }

  int port() const override { return port_; }
  int health_port() const override {
    return health_only_ == nullptr ? 0 : health_only_->port();
  }
  int metrics_port() const override {
    return metrics_server_ == nullptr ? 0 : metrics_server_->port();
  }
  int http_port() const override {
    return http_server_ == nullptr ? 0 : http_server_->port();
  }

  void TriggerReload() override {
    if (options_.catalog_paths.empty()) return;  // the embedded catalogs
    base::LogInfo("SIGHUP: reloading the catalog");
    for (const auto& reloader : reloaders_) reloader->TriggerReload();
  }

  void Shutdown() override {
    std::lock_guard<std::mutex> lock(shutdown_mu_);
    if (shut_down_) return;
    shut_down_ = true;
    if (grpc_server_ == nullptr) return;
    base::LogInfo(
        absl::StrCat("shutting down: NOT_SERVING, draining calls for up to ",
                     absl::FormatDuration(options_.shutdown_grace)));
    // Health first, so load balancers stop sending before the listener goes
    // away.
    if (health_ != nullptr) health_->Shutdown();
    events_.Close();
    DrainGrpcServer(grpc_server_.get(), unary_calls_in_flight_,
                    options_.shutdown_grace);
    // Heavy work still queued or running (each within its budget) answers
    // before the HTTP ports close; new heavy calls are refused.
    heavy_->Stop();
    if (health_only_ != nullptr) health_only_->Shutdown();
    if (tls_monitor_ != nullptr) tls_monitor_->Stop();
    for (const auto& reloader : reloaders_) reloader->Stop();
    if (poller_ != nullptr) poller_->Stop();
    if (http_server_ != nullptr) http_server_->Stop();
    if (metrics_server_ != nullptr) metrics_server_->Stop();
    base::LogInfo("stopped");
  }

 private:
  // The registry's families, the catalog pipeline, the client tracker and
  // the API's handlers over them.
  absl::Status InitMetrics() {
    runtime::ServiceMetrics::Options metric_options;
    metric_options.methods = ServedMethods();
    metric_options.version = COMPATD_VERSION;
    metric_options.revision = COMPATD_REVISION;
    metric_options.max_client_label_sets =
        static_cast<size_t>(options_.max_client_series);
    metric_options.max_api_usage_label_sets =
        static_cast<size_t>(options_.max_client_series);
    absl::StatusOr<std::unique_ptr<runtime::ServiceMetrics>> created =
        runtime::ServiceMetrics::Create(&registry_, std::move(metric_options));
    if (!created.ok()) return created.status();
    metrics_ = *std::move(created);
    if (absl::Status s = InitPipeline(); !s.ok()) return s;
    if (absl::Status s = RegisterCatalogMetrics(); !s.ok()) return s;
    if (absl::Status s = InitClients(); !s.ok()) return s;
    InitService();
    return RegisterServerMetrics();
  }

  // The catalog pipeline over --catalog's files (or the embedded catalogs),
  // its default line --binary-version.
  absl::Status InitPipeline() {
    runtime::CatalogPipeline::Options pipeline_options;
    pipeline_options.derive = api::DeriveAnswers;
    if (options_.catalog_paths.empty()) {
      sources_ = runtime::NewEmbeddedCatalogSources();
    } else {
      for (const std::string& path : options_.catalog_paths) {
        absl::StatusOr<std::vector<std::string>> files =
            runtime::ListCatalogFiles(path);
        if (!files.ok()) {
          return absl::Status(
              files.status().code(),
              absl::StrCat("--catalog: ", files.status().message()));
        }
        for (std::string& file : *files) {
          sources_.push_back(runtime::NewFileCatalogSource(std::move(file)));
        }
      }
    }
    pipeline_options.sources = sources_.size();
    if (!options_.binary_version.empty()) {
      uint64_t major = 0, minor = 0;
      if (!engine::Version::ParseMajorMinorNoAlloc(options_.binary_version,
                                                   &major, &minor)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--binary-version \"", options_.binary_version,
            "\": not a version; expected a kube-apiserver release line such "
            "as \"1.34\""));
      }
      pipeline_options.default_line = engine::Version::MajorMinor(major, minor);
    }
    pipeline_options.metrics = metrics_.get();
    pipeline_options.events = &events_;
    pipeline_ =
        std::make_unique<runtime::CatalogPipeline>(std::move(pipeline_options));
    return absl::OkStatus();
  }

  // compatd_catalog_info, the certificates' expiry, the process's families.
  absl::Status RegisterCatalogMetrics() {
    // Which catalog each replica serves, comparable across replicas
    // (generations count loads per process; the digest names the content).
    if (absl::Status s = registry_.AddCallbackFamily(
            "compatd_catalog_info",
            "The catalog now serving: its digest (sha256 of its bytes), "
            "source and binaryVersion. Always 1.",
            metrics::MetricType::kGauge, {"digest", "source", "binary_version"},
            [this]() -> std::vector<metrics::CallbackSample> {
              const auto snapshot = pipeline_->Current();
              if (snapshot == nullptr) return {};
              std::vector<metrics::CallbackSample> samples;
              for (const runtime::ServingLine& line : snapshot->lines) {
                const engine::Catalog& c = *line.catalog;
                samples.push_back(metrics::CallbackSample{
                    {c.digest, c.source, c.binary_version.ToString()}, 1});
              }
              return samples;
            });
        !s.ok()) {
      return s;
    }
    // When each certificate in force expires, so that a rotation that did
    // not happen is seen before clients fail (k8s/monitoring alerts on it).
    if (absl::Status s = registry_.AddCallbackFamily(
            "compatd_tls_certificate_expiry_timestamp_seconds",
            "When each TLS certificate in force expires (notAfter, Unix "
            "time), per listener and file: cert (the chain, leaf first) or "
            "client_ca (at most 100 per file, the first to expire).",
            metrics::MetricType::kGauge,
            {"listener", "file", "subject", "serial"},
            [this]() { return CertificateExpirySamples(); });
        !s.ok()) {
      return s;
    }
    return metrics::RegisterProcessMetrics(&registry_);
  }

  // The client tracker, over the fleet's clients with --prometheus-url.
  absl::Status InitClients() {
    runtime::ClientTracker::Options tracker_options;
    tracker_options.max_entries =
        static_cast<size_t>(options_.max_client_series);
    tracker_options.idle_ttl = options_.client_ttl;
    if (!options_.prometheus.client.url.empty()) {
      // The fleet's clients: an answer is used while the last refresh
      // succeeded and for two refreshes and a timeout at most.
      fleet_ = std::make_unique<runtime::FleetClients>(
          runtime::FleetClients::Options{
              .source = absl::StrCat("Prometheus at ",
                                     options_.prometheus.client.url),
              .max_age = 2 * options_.prometheus.refresh +
                         options_.prometheus.client.timeout});
      fleet::PrometheusPollerOptions poller_options = options_.prometheus;
      poller_options.queries.client_ttl = options_.client_ttl;
      poller_ = std::make_unique<fleet::PrometheusPoller>(
          std::move(poller_options), fleet_.get(), &registry_);
      if (absl::Status s = poller_->Init(); !s.ok()) return s;
      tracker_options.fleet = fleet_.get();
    }
    clients_ = std::make_unique<runtime::ClientTracker>(
        &pipeline_->store(), metrics_.get(), tracker_options);
    return absl::OkStatus();
  }

  // The API's handlers and the gRPC service over them, with their bounds.
  void InitService() {
    api::RequestLimits limits = options_.limits;
    limits.max_answer_bytes =
        static_cast<size_t>(options_.max_send_message_bytes);
    runtime::ApiUsageTracker::Options usage_options;
    usage_options.max_rows = static_cast<size_t>(options_.max_api_usage_rows);
    usage_options.idle_ttl = options_.api_usage_ttl;
    usage_ = std::make_unique<runtime::ApiUsageTracker>(metrics_.get(),
                                                        usage_options);
    handlers_ = std::make_unique<api::PolicyHandlers>(&events_, clients_.get(),
                                                      limits, usage_.get());
    observer_ =
        std::make_unique<RecordingObserver>(metrics_.get(), clients_.get());
    // A client has as long to take an answer as a call may last.
    backlog_ = std::make_unique<AnswerBacklog>(
        options_.max_answer_backlog_bytes, limits.max_call_duration);
    connections_ = std::make_unique<ConnectionLimit>(options_.max_connections);
    PolicyService::Options service_options;
    service_options.max_answer_bytes =
        static_cast<size_t>(options_.max_send_message_bytes);
    service_options.backlog = backlog_.get();
    service_options.calls_in_flight = &unary_calls_in_flight_;
    heavy_ = std::make_unique<base::WorkPool>(base::WorkPool::Options{
        "heavy", options_.heavy_workers, options_.heavy_queue});
    service_options.heavy = heavy_.get();
    service_options.heavy_work_time = options_.heavy_work_time;
    service_ = std::make_unique<PolicyService>(
        handlers_.get(), &events_, &pipeline_->store(), observer_.get(),
        service_options);
  }

  // What bounds the gRPC port under load or abuse (README, "Limits and bad
  // input").
  absl::Status RegisterServerMetrics() {
    if (absl::Status s = registry_.AddCallbackValue(
            "compatd_grpc_connections",
            "Open connections of the gRPC port, including those still in "
            "their handshake (--max-connections).",
            metrics::MetricType::kGauge,
            [this]() -> std::optional<double> {
              return connections_->Count();
            });
        !s.ok()) {
      return s;
    }
    if (absl::Status s = registry_.AddCallbackValue(
            "compatd_grpc_connections_refused_total",
            "Connections of the gRPC port closed at once because "
            "--max-connections were open.",
            metrics::MetricType::kCounter,
            [this]() -> std::optional<double> {
              return static_cast<double>(connections_->refused());
            });
        !s.ok()) {
      return s;
    }
    if (absl::Status s = registry_.AddCallbackValue(
            "compatd_answer_backlog_bytes",
            "Bytes of answers handed to gRPC and not yet taken by their "
            "clients (--max-answer-backlog-bytes).",
            metrics::MetricType::kGauge,
            [this]() -> std::optional<double> {
              return static_cast<double>(backlog_->bytes());
            });
        !s.ok()) {
      return s;
    }
    if (absl::Status s = RegisterLaneMetrics(); !s.ok()) return s;
    if (absl::Status s = registry_.AddCallbackValue(
            "compatd_http_memory_bytes",
            "Bytes of request bodies and unwritten answers in flight on the "
            "HTTP ports (--max-http-memory-bytes).",
            metrics::MetricType::kGauge,
            [this]() -> std::optional<double> {
              return static_cast<double>(http_memory_.bytes());
            });
        !s.ok()) {
      return s;
    }
    if (absl::Status s = registry_.AddCallbackValue(
            "compatd_http_memory_refused_total",
            "HTTP requests and answers refused with 429 because they would "
            "pass --max-http-memory-bytes.",
            metrics::MetricType::kCounter,
            [this]() -> std::optional<double> {
              return static_cast<double>(http_memory_.refused());
            });
        !s.ok()) {
      return s;
    }
    return registry_.AddCallbackValue(
        "compatd_answers_timed_out_total",
        "Answers cancelled because their client had not taken them within "
        "--max-call-duration.",
        metrics::MetricType::kCounter, [this]() -> std::optional<double> {
          return static_cast<double>(backlog_->timed_out());
        });
  }

  // Each lane's pool: calls running, waiting, refused (api/lanes.h). The
  // light lane runs on the transports' own threads and has no pool.
  absl::Status RegisterLaneMetrics() {
    struct Family {
      const char* name;
      const char* help;
      metrics::MetricType type;
      double (*value)(const base::WorkPool&);
    };
    static constexpr Family kFamilies[] = {
        {"compatd_lane_running",
         "Calls running in each lane's pool (--heavy-workers).",
         metrics::MetricType::kGauge,
         [](const base::WorkPool& p) { return double(p.running()); }},
        {"compatd_lane_queued",
         "Calls waiting for a thread of each lane's pool (--heavy-queue).",
         metrics::MetricType::kGauge,
         [](const base::WorkPool& p) { return double(p.queued()); }},
        {"compatd_lane_rejected_total",
         "Calls refused at once because their lane's pool and queue were "
         "full (gRPC RESOURCE_EXHAUSTED, HTTP 429), both ports.",
         metrics::MetricType::kCounter,
         [](const base::WorkPool& p) { return double(p.rejected()); }},
    };
    for (const Family& family : kFamilies) {
      if (absl::Status s = registry_.AddCallbackFamily(
              family.name, family.help, family.type, {"lane"},
              [this, value = family.value]() {
                return std::vector<metrics::CallbackSample>{
                    {{std::string(api::LaneName(api::Lane::kHeavy))},
                     value(*heavy_)}};
              });
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  // An HTTP port (--metrics-listen, --http-listen) on the Beast server, with
  // its own TLS files.
  absl::Status StartHttpPort(const std::string& address,
                             const std::string& flag,
                             const http::TlsFiles& files,
                             const std::string& tls_flag,
                             http::AsyncHandler handler,
                             std::unique_ptr<http::TlsFileContext>* tls,
                             std::unique_ptr<http::Server>* server) {
    http::Server::Options http_options;
    http_options.address = address;
    http_options.flag = flag;
    http_options.max_body_bytes =
        static_cast<size_t>(options_.max_http_body_bytes);
    http_options.max_connections = options_.max_http_connections;
    http_options.memory = &http_memory_;
    if (flag == "--http-listen") {
      http_options.path_body_limits.push_back(
          {gateway::kAdmissionPath,
           static_cast<size_t>(options_.max_admission_body_bytes),
           "--max-admission-body-bytes", nullptr});
      if (audit_ != nullptr) {
        // The front door's bound, with the audit view told of each refusal
        // (counted and logged: kube-apiserver drops the batch silently).
        const std::string bound = absl::StrCat("--max-http-body-bytes=",
                                               options_.max_http_body_bytes);
        http_options.path_body_limits.push_back(
            {gateway::kAuditPath,
             static_cast<size_t>(options_.max_http_body_bytes),
             "--max-http-body-bytes",
             [audit = audit_.get(), bound](uint64_t length) {
               audit->RefusedBeforeRead(length, bound);
             }});
      }
    }
    if (files.enabled()) {
      absl::StatusOr<std::unique_ptr<http::TlsFileContext>> context =
          http::TlsFileContext::Create(files, options_.tls_refresh_interval,
                                       tls_flag);
      if (!context.ok()) return context.status();
      *tls = *std::move(context);
      http_options.tls = tls->get();
    }
    absl::StatusOr<std::unique_ptr<http::Server>> started =
        http::Server::Start(std::move(http_options), std::move(handler));
    if (!started.ok()) return started.status();
    *server = *std::move(started);
    return absl::OkStatus();
  }

  // The gRPC port's certificate files, read and checked by compatd, and
  // handed to gRPC as memory files (service/grpc_credentials.h says why).
  absl::Status InitGrpcTls() {
    if (!options_.tls.enabled()) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<http::TlsFileContext>> context =
        http::TlsFileContext::Create(options_.tls,
                                     options_.tls_refresh_interval, "--tls");
    if (!context.ok()) return context.status();
    grpc_tls_ = *std::move(context);
    absl::StatusOr<std::unique_ptr<GrpcTlsFiles>> files =
        GrpcTlsFiles::Create(grpc_tls_.get());
    if (!files.ok()) return files.status();
    grpc_tls_files_ = *std::move(files);
    return absl::OkStatus();
  }

  std::shared_ptr<grpc::ServerCredentials> GrpcCredentials() const {
    if (grpc_tls_files_ == nullptr) return GrpcInsecureCredentials();
    return grpc_tls_files_->Credentials(options_.tls_refresh_interval);
  }

  std::vector<metrics::CallbackSample> CertificateExpirySamples() {
    constexpr size_t kMaxPerFile = 100;
    std::vector<metrics::CallbackSample> samples;
    std::lock_guard<std::mutex> lock(tls_sources_mu_);
    for (const auto& [listener, context] : tls_sources_) {
      std::vector<http::CertificateInfo> certs = context->certificates();
      std::stable_sort(
          certs.begin(), certs.end(),
          [](const http::CertificateInfo& a, const http::CertificateInfo& b) {
            return a.not_after < b.not_after;
          });
      std::set<std::vector<std::string>> seen;
      std::map<std::string, size_t> per_file;
      for (const http::CertificateInfo& cert : certs) {
        std::vector<std::string> labels = {listener, cert.file, cert.subject,
                                           cert.serial};
        if (per_file[cert.file] >= kMaxPerFile || !seen.insert(labels).second) {
          continue;
        }
        ++per_file[cert.file];
        samples.push_back(
            {std::move(labels),
             absl::ToDoubleSeconds(cert.not_after - absl::UnixEpoch())});
      }
    }
    return samples;
  }

  // Every refresh interval, the certificate files of each TLS listener.
  void StartTlsMonitor() {
    {
      std::lock_guard<std::mutex> lock(tls_sources_mu_);
      if (grpc_tls_ != nullptr)
        tls_sources_.push_back({"grpc", grpc_tls_.get()});
      if (metrics_tls_ != nullptr) {
        tls_sources_.push_back({"metrics", metrics_tls_.get()});
      }
    }
    std::vector<TlsMonitor::Listener> listeners;
    if (grpc_tls_ != nullptr) {
      listeners.push_back({"grpc", grpc_tls_.get(), [this] {
                             // Errors are logged by the context; the
                             // memory files keep the previous pair.
                             (void)grpc_tls_files_->Update();
                           }});
    }
    if (metrics_tls_ != nullptr) {
      listeners.push_back({"metrics", metrics_tls_.get(), nullptr});
    }
    if (http_tls_ != nullptr) {
      listeners.push_back({"http", http_tls_.get(), nullptr});
    }
    tls_monitor_ = std::make_unique<TlsMonitor>(std::move(listeners),
                                                options_.tls_refresh_interval);
    tls_monitor_->Start();
  }

  absl::Status StartMetricsEndpoint() {
    if (options_.metrics_listen.empty()) return absl::OkStatus();
    if (absl::Status s = StartHttpPort(
            options_.metrics_listen, "--metrics-listen", options_.metrics_tls,
            "--metrics-tls", http::Inline(http::MetricsHandler(&registry_)),
            &metrics_tls_, &metrics_server_);
        !s.ok()) {
      return s;
    }
    base::LogInfo(absl::StrCat(options_.metrics_tls.enabled()
                                   ? "metrics on https://"
                                   : "metrics on http://",
                               HostOf(options_.metrics_listen), ":",
                               metrics_server_->port(), "/metrics",
                               options_.metrics_tls.enabled() &&
                                       !options_.metrics_tls.client_ca.empty()
                                   ? " (client certificates required)"
                                   : ""));
    return absl::OkStatus();
  }

  // The HTTPS/JSON front door (gateway/gateway.h).
  absl::Status StartFrontDoor() {
    if (options_.http_listen.empty()) return absl::OkStatus();
    if (options_.ui) {
      ui::StatusPage::Options ui_options;
      ui_options.started = started_;
      ui_options.capi_verdicts = &capi_verdicts_;
      status_page_ =
          std::make_unique<ui::StatusPage>(handlers_.get(), ui_options);
    }
    if (options_.audit) {
      gateway::AuditIngest::Options audit_options;
      audit_options.max_batch_events =
          static_cast<size_t>(options_.audit_max_batch_events);
      audit_options.max_batch_bytes =
          static_cast<size_t>(options_.audit_max_batch_bytes);
      audit_options.max_concurrent_batches =
          options_.audit_max_concurrent_batches;
      audit_options.max_queued_batches = options_.audit_max_queued_batches;
      // Checked by ValidateServerOptions.
      audit_options.user_names =
          runtime::ParseUserNames(options_.audit_user_names)
              .value_or(runtime::UserNames::kServiceAccounts);
      audit_ = std::make_unique<gateway::AuditIngest>(
          clients_.get(), usage_.get(), metrics_.get(), audit_options);
    }
    gateway_ = std::make_unique<gateway::Gateway>(
        handlers_.get(), &pipeline_->store(), clients_.get(), metrics_.get(),
        status_page_.get(),
        static_cast<size_t>(options_.gatekeeper_cache_bytes),
        gateway::HeavyLane{heavy_.get(), options_.heavy_work_time},
        audit_.get(), &capi_verdicts_);
    if (absl::Status s = StartHttpPort(
            options_.http_listen, "--http-listen", options_.http_tls,
            "--http-tls", gateway_->AsHandler(), &http_tls_, &http_server_);
        !s.ok()) {
      return s;
    }
    base::LogInfo(absl::StrCat(
        options_.http_tls.enabled() ? "HTTPS/JSON on https://"
                                    : "HTTP/JSON on http://",
        HostOf(options_.http_listen), ":", http_server_->port(),
        " (/v1/<RPC>, /admission/v1/validate, /gatekeeper/v1, "
        "/hooks.runtime.cluster.x-k8s.io/v1alpha1/",
        options_.audit ? ", /audit/v1/events" : "",
        options_.ui ? ", the status page at /ui/)" : ")",
        options_.http_tls.enabled() && !options_.http_tls.client_ca.empty()
            ? " (client certificates required)"
            : ""));
    return absl::OkStatus();
  }

  // The --listen port (the API, health, reflection) and --health-listen.
  absl::Status StartGrpc() {
    RouteProtobufLogs();
    absl::StatusOr<std::vector<std::unique_ptr<grpc::Service>>> reflection =
        CreateReflectionServices({std::string(kPolicyServiceName),
                                  "grpc.health.v1.Health",
                                  "grpc.reflection.v1.ServerReflection",
                                  "grpc.reflection.v1alpha.ServerReflection"});
    if (!reflection.ok()) return reflection.status();
    reflection_ = *std::move(reflection);
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(options_.listen, GrpcCredentials(), &port_);
    // gRPC sets SO_REUSEPORT by default, so a second compatd on the same
    // address would start and take half the connections: a port in use must
    // be a start-up error instead.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    builder.SetMaxReceiveMessageSize(options_.max_recv_message_bytes);
    // PolicyService checks its answers' size itself, with a better message.
    builder.SetMaxSendMessageSize(-1);
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                               options_.max_concurrent_streams);
    // gRPC 1.51 reads a request message whole before it checks its size (a
    // length prefix of 1 GiB was buffered as it arrived): its memory quota
    // bounds what all connections can make it hold; past it, gRPC cancels
    // streams (RST_STREAM ENHANCE_YOUR_CALM). The quota outlives the server.
    quota_.Resize(static_cast<size_t>(options_.grpc_memory_bytes));
    builder.SetResourceQuota(quota_);
    builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                               static_cast<int>(absl::ToInt64Milliseconds(
                                   options_.handshake_timeout)));
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_IDLE_MS,
        static_cast<int>(std::min<int64_t>(
            absl::ToInt64Milliseconds(options_.max_connection_idle), INT_MAX)));
    builder.SetOption(connections_->BuilderOption());
    builder.RegisterService(service_.get());
    for (const auto& service : reflection_)
      builder.RegisterService(service.get());
    std::vector<
        std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(NewUnaryCallCounter(&unary_calls_in_flight_));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
    grpc_server_ = builder.BuildAndStart();
    if (grpc_server_ == nullptr || port_ == 0) {
      return absl::UnavailableError(absl::StrCat(
          "cannot listen on --listen=", options_.listen,
          " (address in use, or not a host:port this machine has?)"));
    }
    health_ = grpc_server_->GetHealthCheckService();
    // gRPC's default health service answers SERVING for "" from the start:
    // NOT_SERVING until the first catalog is published, before the port is
    // announced, so that nothing which waits for SERVING beats the catalog.
    SetServing(false);
    base::LogInfo(
        absl::StrCat("gRPC listening on ", HostOf(options_.listen), ":", port_,
                     !options_.tls.enabled()          ? " (plaintext)"
                     : options_.tls.client_ca.empty() ? " (TLS)"
                                                      : " (mutual TLS)"));
    if (options_.health_listen.empty()) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<HealthOnlyServer>> health_only =
        HealthOnlyServer::Start(options_.health_listen);
    if (!health_only.ok()) return health_only.status();
    health_only_ = *std::move(health_only);
    SetServing(false);
    base::LogInfo(absl::StrCat(
        "gRPC health (grpc.health.v1 only, plaintext) on ",
        HostOf(options_.health_listen), ":", health_only_->port()));
    return absl::OkStatus();
  }

  // The cluster profile (--cluster, watched like a catalog, or
  // --cluster-version/--upgrade-target alone), put in force before the
  // catalogs load so that the first publish already answers for it.
  absl::Status LoadClusterProfile() {
    cluster::ReadOptions read;
    read.binary_version = options_.cluster_version;
    read.upgrade_target = options_.upgrade_target;
    if (!options_.cluster_path.empty()) {
      runtime::CatalogReloader::Options reload_options;
      reload_options.source =
          runtime::NewFileCatalogSource(options_.cluster_path);
      reload_options.interval = options_.reload_interval;
      reload_options.cluster_profile = true;
      reload_options.profile_options = std::move(read);
      absl::StatusOr<std::unique_ptr<runtime::CatalogReloader>> reloader =
          runtime::CatalogReloader::Create(std::move(reload_options),
                                           pipeline_.get());
      if (!reloader.ok()) {
        return absl::Status(
            reloader.status().code(),
            absl::StrCat("--cluster: ", reloader.status().message()));
      }
      reloaders_.push_back(*std::move(reloader));
      return absl::OkStatus();
    }
    if (read.binary_version.empty()) return absl::OkStatus();
    absl::StatusOr<cluster::ClusterProfile> profile =
        cluster::ProfileFromFlags(read);
    if (!profile.ok()) return profile.status();
    absl::StatusOr<engine::ClusterSettings> settings =
        cluster::ToClusterSettings(*profile);
    if (!settings.ok()) return settings.status();
    absl::StatusOr<std::shared_ptr<const runtime::ServingSnapshot>> set =
        pipeline_->SetCluster(std::make_shared<const engine::ClusterSettings>(
                                  *std::move(settings)),
                              /*initial=*/true);
    return set.status();
  }

  // The embedded catalogs or the --catalog files, through the one pipeline.
  absl::Status LoadCatalog() {
    if (absl::Status profile = LoadClusterProfile(); !profile.ok()) {
      return profile;
    }
    for (size_t i = 0; i < sources_.size(); ++i) {
      runtime::CatalogReloader::Options reload_options;
      reload_options.source = std::move(sources_[i]);
      reload_options.interval = options_.reload_interval;
      reload_options.slot = i;
      absl::StatusOr<std::unique_ptr<runtime::CatalogReloader>> reloader =
          runtime::CatalogReloader::Create(std::move(reload_options),
                                           pipeline_.get());
      if (!reloader.ok()) {
        if (options_.catalog_paths.empty()) {
          return absl::InternalError(
              absl::StrCat("the embedded catalog does not load: ",
                           reloader.status().message()));
        }
        return reloader.status();
      }
      reloaders_.push_back(*std::move(reloader));
    }
    sources_.clear();
    for (const auto& reloader : reloaders_) reloader->Start();
    const auto current = pipeline_->Current();
    if (current == nullptr) {
      return absl::InternalError("no catalog was published");
    }
    for (const runtime::ServingLine& line : current->lines) {
      base::LogInfo(absl::StrCat(
          "serving catalog ", line.catalog->source, " (kube-apiserver ",
          line.catalog->binary_version.ToString(), ") ", line.catalog->digest,
          line.catalog.get() == &current->default_catalog()
              ? " (the default line)"
              : ""));
    }
    if (const auto cluster = pipeline_->cluster()) {
      base::LogInfo(absl::StrCat(
          "cluster profile ", cluster->source, ": kube-apiserver ",
          cluster->binary->ToString(),
          cluster->upgrade_target.has_value()
              ? absl::StrCat(", upgrade target ",
                             cluster->upgrade_target->binary_version)
              : std::string()));
    }
    base::LogInfo(absl::StrCat("generation ", current->generation));
    return absl::OkStatus();
  }

  void SetServing(bool serving) {
    if (health_ != nullptr) {
      health_->SetServingStatus(serving);
      health_->SetServingStatus(std::string(kPolicyServiceName), serving);
    }
    if (health_only_ != nullptr) {
      health_only_->SetServing(serving, std::string(kPolicyServiceName));
    }
  }

  const ServerOptions options_;
  // Declared before everything that reads them, so they are destroyed last.
  metrics::Registry registry_;
  std::unique_ptr<runtime::ServiceMetrics> metrics_;
  runtime::CatalogEvents events_;
  std::unique_ptr<runtime::CatalogPipeline> pipeline_;
  // The fleet's clients (--prometheus-url); outlive the tracker that reads
  // them, the poller stops before they go.
  std::unique_ptr<runtime::FleetClients> fleet_;
  std::unique_ptr<fleet::PrometheusPoller> poller_;
  std::unique_ptr<runtime::ClientTracker> clients_;
  std::unique_ptr<runtime::ApiUsageTracker> usage_;
  std::unique_ptr<api::PolicyHandlers> handlers_;
  std::unique_ptr<RecordingObserver> observer_;
  std::unique_ptr<AnswerBacklog> backlog_;
  // The heavy lane; stopped in Shutdown() before the ports close, destroyed
  // after them.
  std::unique_ptr<base::WorkPool> heavy_;
  std::unique_ptr<ConnectionLimit> connections_;
  grpc::ResourceQuota quota_{"compatd"};
  std::unique_ptr<PolicyService> service_;
  std::vector<std::unique_ptr<grpc::Service>> reflection_;
  // The gRPC port's TLS files; outlive the gRPC server, which reads the
  // memory files until it is gone.
  std::unique_ptr<http::TlsFileContext> grpc_tls_;
  std::unique_ptr<GrpcTlsFiles> grpc_tls_files_;
  // Shared by both HTTP ports; outlives them.
  http::MemoryBudget http_memory_{options_.max_http_memory_bytes};
  std::unique_ptr<http::TlsFileContext> metrics_tls_;  // outlives its server
  std::unique_ptr<http::Server> metrics_server_;
  const absl::Time started_ = absl::Now();
  std::unique_ptr<ui::StatusPage> status_page_;  // outlives the gateway
  std::unique_ptr<gateway::AuditIngest> audit_;
  // The last Cluster API hook verdict per cluster (the gateway writes, the
  // status page reads).
  runtime::CapiVerdicts capi_verdicts_;
  std::unique_ptr<gateway::Gateway> gateway_;
  std::unique_ptr<http::TlsFileContext> http_tls_;  // outlives its server
  std::unique_ptr<http::Server> http_server_;
  // Unary calls on grpc_server_ (NewUnaryCallCounter); outlives it.
  std::atomic<int> unary_calls_in_flight_{0};
  std::unique_ptr<grpc::Server> grpc_server_;
  grpc::HealthCheckServiceInterface* health_ = nullptr;
  std::unique_ptr<HealthOnlyServer> health_only_;
  // The catalog sources until LoadCatalog() hands them to their reloaders.
  std::vector<std::unique_ptr<runtime::CatalogSource>> sources_;
  // One per catalog source (file or embedded line).
  std::vector<std::unique_ptr<runtime::CatalogReloader>> reloaders_;
  std::unique_ptr<TlsMonitor> tls_monitor_;  // reads grpc_tls_, metrics_tls_
  // The TLS listeners' contexts, for the expiry metric (scraped from
  // another thread once /metrics serves).
  std::mutex tls_sources_mu_;
  std::vector<std::pair<std::string, http::TlsFileContext*>> tls_sources_
      ABSL_GUARDED_BY(tls_sources_mu_);
  MemoryTrimmer trimmer_;
  int port_ = 0;

  std::mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(
    const ServerOptions& options) {
  auto server = std::make_unique<ServerImpl>(options);
  absl::Status status = server->Init();
  if (!status.ok()) return status;
  return std::unique_ptr<Server>(std::move(server));
}

namespace {

// Takes SIGTERM, SIGINT and SIGHUP (blocked in every thread) while the server
// starts: SIGTERM or SIGINT end the process at once (exit 0: nothing was
// served, nothing to drain), SIGHUP is moot (the catalog is being loaded).
// Destroying it stops the thread; signals from then on stay pending for
// RunServer's loop.
class StartupSignals final {
 public:
  explicit StartupSignals(const sigset_t& signals)
      : signals_(signals), thread_([this] { Run(); }) {}
  ~StartupSignals() {
    stop_.store(true);
    // Ends the sigtimedwait() at once (a signal directed at that thread; a
    // real SIGHUP at the same moment may be taken for it, harmlessly).
    pthread_kill(thread_.native_handle(), SIGHUP);
    thread_.join();
  }
  StartupSignals(const StartupSignals&) = delete;
  StartupSignals& operator=(const StartupSignals&) = delete;

 private:
  void Run() {
    while (!stop_.load()) {
      const timespec tick = {1, 0};
      const int signal_number = sigtimedwait(&signals_, nullptr, &tick);
      if (stop_.load()) return;
      if (signal_number == SIGTERM || signal_number == SIGINT) {
        base::LogInfo(absl::StrCat(
            "received ", signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
            " during start-up: exiting without serving"));
        base::FlushSuppressedLogs(/*all=*/true);
        _exit(0);
      }
    }
  }

  const sigset_t signals_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

int RunServer(const ServerOptions& options) {
  // glibc's allocator raises its mmap threshold (up to 32 MiB) each time a
  // large block is freed, after which such blocks come from the heap and their
  // pages stay with the process when freed: under mixed load with a catalog
  // reload every 200 ms, RSS crept from 47 to 59 MiB in ten minutes while the
  // live heap stayed at about 4 MB (make soak; malloc_trim gave it back).
  // Fixed thresholds keep large blocks on mmap and trim the heap top at 128
  // KiB (glibc's initial values), so RSS follows what is in use.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);

  // A write to a closed socket or pipe (stderr piped into a log collector
  // that went away, a peer gone) must be an error return (EPIPE), not the
  // end of the process. civetweb used to do this for us, but only when
  // /metrics was on.
  signal(SIGPIPE, SIG_IGN);
  // gRPC's own lines (one per failed TLS handshake) rate-limited with ours.
  RouteGrpcLogsThroughCompatdLog();

  // Signals are taken by sigwait() below; every thread started from here
  // inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<std::unique_ptr<Server>> server;
  {
    // Start-up may take a while (a catalog still being written is waited
    // for, --listen may need a name lookup) and SIGTERM must work from the
    // first instant: a thread takes the signals until the server is up.
    StartupSignals startup_signals(signals);
    server = Server::Start(options);
  }
  if (!server.ok()) {
    base::LogError(absl::StrCat("cannot start: ", server.status().message()));
    return 1;
  }
  while (true) {
    // Every few seconds, the summaries of rate-limited log lines whose window
    // is over (base/log.h), so that a flood's count is not left unwritten
    // until the next line.
    const timespec flush_every = {5, 0};
    const int signal_number = sigtimedwait(&signals, nullptr, &flush_every);
    if (signal_number < 0) {
      base::FlushSuppressedLogs();
      continue;
    }
    if (signal_number == SIGHUP) {
      (*server)->TriggerReload();
      continue;
    }
    base::LogInfo(absl::StrCat(
        "received ", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"));
    (*server)->Shutdown();
    base::FlushSuppressedLogs(/*all=*/true);
    return 0;
  }
}

}  // namespace compatd::service
