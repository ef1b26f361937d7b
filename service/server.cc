#include "service/server.h"

#include <pthread.h>
#include <signal.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "catalog/embedded_catalog.h"
#include "engine/catalog_loader.h"
#include "engine/catalog_store.h"
#include "grpcpp/ext/health_check_service_server_builder_option.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "service/catalog_events.h"
#include "service/catalog_reloader.h"
#include "service/handlers.h"
#include "service/log.h"
#include "service/policy_service.h"

namespace compatd::service {
namespace {

class ServerImpl final : public Server, private ReloadListener {
 public:
  explicit ServerImpl(const ServerOptions& options)
      : options_(options),
        handlers_(&store_, &events_),
        service_(&handlers_, &events_, &store_, /*observer=*/nullptr) {}

  ~ServerImpl() override { Shutdown(); }

  absl::Status Init() {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(options_.listen, grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service_);
    grpc_server_ = builder.BuildAndStart();
    if (grpc_server_ == nullptr || port_ == 0) {
      return absl::UnavailableError(absl::StrCat(
          "cannot listen on --listen=", options_.listen,
          " (address in use, or not a host:port this machine has?)"));
    }
    health_ = grpc_server_->GetHealthCheckService();
    SetServing(false);
    LogInfo(absl::StrCat("gRPC listening on ", HostOf(options_.listen), ":",
                         port_));

    if (options_.catalog_path.empty()) {
      absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
          engine::ParseCatalog(compatd::catalog::EmbeddedCatalogYaml(),
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
      LogInfo(absl::StrCat("serving catalog ", published->source, " ",
                           published->digest, " generation 1"));
    } else {
      CatalogReloader::Options reload_options;
      reload_options.path = options_.catalog_path;
      reload_options.interval = options_.reload_interval;
      absl::StatusOr<std::unique_ptr<CatalogReloader>> reloader =
          CatalogReloader::Create(reload_options, &store_, this);
      if (!reloader.ok()) return reloader.status();
      reloader_ = std::move(*reloader);
      reloader_->Start();
      const auto current = store_.Current();
      LogInfo(absl::StrCat("serving catalog ", current->source, " ",
                           current->digest, " generation ",
                           current->generation));
    }
    SetServing(true);
    return absl::OkStatus();
  }

  int port() const override { return port_; }
  int metrics_port() const override { return 0; }

  void TriggerReload() override {
    if (reloader_ != nullptr) {
      LogInfo("SIGHUP: reloading the catalog");
      reloader_->TriggerReload();
    }
  }

  void Shutdown() override {
    absl::MutexLock lock(&shutdown_mu_);
    if (shut_down_) return;
    shut_down_ = true;
    if (grpc_server_ == nullptr) return;
    LogInfo(
        absl::StrCat("shutting down: NOT_SERVING, draining calls for up to ",
                     absl::FormatDuration(options_.shutdown_grace)));
    // Health first, so load balancers stop sending before the listener goes
    // away.
    if (health_ != nullptr) health_->Shutdown();
    events_.Close();
    grpc_server_->Shutdown(
        absl::ToChronoTime(absl::Now() + options_.shutdown_grace));
    grpc_server_->Wait();
    if (reloader_ != nullptr) reloader_->Stop();
    LogInfo("stopped");
  }

 private:
  static std::string HostOf(const std::string& address) {
    const size_t colon = address.rfind(':');
    return colon == std::string::npos ? address : address.substr(0, colon);
  }

  void SetServing(bool serving) {
    if (health_ == nullptr) return;
    health_->SetServingStatus(serving);
    health_->SetServingStatus(std::string(kPolicyServiceName), serving);
  }

  // ReloadListener: runs on the reloader's thread.
  void OnReload(ReloadResult result, const engine::Catalog* published,
                absl::string_view error) override {
    switch (result) {
      case ReloadResult::kLoaded:
        events_.Published(store_.Current());
        (void)published;
        break;
      case ReloadResult::kUnchanged:
        events_.Unchanged();
        break;
      case ReloadResult::kRejected:
        events_.Rejected(std::string(error), absl::Now());
        break;
    }
  }

  const ServerOptions options_;
  engine::CatalogStore store_;
  CatalogEvents events_;
  PolicyHandlers handlers_;
  PolicyService service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  grpc::HealthCheckServiceInterface* health_ = nullptr;
  std::unique_ptr<CatalogReloader> reloader_;
  int port_ = 0;

  absl::Mutex shutdown_mu_;
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
    LogError(absl::StrCat("cannot start: ", server.status().message()));
    return 1;
  }
  while (true) {
    int signal_number = 0;
    if (sigwait(&signals, &signal_number) != 0) continue;
    if (signal_number == SIGHUP) {
      (*server)->TriggerReload();
      continue;
    }
    LogInfo(absl::StrCat("received ",
                         signal_number == SIGTERM ? "SIGTERM" : "SIGINT"));
    (*server)->Shutdown();
    return 0;
  }
}

}  // namespace compatd::service
