#include "service/server.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/handlers.h"
#include "base/log.h"
#include "base/tsan.h"
#include "base/valid_utf8.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/user_agent.h"
#include "grpc/grpc.h"
#include "grpc/support/time.h"
#include "grpcpp/ext/health_check_service_server_builder_option.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/support/server_interceptor.h"
#include "http/exposer.h"
#include "http/tls.h"
#include "metrics/process_metrics.h"
#include "metrics/registry.h"
#include "metrics/service_metrics.h"
#include "runtime/catalog_events.h"
#include "runtime/catalog_reloader.h"
#include "runtime/catalog_store.h"
#include "runtime/client_tracker.h"
#include "service/grpc_credentials.h"
#include "service/policy_service.h"
#include "service/reflection.h"
#include "service/rpc_observer.h"

namespace compatd::service {
namespace {

absl::string_view MetadataValue(const ClientMetadata& metadata,
                                absl::string_view key) {
  auto it = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (it == metadata.end()) return {};
  return absl::string_view(it->second.data(), it->second.size());
}

// Feeds every call to the gRPC metrics and the client tracker.
class ServerObserver final : public RpcObserver {
 public:
  ServerObserver(const runtime::CatalogStore* store,
                 const metrics::ServiceMetrics* metrics,
                 runtime::ClientTracker* clients)
      : store_(store), clients_(clients) {
    for (int i = 0; i < kRpcMethodCount; ++i) {
      methods_[i] = metrics->Method(kPolicyServiceName,
                                    RpcMethodName(static_cast<RpcMethod>(i)));
    }
  }

  void OnStart(RpcMethod method, const ClientMetadata& metadata) override {
    methods_[static_cast<int>(method)]->Started();
    const std::shared_ptr<const engine::Catalog> catalog = store_->Current();
    if (catalog == nullptr) return;
    clients_->Record(*catalog,
                     engine::IdentifyClient(
                         MetadataValue(metadata, "x-kubernetes-component"),
                         MetadataValue(metadata, "x-kubernetes-version"),
                         MetadataValue(metadata, "user-agent")));
  }

  void OnFinish(RpcMethod method, absl::StatusCode code,
                absl::Duration latency) override {
    methods_[static_cast<int>(method)]->Handled(code, latency);
  }

 private:
  const runtime::CatalogStore* store_;
  runtime::ClientTracker* clients_;
  std::array<const metrics::MethodMetrics*, kRpcMethodCount> methods_{};
};

std::vector<metrics::RpcMethod> ServedMethods() {
  std::vector<metrics::RpcMethod> methods;
  for (int i = 0; i < kRpcMethodCount; ++i) {
    const auto method = static_cast<RpcMethod>(i);
    methods.push_back(metrics::RpcMethod{
        std::string(kPolicyServiceName), std::string(RpcMethodName(method)),
        method == RpcMethod::kWatchCatalog ? metrics::RpcType::kServerStream
                                           : metrics::RpcType::kUnary});
  }
  return methods;
}

void FillClients(const runtime::ClientTracker& tracker,
                 absl::string_view component, const engine::Catalog& catalog,
                 v1::ListClientsResponse* response) {
  auto timestamp = [](absl::Time t, google::protobuf::Timestamp* out) {
    const int64_t nanos = absl::ToUnixNanos(t);
    out->set_seconds(nanos / 1000000000);
    out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
  };
  for (const runtime::ObservedClientInfo& info :
       tracker.List(catalog, component)) {
    v1::ObservedClient* out = response->add_clients();
    out->set_component(info.component);
    out->set_version(info.version);
    switch (info.verdict) {
      case metrics::ClientVerdict::kAllowed:
        out->set_verdict(v1::SKEW_VERDICT_ALLOWED);
        break;
      case metrics::ClientVerdict::kTooOld:
        out->set_verdict(v1::SKEW_VERDICT_TOO_OLD);
        break;
      case metrics::ClientVerdict::kTooNew:
        out->set_verdict(v1::SKEW_VERDICT_TOO_NEW);
        break;
      case metrics::ClientVerdict::kUnknown:
        out->set_verdict(v1::SKEW_VERDICT_UNKNOWN);
        break;
    }
    out->set_min_version(info.min_version);
    out->set_max_version(info.max_version);
    timestamp(info.first_seen, out->mutable_first_seen());
    timestamp(info.last_seen, out->mutable_last_seen());
    out->set_requests(info.requests);
  }
}

// A --listen / --health-listen value: "host:port" or "[v6]:port" with a port
// in 0..65535 (gRPC itself wraps 99999 around to 34463), or a "unix:" path.
absl::Status CheckGrpcAddress(absl::string_view flag,
                              absl::string_view address) {
  if (absl::StartsWith(address, "unix:") ||
      absl::StartsWith(address, "unix-abstract:")) {
    return absl::OkStatus();
  }
  const size_t colon = address.rfind(':');
  const absl::string_view host =
      colon == absl::string_view::npos ? "" : address.substr(0, colon);
  const absl::string_view port_text =
      colon == absl::string_view::npos ? "" : address.substr(colon + 1);
  uint32_t port = 0;
  if (host.empty() || port_text.empty() ||
      port_text.find_first_not_of("0123456789") != absl::string_view::npos ||
      !absl::SimpleAtoi(port_text, &port) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", address,
        ": expected host:port with a port in 0..65535 (0 picks a free one), "
        "e.g. 127.0.0.1:50051, 0.0.0.0:50051 or [::]:50051, or unix:PATH"));
  }
  if (absl::StartsWith(host, "[") != absl::EndsWith(host, "]") ||
      (!absl::StartsWith(host, "[") &&
       host.find(':') != absl::string_view::npos)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=", address,
                     ": an IPv6 host must be in brackets, e.g. [::1]:50051"));
  }
  return absl::OkStatus();
}

