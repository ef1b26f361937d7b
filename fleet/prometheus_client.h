#pragma once

// A client of Prometheus' HTTP API for instant queries, with the options
// Prometheus API clients usually take (Grafana's data source, promtool,
// client_golang's api package):
//
//   PrometheusClientOptions options{.url = "https://prom.monitoring.svc:9090",
//                                   .ca_file = "/etc/prom-ca/ca.crt",
//                                   .bearer_token_file = "/var/run/.../token"};
//   COMPATD_RETURN_IF_ERROR(ValidatePrometheusClientOptions(options));
//   PrometheusClient client(options);
//   absl::StatusOr<std::string> body = client.Query("up");  // the JSON
//
// http:// or https:// (Boost.Beast over Asio; OpenSSL, the peer verified
// against ca_file or the system's roots and its host name, unless
// insecure_skip_verify), optional client certificate and key, an optional
// path prefix (a Prometheus behind --web.route-prefix). The bearer token file
// is read again whenever it changes (projected service account tokens
// rotate), the TLS files at every query (a query happens every few seconds at
// most), so rotations need no restart.
//
// A query takes at most `timeout`, name resolution, connection, TLS
// handshake, request and answer included; an answer is at most
// `max_answer_bytes`. Errors: UNAVAILABLE (cannot resolve or connect, TLS
// handshake failed, connection closed), DEADLINE_EXCEEDED (the timeout),
// RESOURCE_EXHAUSTED (answer too large), INTERNAL (an HTTP status other than
// 200 whose body is not Prometheus' error JSON: 401, 403, a proxy's 502),
// FAILED_PRECONDITION (cannot read the token or TLS files). A 4xx/5xx with
// Prometheus' error JSON is returned as the body, for ParseInstantVector to
// quote. Not thread-safe: one query at a time (the poller's thread).

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace compatd::fleet {

struct PrometheusClientOptions {
  // http(s)://host[:port][/path-prefix]; port defaults to 80/443.
  std::string url{};
  // PEM CA bundle the server's certificate must chain to; empty: the
  // system's roots.
  std::string ca_file{};
  // PEM client certificate (chain) and key, for Prometheus (or a proxy in
  // front of it) requiring client certificates. Both or neither.
  std::string cert_file{};
  std::string key_file{};
  // A file holding the bearer token sent as "Authorization: Bearer ...".
  std::string bearer_token_file{};
  // Do not verify the server's certificate (only when asked).
  bool insecure_skip_verify = false;
  absl::Duration timeout = absl::Seconds(5);
  size_t max_answer_bytes = 8 << 20;
};

struct PrometheusUrl {
  bool https = false;
  std::string host{};  // without brackets for IPv6
  std::string port{};
  std::string path_prefix{};  // "" or "/prefix" (no trailing slash)
};

// INVALID_ARGUMENT naming what is wrong (scheme, host, port, a query or
// fragment, which are not allowed).
absl::StatusOr<PrometheusUrl> ParsePrometheusUrl(absl::string_view url);

// Start-up checks, INVALID_ARGUMENT naming the flag (--prometheus-url,
// --prometheus-ca-file, ...): the URL; TLS files only with https; cert and
// key both or neither, loadable and matching; the CA file loadable; the
// token file readable and not empty; a positive timeout.
absl::Status ValidatePrometheusClientOptions(
    const PrometheusClientOptions& options);

// Percent-encodes `text` for a query string (RFC 3986 unreserved kept).
std::string UrlEncode(absl::string_view text);

class PrometheusClient final {
 public:
  explicit PrometheusClient(PrometheusClientOptions options);
  PrometheusClient(const PrometheusClient&) = delete;
  PrometheusClient& operator=(const PrometheusClient&) = delete;

  // GET <url>/api/v1/query?query=<promql>: the answer's body.
  absl::StatusOr<std::string> Query(absl::string_view promql);

  const PrometheusClientOptions& options() const { return options_; }

 private:
  // The token, re-read when the file changed (size, mtime, inode).
  absl::StatusOr<std::string> Token();

  const PrometheusClientOptions options_;
  PrometheusUrl url_;
  absl::Status url_status_;
  std::string token_{};
  ino_t token_inode_ = 0;
  off_t token_size_ = -1;
  int64_t token_mtime_ns_ = -1;
};

}  // namespace compatd::fleet
