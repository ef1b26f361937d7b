#pragma once

// --health-listen: a second, plaintext gRPC server with nothing but
// grpc.health.v1 (the same statuses as the main port), for kubelet's native
// gRPC probes, which cannot speak TLS. Any other method is UNIMPLEMENTED,
// naming the --listen port.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/valid_utf8.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"

namespace compatd::service {

class HealthOnlyServer final {
 public:
  // UNAVAILABLE naming the flag when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HealthOnlyServer>> Start(
      const std::string& address);
  ~HealthOnlyServer();

  int port() const { return port_; }
  // The overall and `service`'s status.
  void SetServing(bool serving, const std::string& service);
  // NOT_SERVING to every Watch stream, 200 ms for it to be written, then
  // cancels them and stops. Idempotent.
  void Shutdown();

 private:
  HealthOnlyServer() = default;

  // Every method of the --health-listen server but grpc.health.v1's:
  // UNIMPLEMENTED, saying where the API is.
  class Fallback final : public grpc::CallbackGenericService {
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

  Fallback fallback_;  // outlives server_
  std::unique_ptr<grpc::Server> server_;
  grpc::HealthCheckServiceInterface* health_ = nullptr;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace compatd::service
