#include "service/server_options.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/api_usage.h"

namespace compatd::service {

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

namespace {

// The --prometheus-* flags: all or nothing, each in range.
absl::Status CheckPrometheusOptions(const ServerOptions& options) {
  if (!options.prometheus.client.url.empty()) {
    if (absl::Status s =
            fleet::ValidatePrometheusClientOptions(options.prometheus.client);
        !s.ok()) {
      return s;
    }
    if (absl::Status s =
            runtime::ValidateSelector(options.prometheus.queries.selector);
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--prometheus-selector: ", s.message()));
    }
    if (options.prometheus.refresh < absl::Seconds(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--prometheus-cache-ttl=",
                       absl::FormatDuration(options.prometheus.refresh),
                       ": at least 1s (each refresh is four queries)"));
    }
  } else if (options.prometheus.client.insecure_skip_verify ||
             !options.prometheus.client.ca_file.empty() ||
             !options.prometheus.client.cert_file.empty() ||
             !options.prometheus.client.key_file.empty() ||
             !options.prometheus.client.bearer_token_file.empty() ||
             !options.prometheus.queries.selector.empty()) {
    return absl::InvalidArgumentError(
        "--prometheus-* options without --prometheus-url: give the URL of "
        "the Prometheus that scrapes every replica, or drop them");
  }
  return absl::OkStatus();
}

// The TLS and user name files the flags name.
absl::Status CheckFiles(const ServerOptions& options) {
  if (absl::Status s = http::CheckTlsFiles(options.tls, "--tls"); !s.ok()) {
    return s;
  }
  if (absl::Status s =
          http::CheckTlsFiles(options.metrics_tls, "--metrics-tls");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = http::CheckTlsFiles(options.http_tls, "--http-tls");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          runtime::ParseUserNames(options.audit_user_names).status();
      !s.ok()) {
    return s;
  }
  return absl::OkStatus();
}

// Durations: positive, and at least what their mechanism can do.
absl::Status CheckDurations(const ServerOptions& options) {
  if (options.api_usage_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--api-usage-ttl: must be positive, e.g. 1h");
  }
  if (options.tls_refresh_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-refresh-interval=",
        absl::FormatDuration(options.tls_refresh_interval),
        ": must be at least 1s (gRPC's certificate watcher polls at most "
        "once a second)"));
  }
  if (options.limits.max_call_duration <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--max-call-duration=0: must be positive, e.g. 30m");
  }
  if (options.heavy_work_time < absl::Milliseconds(10)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-heavy-work-time=", absl::FormatDuration(options.heavy_work_time),
        ": must be at least 10ms, e.g. 10s"));
  }
  if (options.handshake_timeout < absl::Milliseconds(100)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--handshake-timeout=", absl::FormatDuration(options.handshake_timeout),
        ": must be at least 100ms, e.g. 10s"));
  }
  if (options.max_connection_idle < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-connection-idle=",
                     absl::FormatDuration(options.max_connection_idle),
                     ": must be at least 1s, e.g. 5m"));
  }
  return absl::OkStatus();
}

// Memory bounds: each at least the one request or answer it must hold.
absl::Status CheckMemoryBounds(const ServerOptions& options) {
  if (options.max_answer_backlog_bytes < options.max_send_message_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-answer-backlog-bytes=", options.max_answer_backlog_bytes,
        ": smaller than --max-send-message-bytes=",
        options.max_send_message_bytes, ": not even one answer would fit"));
  }
  if (options.max_http_memory_bytes < options.max_http_body_bytes ||
      options.max_http_memory_bytes < options.max_admission_body_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-http-memory-bytes=", options.max_http_memory_bytes,
        ": smaller than --max-http-body-bytes=", options.max_http_body_bytes,
        " or --max-admission-body-bytes=", options.max_admission_body_bytes,
        ": not even one request body would fit"));
  }
  if (options.grpc_memory_bytes < 2 * int64_t{options.max_recv_message_bytes}) {
    return absl::InvalidArgumentError(
        absl::StrCat("--grpc-memory-bytes=", options.grpc_memory_bytes,
                     ": must be at least twice --max-recv-message-bytes=",
                     options.max_recv_message_bytes,
                     " (a request is buffered whole before it is refused)"));
  }
  return absl::OkStatus();
}

}  // namespace

// --binary-version picks the default line; a cluster profile's binary does
// too, with its patch: one of them.
absl::Status CheckClusterOptions(const ServerOptions& options) {
  if (!options.binary_version.empty() &&
      (!options.cluster_path.empty() || !options.cluster_version.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--binary-version \"", options.binary_version, "\" and ",
        options.cluster_path.empty() ? "--cluster-version" : "--cluster",
        " both say the cluster's kube-apiserver; give one (--cluster-version "
        "is --binary-version with its patch and a profile)"));
  }
  if (!options.upgrade_target.empty() && options.cluster_path.empty() &&
      options.cluster_version.empty()) {
    return absl::InvalidArgumentError(
        "--upgrade-target needs the cluster it upgrades: give "
        "--cluster-version (e.g. 1.35.2) or --cluster=FILE too");
  }
  return absl::OkStatus();
}

absl::Status ValidateServerOptions(const ServerOptions& options) {
  for (auto check : {CheckPrometheusOptions, CheckFiles, CheckDurations,
                     CheckMemoryBounds, CheckClusterOptions}) {
    if (absl::Status s = check(options); !s.ok()) return s;
  }
  if (absl::Status s = CheckGrpcAddress("listen", options.listen); !s.ok()) {
    return s;
  }
  if (!options.health_listen.empty()) {
    return CheckGrpcAddress("health-listen", options.health_listen);
  }
  return absl::OkStatus();
}

}  // namespace compatd::service