// Every method of the --health-listen server but grpc.health.v1's:
// UNIMPLEMENTED, saying where the API is.
class HealthOnlyFallback final : public grpc::CallbackGenericService {
 public:
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    class Reactor final : public grpc::ServerGenericBidiReactor {
     public:
      explicit Reactor(const std::string& method) {
        Finish(grpc::Status(
            grpc::StatusCode::UNIMPLEMENTED,
            absl::StrCat(base::ValidUtf8(method),
                         " is not served on the --health-listen port, which "
                         "serves grpc.health.v1 only; call the --listen "
                         "port")));
      }
      void OnDone() override { delete this; }
    };
    return new Reactor(context->method());
  }
};

// Counts the unary calls of every service on the --listen port (ours and
// grpc.health.v1 Check) from the moment gRPC hands a call to the application
// until gRPC is done with it: the interceptor is made before the handler runs
// (CallbackCallTag::Run in gRPC's src/cpp/server/server_cc.cc) and deleted
// with the call's ServerContext, once its answer and status are in the
// transport's hands. The metrics' started/handled counts would not do: a call
// is "handled" before its answer is sent. Streams are not counted: the server
// ends WatchCatalog itself, Health/Watch and reflection streams end only when
// the client ends them.
class UnaryCallCounter final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit UnaryCallCounter(std::atomic<int>* in_flight)
      : in_flight_(in_flight) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) {
      return nullptr;  // no interceptor: gRPC skips the interception hooks
    }
    return new Call(in_flight_);
  }

 private:
  class Call final : public grpc::experimental::Interceptor {
   public:
    explicit Call(std::atomic<int>* in_flight) : in_flight_(in_flight) {
      in_flight_->fetch_add(1, std::memory_order_relaxed);
      base::TsanRelease(
          this);  // gRPC calls and deletes it on other threads (tsan.h)
    }
    ~Call() override {
      base::TsanAcquire(this);
      in_flight_->fetch_sub(1, std::memory_order_release);
    }
    void Intercept(
        grpc::experimental::InterceptorBatchMethods* methods) override {
      // Before Proceed(), after which the call may end and gRPC delete this
      // on another thread.
      base::TsanRelease(this);
      methods->Proceed();
    }

   private:
    std::atomic<int>* const in_flight_;
  };

  std::atomic<int>* const in_flight_;
};

class ServerImpl final : public Server, private runtime::ReloadListener {
 public:
  explicit ServerImpl(const ServerOptions& options)
      : options_(options),
        handlers_(
            &store_, &events_,
            [this](absl::string_view component, const engine::Catalog& catalog,
                   v1::ListClientsResponse* response) {
              FillClients(*clients_, component, catalog, response);
            },
            options.limits) {}

