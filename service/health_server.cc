#include "service/health_server.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/valid_utf8.h"

namespace compatd::service {

absl::StatusOr<std::unique_ptr<HealthOnlyServer>> HealthOnlyServer::Start(
    const std::string& address) {
  std::unique_ptr<HealthOnlyServer> server(new HealthOnlyServer());
  // Its own server, so that nothing but the default health service (which
  // EnableDefaultHealthCheckService adds to every server) is on it.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(),
                           &server->port_);
  // No SO_REUSEPORT: a port in use is a start-up error (service/server.cc).
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // gRPC builds no server without a service of its own to poll for; this one
  // also says why any other method is refused here.
  builder.RegisterCallbackGenericService(&server->fallback_);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on --health-listen=", address,
        " (address in use, or not a host:port this machine has?)"));
  }
  server->health_ = server->server_->GetHealthCheckService();
  if (server->health_ == nullptr) {
    return absl::InternalError(
        "--health-listen: gRPC built the health-only server without its "
        "health service");
  }
  return server;
}

HealthOnlyServer::~HealthOnlyServer() { Shutdown(); }

void HealthOnlyServer::SetServing(bool serving, const std::string& service) {
  health_->SetServingStatus(serving);
  health_->SetServingStatus(service, serving);
}

void HealthOnlyServer::Shutdown() {
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  health_->Shutdown();
  // Health Watch streams never end by themselves: a moment for the last
  // NOT_SERVING to be written to them, then they are cancelled.
  server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Milliseconds(200)));
  server_->Wait();
}

}  // namespace compatd::service
