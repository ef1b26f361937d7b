#include "service/server_flags.h"

namespace compatd::service {
namespace {

// Serving.
void AddServingFlags(base::FlagTable* flags, ServerOptions* server) {
  flags->AddSection("Serving");
  flags->AddString("listen", &server->listen,
                   "gRPC listen address host:port (port 0 picks a free port)");
  flags->AddString("metrics-listen", &server->metrics_listen,
                   "Prometheus /metrics listen address host:port; empty "
                   "disables it");
  flags->AddString("health-listen", &server->health_listen,
                   "plaintext gRPC address serving only grpc.health.v1, for "
                   "kubelet gRPC probes when --tls-cert is on; empty disables "
                   "it");
  flags->AddString("http-listen", &server->http_listen,
                   "HTTPS/JSON front door host:port (/v1/<RPC>, "
                   "/admission/v1/validate, /gatekeeper/v1, /audit/v1/events, "
                   "/healthz); empty disables it");
  flags->AddBool("ui", &server->ui,
                 "serve the status page on --http-listen (/ui/: versions, "
                 "clients, feature gates, APIs); false: its paths are 404");
  flags->AddStringList(
      "catalog", &server->catalog_paths,
      "catalog file (YAML or JSON) or directory of them to serve and watch, "
      "one kube-apiserver release line per file; repeat it for several. "
      "None: the embedded catalogs of every release line compatd ships");
  flags->AddString("binary-version", &server->binary_version,
                   "the cluster's kube-apiserver release line (\"1.34\"): "
                   "answered when a request names no versions.binaryVersion; "
                   "empty: the newest line served");
  flags->AddDuration("reload-interval", &server->reload_interval,
                     "periodic content check of --catalog besides inotify and "
                     "SIGHUP; 0 disables it");
  flags->AddDuration("shutdown-grace", &server->shutdown_grace,
                     "how long in-flight calls may take to finish after "
                     "SIGTERM");
}

// The HTTPS/JSON front door (--http-listen).
void AddHttpFlags(base::FlagTable* flags, ServerOptions* server) {
  flags->AddSection("The HTTPS/JSON front door (--http-listen)");
  flags->AddString("http-tls-cert", &server->http_tls.cert,
                   "PEM certificate chain of --http-listen (with "
                   "--http-tls-key); empty: plain HTTP. Re-read when it "
                   "changes");
  flags->AddString("http-tls-key", &server->http_tls.key,
                   "PEM private key of --http-tls-cert");
  flags->AddString("http-tls-client-ca", &server->http_tls.client_ca,
                   "PEM CA bundle: HTTP clients must present a certificate "
                   "signed by it (mutual TLS)");
  flags->AddInt("max-http-body-bytes", &server->max_http_body_bytes, 1024,
                64 * 1024 * 1024,
                "largest request body on --http-listen (kube-apiserver's own "
                "limit is 3 MiB); larger ones get 413 before they are read");
  flags->AddInt("max-http-memory-bytes", &server->max_http_memory_bytes, 1024,
                1024 * 1024 * 1024,
                "bytes of request bodies and unwritten answers in flight over "
                "both HTTP ports; a request or answer past it gets 429 with "
                "Retry-After");
  flags->AddInt("max-admission-body-bytes", &server->max_admission_body_bytes,
                1024, 256 * 1024 * 1024,
                "largest AdmissionReview body on /admission/v1/validate, per "
                "request (in place of --max-http-body-bytes there): an UPDATE "
                "carries object and oldObject, each up to etcd's 1.5 MiB as "
                "protobuf and larger as JSON (base64 of binary data 4/3, "
                "Go's \\u003c escapes of <, >, & 6x), and a 413 under "
                "failurePolicy: Ignore lets the object through unchecked");
  flags->AddInt("gatekeeper-cache-bytes", &server->gatekeeper_cache_bytes, 0,
                1 << 30,
                "bytes of /gatekeeper/v1 answers kept for the catalog now "
                "serving (Gatekeeper's audit asks the same keys again and "
                "again); 0 keeps none");
  flags->AddInt("max-http-connections", &server->max_http_connections, 1,
                1000000,
                "open connections per HTTP port (--http-listen, "
                "--metrics-listen); more are closed at once");
}

// Audit (--audit).
void AddAuditFlags(base::FlagTable* flags, ServerOptions* server) {
  flags->AddSection("Audit (--audit)");
  flags->AddBool("audit", &server->audit,
                 "read kube-apiserver's audit webhook batches on "
                 "--http-listen (POST /audit/v1/events: every client of the "
                 "cluster and the APIs at risk it calls); false: 404");
  flags->AddString("audit-user-names", &server->audit_user_names,
                   "user names the API use rows keep: service-accounts "
                   "(service accounts and Kubernetes' own identities by "
                   "name, other users as a keyed hash; the default), all, "
                   "or none (only the kind of user)");
  flags->AddInt("audit-max-batch-events", &server->audit_max_batch_events, 1,
                1000000,
                "events per audit batch read (kube-apiserver sends up to "
                "--audit-webhook-batch-max-size, 400); more: 413");
  flags->AddInt("audit-max-batch-bytes", &server->audit_max_batch_bytes, 1024,
                64 * 1024 * 1024,
                "bytes per audit batch read (at most --max-http-body-bytes "
                "arrive); more: 413");
  flags->AddInt("audit-max-concurrent-batches",
                &server->audit_max_concurrent_batches, 1, 64,
                "audit batches read at once; more get 429 and kube-apiserver "
                "retries them, so the front door's other calls keep threads");
  flags->AddInt("max-api-usage-rows", &server->max_api_usage_rows, 1, 1000000,
                "client x API-at-risk rows kept (ListApiUsage); past it, new "
                "ones are counted in one row \"other\"");
  flags->AddDuration("api-usage-ttl", &server->api_usage_ttl,
                     "forget an API use row not seen for this long");
}

// Clients and the fleet (--prometheus-url).
void AddClientFlags(base::FlagTable* flags, ServerOptions* server) {
  flags->AddSection("Clients and the fleet (--prometheus-url)");
  flags->AddDuration("client-ttl", &server->client_ttl,
                     "forget a client component/version not seen for this "
                     "long");
  flags->AddInt("max-client-series", &server->max_client_series, 1, 100000,
                "bound on distinct client label sets per metric family "
                "(overflow is counted as component=\"other\")");
  flags->AddString("prometheus-url", &server->prometheus.client.url,
                   "http(s)://host:port[/prefix] of a Prometheus that scrapes "
                   "every replica: ListClients, PlanUpgrade and the status "
                   "page then show the whole fleet's clients (summed there), "
                   "falling back to this replica's when it does not answer; "
                   "empty: this replica's clients only");
  flags->AddString("prometheus-selector", &server->prometheus.queries.selector,
                   "label matchers that pick this deployment's series in "
                   "Prometheus, e.g. namespace=\"compatd\",job=\"compatd\"; "
                   "empty: every compatd series it holds");
  flags->AddDuration("prometheus-cache-ttl", &server->prometheus.refresh,
                     "how long the fleet's answer is reused before Prometheus "
                     "is asked again (in the background; at least 1s)");
  flags->AddDuration("prometheus-timeout", &server->prometheus.client.timeout,
                     "time limit of one query to Prometheus, connection and "
                     "TLS handshake included");
  flags->AddString("prometheus-ca-file", &server->prometheus.client.ca_file,
                   "PEM CA bundle Prometheus' certificate must chain to "
                   "(https); empty: the system's roots");
  flags->AddString("prometheus-cert-file", &server->prometheus.client.cert_file,
                   "PEM client certificate for Prometheus (with "
                   "--prometheus-key-file)");
  flags->AddString("prometheus-key-file", &server->prometheus.client.key_file,
                   "PEM key of --prometheus-cert-file");
  flags->AddString("prometheus-bearer-token-file",
                   &server->prometheus.client.bearer_token_file,
                   "file holding a bearer token for Prometheus (read again "
                   "when it changes, e.g. a projected service account token)");
  flags->AddBool("prometheus-insecure-skip-verify",
                 &server->prometheus.client.insecure_skip_verify,
                 "do not verify Prometheus' certificate (testing only)");
  flags->AddBool("prometheus-recording-rules",
                 &server->prometheus.queries.recorded,
                 "query the job:compatd_client_* recording rules of "
                 "k8s/monitoring/prometheusrule.yaml instead of the raw "
                 "series (large fleets)");
  flags->AddInt("prometheus-max-series", &server->prometheus.max_series, 1,
                1000000,
                "series read from one Prometheus answer, at most (more: the "
                "answer is refused and this replica's view is shown)");
}

// TLS of the gRPC port and /metrics.
void AddTlsFlags(base::FlagTable* flags, ServerOptions* server) {
  flags->AddSection("TLS of the gRPC port and /metrics");
  flags->AddString("tls-cert", &server->tls.cert,
                   "PEM certificate chain of the gRPC port (with --tls-key); "
                   "empty: plaintext gRPC. Re-read when it changes");
  flags->AddString("tls-key", &server->tls.key,
                   "PEM private key of --tls-cert");
  flags->AddString("tls-client-ca", &server->tls.client_ca,
                   "PEM CA bundle: gRPC clients must present a certificate "
                   "signed by it (mutual TLS)");
  flags->AddString("metrics-tls-cert", &server->metrics_tls.cert,
                   "PEM certificate chain of /metrics (with "
                   "--metrics-tls-key); empty: plain HTTP");
  flags->AddString("metrics-tls-key", &server->metrics_tls.key,
                   "PEM private key of --metrics-tls-cert");
  flags->AddString("metrics-tls-client-ca", &server->metrics_tls.client_ca,
                   "PEM CA bundle: scrapers must present a certificate "
                   "signed by it");
  flags->AddDuration("tls-refresh-interval", &server->tls_refresh_interval,
                     "how often certificate files are checked for a "
                     "rotation (at least 1s)");
}

// Limits of the gRPC port and of heavy work.
void AddGrpcLimitFlags(base::FlagTable* flags, ServerOptions* server) {
  flags->AddSection("Limits of the gRPC port and of heavy work");
  flags->AddInt("max-recv-message-bytes", &server->max_recv_message_bytes, 1024,
                64 * 1024 * 1024,
                "largest gRPC request message; larger ones fail with "
                "RESOURCE_EXHAUSTED");
  flags->AddInt("max-concurrent-streams", &server->max_concurrent_streams, 1,
                1000000,
                "calls one connection may have in flight (HTTP/2 "
                "SETTINGS_MAX_CONCURRENT_STREAMS); more wait on the client");
  flags->AddInt("max-send-message-bytes", &server->max_send_message_bytes, 1024,
                64 * 1024 * 1024,
                "largest answer; a larger one fails with RESOURCE_EXHAUSTED, "
                "and Evaluate stops once its answer passes it");
  flags->AddInt("max-answer-backlog-bytes", &server->max_answer_backlog_bytes,
                1024, 1024 * 1024 * 1024,
                "bytes of answers not yet taken by their (slow) clients, over "
                "all connections; an answer past it fails with "
                "RESOURCE_EXHAUSTED");
  flags->AddInt("grpc-memory-bytes", &server->grpc_memory_bytes, 1024 * 1024,
                1024 * 1024 * 1024,
                "gRPC's memory quota (requests being received, read buffers, "
                "calls); past it gRPC cancels streams (RESOURCE_EXHAUSTED)");
  flags->AddInt("max-connections", &server->max_connections, 1, 1000000,
                "open connections of the gRPC port; one past it is closed at "
                "once");
  flags->AddDuration("handshake-timeout", &server->handshake_timeout,
                     "time a new connection has for its TLS handshake and "
                     "HTTP/2 preface and SETTINGS before it is closed");
  flags->AddDuration("max-connection-idle", &server->max_connection_idle,
                     "a connection with no call for this long gets GOAWAY and "
                     "is closed");
  flags->AddInt("max-evaluate-items", &server->limits.max_evaluate_items, 1,
                1000000, "items per Evaluate call; more is INVALID_ARGUMENT");
  flags->AddInt("heavy-workers", &server->heavy_workers, 1, 64,
                "threads of the heavy lane (ScanObjects, PlanUpgrade, "
                "LintCatalog, large Evaluate batches), shared by both ports; "
                "light calls never wait for them");
  flags->AddInt("heavy-queue", &server->heavy_queue, 0, 10000,
                "heavy calls that may wait for a heavy-lane thread; one more "
                "is refused at once (RESOURCE_EXHAUSTED, HTTP 429)");
  flags->AddDuration("max-heavy-work-time", &server->heavy_work_time,
                     "budget of one heavy call's work: a scan stops there "
                     "and answers what it found, marked partial");
  flags->AddDuration("max-call-duration", &server->limits.max_call_duration,
                     "cap on a call's deadline: longer or missing deadlines "
                     "are clamped to it (WatchCatalog streams end with OK "
                     "after it; clients reconnect)");
}

}  // namespace

void AddServerFlags(base::FlagTable* flags, ServerOptions* server) {
  AddServingFlags(flags, server);
  AddHttpFlags(flags, server);
  AddAuditFlags(flags, server);
  AddClientFlags(flags, server);
  AddTlsFlags(flags, server);
  AddGrpcLimitFlags(flags, server);
}

}  // namespace compatd::service