  ~ServerImpl() override { Shutdown(); }

  absl::Status Init() {
    if (absl::Status s = http::CheckTlsFiles(options_.tls, "--tls"); !s.ok()) {
      return s;
    }
    if (absl::Status s =
            http::CheckTlsFiles(options_.metrics_tls, "--metrics-tls");
        !s.ok()) {
      return s;
    }
    if (options_.tls_refresh_interval < absl::Seconds(1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--tls-refresh-interval=",
          absl::FormatDuration(options_.tls_refresh_interval),
          ": must be at least 1s (gRPC's certificate watcher polls at most "
          "once a second)"));
    }
    if (options_.limits.max_call_duration <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          "--max-call-duration=0: must be positive, e.g. 30m");
    }
    metrics::ServiceMetrics::Options metric_options;
    metric_options.methods = ServedMethods();
    metric_options.version = COMPATD_VERSION;
    metric_options.revision = COMPATD_REVISION;
    metric_options.max_client_label_sets =
        static_cast<size_t>(options_.max_client_series);
    absl::StatusOr<std::unique_ptr<metrics::ServiceMetrics>> service_metrics =
        metrics::ServiceMetrics::Create(&registry_, std::move(metric_options));
    if (!service_metrics.ok()) return service_metrics.status();
    metrics_ = std::move(*service_metrics);
    // Which catalog each replica serves, comparable across replicas
    // (generations count loads per process; the digest names the content).
    if (absl::Status s = registry_.AddCallbackFamily(
            "compatd_catalog_info",
            "The catalog now serving: its digest (sha256 of its bytes), "
            "source and binaryVersion. Always 1.",
            metrics::MetricType::kGauge, {"digest", "source", "binary_version"},
            [this]() -> std::vector<metrics::CallbackSample> {
              const std::shared_ptr<const engine::Catalog> catalog =
                  store_.Current();
              if (catalog == nullptr) return {};
              return {
                  metrics::CallbackSample{{catalog->digest, catalog->source,
                                           catalog->binary_version.ToString()},
                                          1}};
            });
        !s.ok()) {
      return s;
    }
    if (absl::Status s = metrics::RegisterProcessMetrics(&registry_); !s.ok()) {
      return s;
    }
    runtime::ClientTracker::Options tracker_options;
    tracker_options.max_entries =
        static_cast<size_t>(options_.max_client_series);
    tracker_options.idle_ttl = options_.client_ttl;
    clients_ = std::make_unique<runtime::ClientTracker>(&store_, metrics_.get(),
                                                        tracker_options);
    observer_ = std::make_unique<ServerObserver>(&store_, metrics_.get(),
                                                 clients_.get());
    service_ = std::make_unique<PolicyService>(&handlers_, &events_, &store_,
                                               observer_.get());
    absl::StatusOr<std::vector<std::unique_ptr<grpc::Service>>> reflection =
        CreateReflectionServices({std::string(kPolicyServiceName),
                                  "grpc.health.v1.Health",
                                  "grpc.reflection.v1.ServerReflection",
                                  "grpc.reflection.v1alpha.ServerReflection"});
    if (!reflection.ok()) return reflection.status();
    reflection_ = std::move(*reflection);

    if (absl::Status status = CheckGrpcAddress("listen", options_.listen);
        !status.ok()) {
      return status;
    }
    if (!options_.health_listen.empty()) {
      if (absl::Status status =
              CheckGrpcAddress("health-listen", options_.health_listen);
          !status.ok()) {
        return status;
      }
    }

    if (!options_.metrics_listen.empty()) {
      // With TLS, the exposer listens on loopback only and a
      // http::TlsTerminator takes the metrics address (http/tls.h says why).
      const bool https = options_.metrics_tls.enabled();
      absl::StatusOr<std::unique_ptr<http::Exposer>> exposer =
          http::Exposer::Start(&registry_,
                               https ? "127.0.0.1:0" : options_.metrics_listen);
      if (!exposer.ok()) {
        return absl::Status(
            exposer.status().code(),
            absl::StrCat("--metrics-listen=", options_.metrics_listen, ": ",
                         exposer.status().message()));
      }
      exposer_ = std::move(*exposer);
      if (https) {
        absl::StatusOr<std::unique_ptr<http::TlsFileContext>> context =
            http::TlsFileContext::Create(options_.metrics_tls,
                                         options_.tls_refresh_interval,
                                         "--metrics-tls");
        if (!context.ok()) return context.status();
        metrics_tls_ = std::move(*context);
        absl::StatusOr<std::unique_ptr<http::TlsTerminator>> terminator =
            http::TlsTerminator::Start(options_.metrics_listen,
                                       exposer_->port(), metrics_tls_.get());
        if (!terminator.ok()) {
          return absl::Status(
              terminator.status().code(),
              absl::StrCat("--metrics-listen=", options_.metrics_listen, ": ",
                           terminator.status().message()));
        }
        metrics_terminator_ = std::move(*terminator);
      }
      base::LogInfo(absl::StrCat(
          https ? "metrics on https://" : "metrics on http://",
          HostOf(options_.metrics_listen), ":", metrics_port(), "/metrics",
          https && !options_.metrics_tls.client_ca.empty()
              ? " (client certificates required)"
              : ""));
    }

    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(
        options_.listen,
        GrpcServerCredentials(options_.tls, options_.tls_refresh_interval),
        &port_);
    builder.SetMaxReceiveMessageSize(options_.max_recv_message_bytes);
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                               options_.max_concurrent_streams);
    builder.RegisterService(service_.get());
    for (const auto& service : reflection_) {
      builder.RegisterService(service.get());
    }
    std::vector<
        std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(
        std::make_unique<UnaryCallCounter>(&unary_calls_in_flight_));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
    grpc_server_ = builder.BuildAndStart();
    if (grpc_server_ == nullptr || port_ == 0) {
      return absl::UnavailableError(absl::StrCat(
          "cannot listen on --listen=", options_.listen,
          " (address in use, or not a host:port this machine has?)"));
    }
    health_ = grpc_server_->GetHealthCheckService();
    if (!options_.health_listen.empty()) {
      // Its own server, so that nothing but the default health service (which
      // EnableDefaultHealthCheckService adds to every server) is on it.
      grpc::ServerBuilder health_builder;
      health_builder.AddListeningPort(options_.health_listen,
                                      grpc::InsecureServerCredentials(),
                                      &health_port_);
      // gRPC builds no server without a service of its own to poll for; this
      // one also says why any other method is refused here.
      health_builder.RegisterCallbackGenericService(&health_only_fallback_);
      health_server_ = health_builder.BuildAndStart();
      if (health_server_ == nullptr || health_port_ == 0) {
        return absl::UnavailableError(absl::StrCat(
            "cannot listen on --health-listen=", options_.health_listen,
            " (address in use, or not a host:port this machine has?)"));
      }
      health_only_ = health_server_->GetHealthCheckService();
      if (health_only_ == nullptr) {
        return absl::InternalError(
            "--health-listen: gRPC built the health-only server without its "
            "health service");
      }
    }
    SetServing(false);
    base::LogInfo(
        absl::StrCat("gRPC listening on ", HostOf(options_.listen), ":", port_,
                     !options_.tls.enabled()          ? " (plaintext)"
                     : options_.tls.client_ca.empty() ? " (TLS)"
                                                      : " (mutual TLS)"));
    if (health_server_ != nullptr) {
      base::LogInfo(
          absl::StrCat("gRPC health (grpc.health.v1 only, plaintext) on ",
                       HostOf(options_.health_listen), ":", health_port_));
    }

    if (options_.catalog_path.empty()) {
      absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
          catalog::ParseCatalog(compatd::catalog::EmbeddedCatalogYaml(),
                                compatd::catalog::EmbeddedCatalogSource());
      if (!catalog.ok()) {
        return absl::InternalError(
            absl::StrCat("the embedded catalog does not load: ",
                         catalog.status().message()));
      }
      (*catalog)->generation = 1;
      (*catalog)->loaded_at = absl::Now();
      std::shared_ptr<const engine::Catalog> published = std::move(*catalog);
      store_.Publish(published);
      metrics_->RecordCatalogPublished(published->generation, absl::Now());
      base::LogInfo(absl::StrCat("serving catalog ", published->source, " ",
                                 published->digest, " generation 1"));
    } else {
      runtime::CatalogReloader::Options reload_options;
      reload_options.path = options_.catalog_path;
      reload_options.interval = options_.reload_interval;
      absl::StatusOr<std::unique_ptr<runtime::CatalogReloader>> reloader =
          runtime::CatalogReloader::Create(reload_options, &store_, this);
      if (!reloader.ok()) return reloader.status();
      reloader_ = std::move(*reloader);
      reloader_->Start();
      const auto current = store_.Current();
      metrics_->RecordCatalogPublished(current->generation, absl::Now());
      base::LogInfo(absl::StrCat("serving catalog ", current->source, " ",
                                 current->digest, " generation ",
                                 current->generation));
    }
    SetServing(true);
    return absl::OkStatus();
  }

  int port() const override { return port_; }
  int health_port() const override { return health_port_; }
  int metrics_port() const override {
    if (metrics_terminator_ != nullptr) return metrics_terminator_->port();
    return exposer_ == nullptr ? 0 : exposer_->port();
  }

  void TriggerReload() override {
    if (reloader_ != nullptr) {
      base::LogInfo("SIGHUP: reloading the catalog");
      reloader_->TriggerReload();
    }
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
    if (health_only_ != nullptr) health_only_->Shutdown();
    events_.Close();
    DrainMainServer();
    if (health_server_ != nullptr) {
      // Health Watch streams never end by themselves: a moment for the last
      // NOT_SERVING to be written to them, then they are cancelled.
      health_server_->Shutdown(
          absl::ToChronoTime(absl::Now() + absl::Milliseconds(200)));
      health_server_->Wait();
    }
    if (reloader_ != nullptr) reloader_->Stop();
    if (metrics_terminator_ != nullptr) metrics_terminator_->Stop();
    if (exposer_ != nullptr) exposer_->Stop();
    base::LogInfo("stopped");
  }

 private:
  // grpc::Server::Shutdown(deadline) (gRPC 1.51 src/cpp/server/server_cc.cc,
  // ShutdownInternal) calls grpc_server_shutdown_and_notify, waits until the
  // core server reports every connection gone (not every call: Server::
  // MaybeFinishShutdown in src/core/lib/surface/server.cc waits for
  // channels_.empty()), and only at the deadline calls
  // grpc_server_cancel_all_calls. An idle client connection then held the
  // exit for as long as the graceful GOAWAY took (measured: 5 s), an open
  // Health/Watch stream for the whole --shutdown-grace. This does the same
  // steps, but cancels as soon as no unary call is in flight. Cancelling
  // closes every connection at once; the chttp2 transport still finishes a
  // socket write in progress first ("Delayed close due to in-progress
  // write"), so answers of calls already done are not cut.
  void DrainMainServer() {
    grpc_completion_queue* shutdown_cq =
        grpc_completion_queue_create_for_next(nullptr);
    int shutdown_tag = 0;
    // Returns once the listeners are closed, GOAWAY is on its way to every
    // connection, and every call admitted before has been handed to the
    // application (ShutdownAndNotify waits for admissions in progress); the
    // core server admits no call after it.
    grpc_server_shutdown_and_notify(grpc_server_->c_server(), shutdown_cq,
                                    &shutdown_tag);
    const absl::Time deadline = absl::Now() + options_.shutdown_grace;
    // A call handed to the application is counted when a gRPC thread runs its
    // first step (UnaryCallCounter), normally microseconds later, so one look
    // at zero could miss a call just admitted. Closing only after zero on two
    // looks kDrainPoll apart means such a call would have to be stalled that
    // long to be cut. The first look comes kDrainPoll after shutdown began,
    // so Health/Watch streams also get 200 ms to receive NOT_SERVING, as on
    // the --health-listen server.
    constexpr absl::Duration kDrainPoll = absl::Milliseconds(100);
    int idle_looks = 0;
    while (true) {
      const absl::Duration wait = std::max(
          absl::ZeroDuration(), std::min(deadline - absl::Now(), kDrainPoll));
      const grpc_event event = grpc_completion_queue_next(
          shutdown_cq,
          gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                       gpr_time_from_micros(absl::ToInt64Microseconds(wait),
                                            GPR_TIMESPAN)),
          nullptr);
      if (event.type != GRPC_QUEUE_TIMEOUT) break;  // every connection is gone
      const int in_flight =
          unary_calls_in_flight_.load(std::memory_order_acquire);
      idle_looks = in_flight == 0 ? idle_looks + 1 : 0;
      if (idle_looks < 2 && absl::Now() < deadline) continue;
      base::LogInfo(
          in_flight == 0
              ? "no call in flight: closing the remaining connections "
                "and streams"
              : absl::StrCat("--shutdown-grace is over with ", in_flight,
                             " call(s) in flight: cancelling them"));
      grpc_server_cancel_all_calls(grpc_server_->c_server());
      // Now every connection closes without waiting for its client.
      grpc_completion_queue_next(shutdown_cq,
                                 gpr_inf_future(GPR_CLOCK_MONOTONIC), nullptr);
      break;
    }
    grpc_completion_queue_shutdown(shutdown_cq);
    while (grpc_completion_queue_next(
               shutdown_cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), nullptr)
               .type != GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(shutdown_cq);
    // The core server is shut down already: this returns once gRPC C++ has
    // finished its own callbacks.
    grpc_server_->Shutdown();
    grpc_server_->Wait();
  }

  static std::string HostOf(const std::string& address) {
    const size_t colon = address.rfind(':');
    return colon == std::string::npos ? address : address.substr(0, colon);
  }

  void SetServing(bool serving) {
    for (grpc::HealthCheckServiceInterface* health : {health_, health_only_}) {
      if (health == nullptr) continue;
      health->SetServingStatus(serving);
      health->SetServingStatus(std::string(kPolicyServiceName), serving);
    }
  }

  // runtime::ReloadListener: runs on the reloader's thread.
  void OnReload(runtime::ReloadResult result, const engine::Catalog* published,
                absl::string_view error) override {
    const absl::Time now = absl::Now();
    switch (result) {
      case runtime::ReloadResult::kLoaded:
        metrics_->RecordReload(metrics::ReloadResult::kLoaded, now);
        metrics_->RecordCatalogPublished(published->generation, now);
        events_.Published(store_.Current());
        break;
      case runtime::ReloadResult::kUnchanged:
        metrics_->RecordReload(metrics::ReloadResult::kUnchanged, now);
        events_.Unchanged();
        break;
      case runtime::ReloadResult::kRejected:
        metrics_->RecordReload(metrics::ReloadResult::kRejected, now);
        events_.Rejected(std::string(error), now);
        break;
    }
  }

  const ServerOptions options_;
  // Declared before everything that reads them, so they are destroyed last.
  metrics::Registry registry_;
  std::unique_ptr<metrics::ServiceMetrics> metrics_;
  runtime::CatalogStore store_;
  runtime::CatalogEvents events_;
  std::unique_ptr<runtime::ClientTracker> clients_;
  api::PolicyHandlers handlers_;
  std::unique_ptr<ServerObserver> observer_;
  std::unique_ptr<PolicyService> service_;
  std::vector<std::unique_ptr<grpc::Service>> reflection_;
  std::unique_ptr<http::Exposer> exposer_;
  std::unique_ptr<http::TlsFileContext>
      metrics_tls_;  // outlives the terminator
  std::unique_ptr<http::TlsTerminator> metrics_terminator_;
  // Unary calls on grpc_server_ (UnaryCallCounter); outlives it.
  std::atomic<int> unary_calls_in_flight_{0};
  std::unique_ptr<grpc::Server> grpc_server_;
  grpc::HealthCheckServiceInterface* health_ = nullptr;
  // --health-listen: a plaintext server with only the health service.
  HealthOnlyFallback health_only_fallback_;  // outlives health_server_
  std::unique_ptr<grpc::Server> health_server_;
  grpc::HealthCheckServiceInterface* health_only_ = nullptr;
  std::unique_ptr<runtime::CatalogReloader> reloader_;
  int port_ = 0;
  int health_port_ = 0;

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

  // Signals are taken by sigwait() below; every thread started from here
  // inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(options);
  if (!server.ok()) {
    base::LogError(absl::StrCat("cannot start: ", server.status().message()));
    return 1;
  }
  while (true) {
    int signal_number = 0;
    if (sigwait(&signals, &signal_number) != 0) continue;
    if (signal_number == SIGHUP) {
      (*server)->TriggerReload();
      continue;
    }
    base::LogInfo(absl::StrCat(
        "received ", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"));
    (*server)->Shutdown();
    return 0;
  }
}

}  // namespace compatd::service
