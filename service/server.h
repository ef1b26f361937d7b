#pragma once

// The compatd server: gRPC (CompatibilityPolicy, health, reflection) on one
// port, Prometheus /metrics on another, the catalog (embedded or a watched
// file), and a graceful shutdown.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "service/server_options.h"

namespace compatd::service {

class Server {
 public:
  virtual ~Server() = default;

  // Binds the ports, loads the catalog (a bad --catalog is an error: nothing is
  // served), starts watching it, and reports SERVING on grpc.health.v1.
  static absl::StatusOr<std::unique_ptr<Server>> Start(
      const ServerOptions& options);

  // The bound gRPC, metrics, health-only and HTTP front door ports (0 when
  // disabled).
  virtual int port() const = 0;
  virtual int metrics_port() const = 0;
  virtual int health_port() const = 0;
  virtual int http_port() const = 0;

  // Re-reads the catalog file now (SIGHUP). No-op for the embedded catalog.
  virtual void TriggerReload() = 0;

  // NOT_SERVING, ends WatchCatalog streams, lets in-flight calls finish within
  // the grace period, then stops everything. Idempotent.
  virtual void Shutdown() = 0;
};

// Runs a server until SIGTERM or SIGINT (graceful shutdown) with SIGHUP
// reloading the catalog. Returns the process exit code: 0 after a clean
// shutdown, 1 if it cannot start.
int RunServer(const ServerOptions& options);

}  // namespace compatd::service
