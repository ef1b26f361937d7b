#pragma once

// The compatd server: gRPC (CompatibilityPolicy, health, reflection) on one
// port, Prometheus /metrics on another, the catalog (embedded or a watched
// file), and a graceful shutdown.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/request_validation.h"
#include "http/tls.h"

namespace compatd::service {

struct ServerOptions {
  // gRPC listen address. Port 0 picks a free port (see Server::port()).
  std::string listen = "127.0.0.1:50051";
  // Prometheus /metrics listen address; empty disables the endpoint.
  std::string metrics_listen = "127.0.0.1:9464";
  // A second, plaintext gRPC listener serving only grpc.health.v1 (the same
  // statuses as the main port), for kubelet's native gRPC probes, which
  // cannot speak TLS; empty disables it. Nothing else is reachable on it.
  std::string health_listen;
  // Catalog file to load and watch; empty serves the embedded Kubernetes
  // catalog.
  std::string catalog_path;
  // Backstop content check of the catalog file (besides inotify and SIGHUP); 0
  // disables it.
  absl::Duration reload_interval = absl::Seconds(30);
  // How long in-flight calls may take to finish after SIGTERM.
  absl::Duration shutdown_grace = absl::Seconds(10);
  // Clients not seen for this long are dropped from ListClients and the gauges.
  absl::Duration client_ttl = absl::Minutes(10);
  // Bound on distinct client label sets per metric family (overflow:
  // component="other").
  int max_client_series = 256;

  // TLS of the gRPC port (--tls-cert, --tls-key, --tls-client-ca); no cert
  // and key: plaintext. A client CA makes client certificates required.
  http::TlsFiles tls;
  // TLS of /metrics (--metrics-tls-*), separate so that Prometheus can scrape
  // over TLS without a client certificate while gRPC requires one.
  http::TlsFiles metrics_tls;
  // How often certificate files are checked for a rotation (at least 1s).
  absl::Duration tls_refresh_interval = absl::Minutes(1);
  // Largest request message in bytes; larger ones fail with
  // RESOURCE_EXHAUSTED before any handler runs.
  int max_recv_message_bytes = 4 * 1024 * 1024;
  // HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS: calls one connection may have in
  // flight at once; further calls wait on the client side until one ends.
  int max_concurrent_streams = 100;
  // Evaluate batch size and the per-call duration cap.
  api::RequestLimits limits;
};

class Server {
 public:
  virtual ~Server() = default;

  // Binds the ports, loads the catalog (a bad --catalog is an error: nothing is
  // served), starts watching it, and reports SERVING on grpc.health.v1.
  static absl::StatusOr<std::unique_ptr<Server>> Start(
      const ServerOptions& options);

  // The bound gRPC, metrics and health-only ports (0 when disabled).
  virtual int port() const = 0;
  virtual int metrics_port() const = 0;
  virtual int health_port() const = 0;

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
