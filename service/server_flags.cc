#include "service/server_flags.h"

#include <string>
#include <variant>
#include <vector>

#include "absl/time/time.h"

namespace compatd::service {
namespace {

// Where a flag's value lives in ServerOptions.
template <typename T>
using Field = T* (*)(ServerOptions&);

struct IntField {
  Field<int> field;
  int min;
  int max;
};

using Target = std::variant<Field<std::string>, Field<std::vector<std::string>>,
                            Field<bool>, Field<absl::Duration>, IntField>;

struct ServerFlag {
  const char* section;  // non-null: the heading of the flags from this one on
  const char* name;
  Target target;
  const char* help;
};

// The server's flags (docs/running.md), in --help's order. Defaults are
// ServerOptions' own.
const ServerFlag kServerFlags[] = {
    {"Serving", "listen", +[](ServerOptions& s) { return &s.listen; },
     "gRPC listen address host:port (port 0 picks a free port)"},
    {nullptr, "metrics-listen",
     +[](ServerOptions& s) { return &s.metrics_listen; },
     "Prometheus /metrics listen address host:port; empty disables it"},
    {nullptr, "health-listen",
     +[](ServerOptions& s) { return &s.health_listen; },
     "plaintext gRPC address serving only grpc.health.v1, for kubelet gRPC "
     "probes when --tls-cert is on; empty disables it"},
    {nullptr, "http-listen", +[](ServerOptions& s) { return &s.http_listen; },
     "HTTPS/JSON front door host:port (/v1/<RPC>, /admission/v1/validate, "
     "/gatekeeper/v1, /audit/v1/events, /healthz); empty disables it"},
    {nullptr, "ui", +[](ServerOptions& s) { return &s.ui; },
     "serve the status page on --http-listen (/ui/: versions, clients, feature "
     "gates, APIs); false: its paths are 404"},
    {nullptr, "catalog", +[](ServerOptions& s) { return &s.catalog_paths; },
     "catalog file (YAML or JSON) or directory of them to serve and watch, one "
     "kube-apiserver release line per file; repeat it for several. None: the "
     "embedded catalogs of every release line compatd ships"},
    {nullptr, "binary-version",
     +[](ServerOptions& s) { return &s.binary_version; },
     "the cluster's kube-apiserver release line (\"1.34\"): answered when a "
     "request names no versions.binaryVersion; empty: the newest line served"},
    {nullptr, "cluster", +[](ServerOptions& s) { return &s.cluster_path; },
     "the cluster profile, watched and reloaded: compatd's profile YAML, "
     "kube-apiserver's static pod manifest, a kubeadm ClusterConfiguration or "
     "kubeadm-config ConfigMap, a Cluster API KubeadmControlPlane or /version "
     "JSON (docs/cluster-profile.md); it picks the default line and the "
     "defaults of every request"},
    {nullptr, "cluster-version",
     +[](ServerOptions& s) { return &s.cluster_version; },
     "the cluster's kube-apiserver version with its patch (\"1.35.2\"), alone "
     "or over what --cluster says"},
    {nullptr, "upgrade-target",
     +[](ServerOptions& s) { return &s.upgrade_target; },
     "the kube-apiserver version the cluster is going to (\"1.36\"): the "
     "webhook's enforce target, the target metrics and the page's plan"},
    {nullptr, "reload-interval",
     +[](ServerOptions& s) { return &s.reload_interval; },
     "periodic content check of --catalog besides inotify and SIGHUP; 0 "
     "disables it"},
    {nullptr, "shutdown-grace",
     +[](ServerOptions& s) { return &s.shutdown_grace; },
     "how long in-flight calls may take to finish after SIGTERM"},
    {"The HTTPS/JSON front door (--http-listen)", "http-tls-cert",
     +[](ServerOptions& s) { return &s.http_tls.cert; },
     "PEM certificate chain of --http-listen (with --http-tls-key); empty: "
     "plain HTTP. Re-read when it changes"},
    {nullptr, "http-tls-key", +[](ServerOptions& s) { return &s.http_tls.key; },
     "PEM private key of --http-tls-cert"},
    {nullptr, "http-tls-client-ca",
     +[](ServerOptions& s) { return &s.http_tls.client_ca; },
     "PEM CA bundle: HTTP clients must present a certificate signed by it "
     "(mutual TLS)"},
    {nullptr, "max-http-body-bytes",
     IntField{+[](ServerOptions& s) { return &s.max_http_body_bytes; }, 1024,
              64 * 1024 * 1024},
     "largest request body on --http-listen (kube-apiserver's own limit is 3 "
     "MiB); larger ones get 413 before they are read"},
    {nullptr, "max-http-memory-bytes",
     IntField{+[](ServerOptions& s) { return &s.max_http_memory_bytes; }, 1024,
              1024 * 1024 * 1024},
     "bytes of request bodies and unwritten answers in flight over both HTTP "
     "ports; a request or answer past it gets 429 with Retry-After"},
    {nullptr, "max-admission-body-bytes",
     IntField{+[](ServerOptions& s) { return &s.max_admission_body_bytes; },
              1024, 256 * 1024 * 1024},
     "largest AdmissionReview body on /admission/v1/validate, per request (in "
     "place of --max-http-body-bytes there): an UPDATE carries object and "
     "oldObject, each up to etcd's 1.5 MiB as protobuf and larger as JSON "
     "(base64 of binary data 4/3, Go's \\u003c escapes of <, >, & 6x), and a "
     "413 under failurePolicy: Ignore lets the object through unchecked"},
    {nullptr, "gatekeeper-cache-bytes",
     IntField{+[](ServerOptions& s) { return &s.gatekeeper_cache_bytes; }, 0,
              1 << 30},
     "bytes of /gatekeeper/v1 answers kept for the catalog now serving "
     "(Gatekeeper's audit asks the same keys again and again); 0 keeps none"},
    {nullptr, "max-http-connections",
     IntField{+[](ServerOptions& s) { return &s.max_http_connections; }, 1,
              1000000},
     "open connections per HTTP port (--http-listen, --metrics-listen); more "
     "are closed at once"},
    {"Audit (--audit)", "audit", +[](ServerOptions& s) { return &s.audit; },
     "read kube-apiserver's audit webhook batches on --http-listen (POST "
     "/audit/v1/events: every client of the cluster and the APIs at risk it "
     "calls); false: 404"},
    {nullptr, "audit-user-names",
     +[](ServerOptions& s) { return &s.audit_user_names; },
     "user names the API use rows keep: service-accounts (service accounts and "
     "Kubernetes' own identities by name, other users as a keyed hash; the "
     "default), all, or none (only the kind of user)"},
    {nullptr, "audit-max-batch-events",
     IntField{+[](ServerOptions& s) { return &s.audit_max_batch_events; }, 1,
              1000000},
     "events per audit batch read (kube-apiserver sends up to "
     "--audit-webhook-batch-max-size, 400); more: 413"},
    {nullptr, "audit-max-batch-bytes",
     IntField{+[](ServerOptions& s) { return &s.audit_max_batch_bytes; }, 1024,
              64 * 1024 * 1024},
     "bytes per audit batch read (at most --max-http-body-bytes arrive); more: "
     "413"},
    {nullptr, "audit-max-concurrent-batches",
     IntField{+[](ServerOptions& s) { return &s.audit_max_concurrent_batches; },
              1, 64},
     "audit batches read at once; more wait their turn "
     "(--audit-max-queued-batches), so the front door's other calls keep "
     "threads"},
    {nullptr, "audit-max-queued-batches",
     IntField{+[](ServerOptions& s) { return &s.audit_max_queued_batches; }, 0,
              1024},
     "audit batches that wait their turn, in arrival order, while "
     "--audit-max-concurrent-batches are read; more get 429 and "
     "kube-apiserver retries them"},
    {nullptr, "max-api-usage-rows",
     IntField{+[](ServerOptions& s) { return &s.max_api_usage_rows; }, 1,
              1000000},
     "client x API-at-risk rows kept (ListApiUsage); past it, new ones are "
     "counted in one row \"other\""},
    {nullptr, "api-usage-ttl",
     +[](ServerOptions& s) { return &s.api_usage_ttl; },
     "forget an API use row not seen for this long"},
    {"Clients and the fleet (--prometheus-url)", "client-ttl",
     +[](ServerOptions& s) { return &s.client_ttl; },
     "forget a client component/version not seen for this long"},
    {nullptr, "max-client-series",
     IntField{+[](ServerOptions& s) { return &s.max_client_series; }, 1,
              100000},
     "bound on distinct client label sets per metric family (overflow is "
     "counted as component=\"other\")"},
    {nullptr, "prometheus-url",
     +[](ServerOptions& s) { return &s.prometheus.client.url; },
     "http(s)://host:port[/prefix] of a Prometheus that scrapes every replica: "
     "ListClients, PlanUpgrade and the status page then show the whole fleet's "
     "clients (summed there), falling back to this replica's when it does not "
     "answer; empty: this replica's clients only"},
    {nullptr, "prometheus-selector",
     +[](ServerOptions& s) { return &s.prometheus.queries.selector; },
     "label matchers that pick this deployment's series in Prometheus, e.g. "
     "namespace=\"compatd\",job=\"compatd\"; empty: every compatd series it "
     "holds"},
    {nullptr, "prometheus-cache-ttl",
     +[](ServerOptions& s) { return &s.prometheus.refresh; },
     "how long the fleet's answer is reused before Prometheus is asked again "
     "(in the background; at least 1s)"},
    {nullptr, "prometheus-timeout",
     +[](ServerOptions& s) { return &s.prometheus.client.timeout; },
     "time limit of one query to Prometheus, connection and TLS handshake "
     "included"},
    {nullptr, "prometheus-ca-file",
     +[](ServerOptions& s) { return &s.prometheus.client.ca_file; },
     "PEM CA bundle Prometheus' certificate must chain to (https); empty: the "
     "system's roots"},
    {nullptr, "prometheus-cert-file",
     +[](ServerOptions& s) { return &s.prometheus.client.cert_file; },
     "PEM client certificate for Prometheus (with --prometheus-key-file)"},
    {nullptr, "prometheus-key-file",
     +[](ServerOptions& s) { return &s.prometheus.client.key_file; },
     "PEM key of --prometheus-cert-file"},
    {nullptr, "prometheus-bearer-token-file",
     +[](ServerOptions& s) { return &s.prometheus.client.bearer_token_file; },
     "file holding a bearer token for Prometheus (read again when it changes, "
     "e.g. a projected service account token)"},
    {nullptr, "prometheus-insecure-skip-verify",
     +[](ServerOptions& s) {
       return &s.prometheus.client.insecure_skip_verify;
     },
     "do not verify Prometheus' certificate (testing only)"},
    {nullptr, "prometheus-recording-rules",
     +[](ServerOptions& s) { return &s.prometheus.queries.recorded; },
     "query the job:compatd_client_* recording rules of "
     "k8s/monitoring/prometheusrule.yaml instead of the raw series (large "
     "fleets)"},
    {nullptr, "prometheus-max-series",
     IntField{+[](ServerOptions& s) { return &s.prometheus.max_series; }, 1,
              1000000},
     "series read from one Prometheus answer, at most (more: the answer is "
     "refused and this replica's view is shown)"},
    {"TLS of the gRPC port and /metrics", "tls-cert",
     +[](ServerOptions& s) { return &s.tls.cert; },
     "PEM certificate chain of the gRPC port (with --tls-key); empty: "
     "plaintext gRPC. Re-read when it changes"},
    {nullptr, "tls-key", +[](ServerOptions& s) { return &s.tls.key; },
     "PEM private key of --tls-cert"},
    {nullptr, "tls-client-ca",
     +[](ServerOptions& s) { return &s.tls.client_ca; },
     "PEM CA bundle: gRPC clients must present a certificate signed by it "
     "(mutual TLS)"},
    {nullptr, "metrics-tls-cert",
     +[](ServerOptions& s) { return &s.metrics_tls.cert; },
     "PEM certificate chain of /metrics (with --metrics-tls-key); empty: plain "
     "HTTP"},
    {nullptr, "metrics-tls-key",
     +[](ServerOptions& s) { return &s.metrics_tls.key; },
     "PEM private key of --metrics-tls-cert"},
    {nullptr, "metrics-tls-client-ca",
     +[](ServerOptions& s) { return &s.metrics_tls.client_ca; },
     "PEM CA bundle: scrapers must present a certificate signed by it"},
    {nullptr, "tls-refresh-interval",
     +[](ServerOptions& s) { return &s.tls_refresh_interval; },
     "how often certificate files are checked for a rotation (at least 1s)"},
    {"Limits of the gRPC port and of heavy work", "max-recv-message-bytes",
     IntField{+[](ServerOptions& s) { return &s.max_recv_message_bytes; }, 1024,
              64 * 1024 * 1024},
     "largest gRPC request message; larger ones fail with RESOURCE_EXHAUSTED"},
    {nullptr, "max-concurrent-streams",
     IntField{+[](ServerOptions& s) { return &s.max_concurrent_streams; }, 1,
              1000000},
     "calls one connection may have in flight (HTTP/2 "
     "SETTINGS_MAX_CONCURRENT_STREAMS); more wait on the client"},
    {nullptr, "max-send-message-bytes",
     IntField{+[](ServerOptions& s) { return &s.max_send_message_bytes; }, 1024,
              64 * 1024 * 1024},
     "largest answer; a larger one fails with RESOURCE_EXHAUSTED, and Evaluate "
     "stops once its answer passes it"},
    {nullptr, "max-answer-backlog-bytes",
     IntField{+[](ServerOptions& s) { return &s.max_answer_backlog_bytes; },
              1024, 1024 * 1024 * 1024},
     "bytes of answers not yet taken by their (slow) clients, over all "
     "connections; an answer past it fails with RESOURCE_EXHAUSTED"},
    {nullptr, "grpc-memory-bytes",
     IntField{+[](ServerOptions& s) { return &s.grpc_memory_bytes; },
              1024 * 1024, 1024 * 1024 * 1024},
     "gRPC's memory quota (requests being received, read buffers, calls); past "
     "it gRPC cancels streams (RESOURCE_EXHAUSTED)"},
    {nullptr, "max-connections",
     IntField{+[](ServerOptions& s) { return &s.max_connections; }, 1, 1000000},
     "open connections of the gRPC port; one past it is closed at once"},
    {nullptr, "handshake-timeout",
     +[](ServerOptions& s) { return &s.handshake_timeout; },
     "time a new connection has for its TLS handshake and HTTP/2 preface and "
     "SETTINGS before it is closed"},
    {nullptr, "max-connection-idle",
     +[](ServerOptions& s) { return &s.max_connection_idle; },
     "a connection with no call for this long gets GOAWAY and is closed"},
    {nullptr, "max-evaluate-items",
     IntField{+[](ServerOptions& s) { return &s.limits.max_evaluate_items; }, 1,
              1000000},
     "items per Evaluate call; more is INVALID_ARGUMENT"},
    {nullptr, "heavy-workers",
     IntField{+[](ServerOptions& s) { return &s.heavy_workers; }, 1, 64},
     "threads of the heavy lane (ScanObjects, PlanUpgrade, LintCatalog, large "
     "Evaluate batches), shared by both ports; light calls never wait for "
     "them"},
    {nullptr, "heavy-queue",
     IntField{+[](ServerOptions& s) { return &s.heavy_queue; }, 0, 10000},
     "heavy calls that may wait for a heavy-lane thread; one more is refused "
     "at once (RESOURCE_EXHAUSTED, HTTP 429)"},
    {nullptr, "max-heavy-work-time",
     +[](ServerOptions& s) { return &s.heavy_work_time; },
     "budget of one heavy call's work: a scan stops there and answers what it "
     "found, marked partial"},
    {nullptr, "max-call-duration",
     +[](ServerOptions& s) { return &s.limits.max_call_duration; },
     "cap on a call's deadline: longer or missing deadlines are clamped to it "
     "(WatchCatalog streams end with OK after it; clients reconnect)"},
};

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

void AddServerFlags(base::FlagTable* flags, ServerOptions* server) {
  for (const ServerFlag& flag : kServerFlags) {
    if (flag.section != nullptr) flags->AddSection(flag.section);
    std::visit(Overloaded{
                   [&](Field<std::string> f) {
                     flags->AddString(flag.name, f(*server), flag.help);
                   },
                   [&](Field<std::vector<std::string>> f) {
                     flags->AddStringList(flag.name, f(*server), flag.help);
                   },
                   [&](Field<bool> f) {
                     flags->AddBool(flag.name, f(*server), flag.help);
                   },
                   [&](Field<absl::Duration> f) {
                     flags->AddDuration(flag.name, f(*server), flag.help);
                   },
                   [&](IntField f) {
                     flags->AddInt(flag.name, f.field(*server), f.min, f.max,
                                   flag.help);
                   },
               },
               flag.target);
  }
}

}  // namespace compatd::service
