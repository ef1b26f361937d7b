#pragma once

// What a compatd server is told at start (main.cc copies its flags here), and
// the checks that make a bad value a start-up error naming the flag.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "api/request_validation.h"
#include "fleet/prometheus_poller.h"
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
  // The HTTPS/JSON front door (gateway/gateway.h); empty disables it.
  std::string http_listen;
  // The status page on the front door's port (/ui/, ui/status_page.h);
  // false: its paths are 404.
  bool ui = true;
  // Its TLS (--http-tls-*); no cert and key: plaintext.
  http::TlsFiles http_tls;
  // Largest request body on the HTTP front door: 413 beyond (kube-apiserver's
  // own request limit is 3 MiB).
  int max_http_body_bytes = 3 * 1024 * 1024;
  // Bytes of request bodies and unwritten answers over both HTTP ports
  // (http::MemoryBudget), each its own account of this many bytes; past it
  // requests and answers get 429.
  int max_http_memory_bytes = 64 * 1024 * 1024;
  // Largest AdmissionReview body on /admission/v1/validate[/...]: an UPDATE
  // carries object and oldObject, each up to etcd's 1.5 MiB as protobuf and
  // larger as JSON (main.cc's flag help says why 16 MiB).
  int max_admission_body_bytes = 16 * 1024 * 1024;
  // Open connections per HTTP port (front door, /metrics); more are closed.
  int max_http_connections = 1024;
  // Bytes of /gatekeeper/v1 answers kept for the serving catalog
  // (gateway/provider_cache.h); 0 keeps none.
  int gatekeeper_cache_bytes = 4 << 20;
  // Catalog files (or directories of them) to load and watch, one
  // kube-apiserver release line per file, each reloaded on its own; empty
  // serves the embedded catalogs (every line compatd ships).
  std::vector<std::string> catalog_paths;
  // The release line answered when a request names no binary version
  // ("1.34"); empty: the newest line served.
  std::string binary_version;
  // The cluster profile (docs/cluster-profile.md): compatd's own profile YAML,
  // kube-apiserver's static pod manifest, a kubeadm ClusterConfiguration (or
  // the kubeadm-config ConfigMap), a Cluster API KubeadmControlPlane or
  // /version JSON; watched and reloaded like a catalog. Empty: none.
  std::string cluster_path;
  // --cluster-version: the cluster's kube-apiserver binary ("1.35.2"), alone
  // or over what --cluster says; --upgrade-target: the binary it is going to.
  std::string cluster_version;
  std::string upgrade_target;
  // POST /audit/v1/events on the front door (gateway/audit.h): kube-apiserver's
  // audit webhook as a source of clients and API use; false: 404.
  bool audit = true;
  // --audit-user-names: "all", "service-accounts" or "none"
  // (runtime/api_usage.h).
  std::string audit_user_names = "service-accounts";
  // Events per batch and bytes per batch read; more: 413.
  int audit_max_batch_events = 4000;
  int audit_max_batch_bytes = 3 * 1024 * 1024;
  // Batches read at once; more wait their turn (below).
  int audit_max_concurrent_batches = 1;
  // Batches that wait their turn, in arrival order; more: 429
  // (kube-apiserver retries).
  int audit_max_queued_batches = 8;
  // API use rows (client x API at risk) kept, and how long an idle one lives.
  int max_api_usage_rows = 1000;
  absl::Duration api_usage_ttl = absl::Hours(1);
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
  // The fleet's clients from Prometheus (--prometheus-*); an empty
  // prometheus.client.url: this replica's clients only. queries.client_ttl is
  // set from client_ttl.
  fleet::PrometheusPollerOptions prometheus;

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
  // Largest answer in bytes: a larger one fails with RESOURCE_EXHAUSTED
  // naming both sizes, and Evaluate stops working on a batch once its answer
  // passes it (limits.max_answer_bytes is set from this).
  int max_send_message_bytes = 4 * 1024 * 1024;
  // Bytes of answers handed to gRPC and not yet taken by their clients (slow
  // or stalled readers), across all connections; an answer that would pass
  // it fails with RESOURCE_EXHAUSTED.
  int max_answer_backlog_bytes = 64 * 1024 * 1024;
  // gRPC's own memory (a grpc::ResourceQuota: read buffers, the request
  // messages being received, calls): past it, gRPC cancels streams
  // (RST_STREAM ENHANCE_YOUR_CALM, RESOURCE_EXHAUSTED for the client) and
  // sends GOAWAY to idle connections.
  int grpc_memory_bytes = 64 * 1024 * 1024;
  // Open connections of the gRPC port (including those still in their TLS
  // or HTTP/2 handshake); a connection past it is closed at once.
  int max_connections = 1000;
  // A connection must finish its TLS handshake and send the HTTP/2 preface
  // and SETTINGS within this, or it is closed.
  absl::Duration handshake_timeout = absl::Seconds(10);
  // A connection without a call for this long gets GOAWAY and is closed
  // (gRPC clients reconnect on their next call).
  absl::Duration max_connection_idle = absl::Minutes(5);
  // The heavy lane (api/lanes.h): its threads, the calls that may wait for
  // one (more are refused at once), and each call's work budget. Defaults
  // for a 2-core pod: one core stays free for light calls.
  int heavy_workers = 1;
  int heavy_queue = 8;
  absl::Duration heavy_work_time = absl::Seconds(10);
  // Evaluate batch size and the per-call duration cap.
  api::RequestLimits limits;
};

// INVALID_ARGUMENT naming the flag for a value the server cannot start with:
// TLS files that do not load or belong together, a refresh interval under
// 1s, a non-positive --max-call-duration, --handshake-timeout or
// --max-connection-idle, an answer backlog or gRPC memory smaller than one
// answer or one request, a --listen/--health-listen that is not host:port
// (port 0..65535) or unix:PATH.
absl::Status ValidateServerOptions(const ServerOptions& options);

// A --listen / --health-listen value (`flag` names it in the error).
absl::Status CheckGrpcAddress(absl::string_view flag,
                              absl::string_view address);

}  // namespace compatd::service
